"""A ``CancelledError`` nobody asked for (raised by code inside one input's
call while the run is not being cancelled) never ends ``extract_many``
silently: that input's record fails with ``StrayCancelError`` and the others
carry on; lost work makes the run raise. A real cancellation of the consumer
still stops the workers and yields no record of ours."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import ChunkFailedError, Chunking
from agentflow.batch import ExtractResult, extract_many
from agentflow.errors import StrayCancelError
from agentflow.testing import FunctionModel, RecordedRequest, Reply

NAMES = ["Ann", "Bob", "Gus", "Hal", "Ivy", "Jo"]


class Person(BaseModel):
    name: str | None = None


def first_word(request: RecordedRequest) -> Reply:
    """Copies the document's first word; a document about Gus meets code that
    raises a CancelledError of its own (as a library's cancel scope can leak)."""
    text = request.messages[-1].text
    if "Gus" in text:
        raise asyncio.CancelledError("leaked by a library")
    return Reply(text=json.dumps({"name": text.split()[0]}))


def inputs() -> list[tuple[str, str]]:
    return [(str(i), f"{name} is here") for i, name in enumerate(NAMES)]


@pytest.mark.parametrize("order", ["input", "completed"])
async def test_a_stray_cancel_fails_that_input_and_the_others_carry_on(order: str) -> None:
    results = [r async for r in extract_many(FunctionModel(first_word), inputs(), Person,
                                             concurrency=2, order=order)]
    assert sorted(r.id for r in results) == [str(i) for i in range(6)]
    if order == "input":
        assert [r.id for r in results] == [str(i) for i in range(6)]
    by_id = {r.id: r for r in results}
    failed = by_id.pop("2")
    assert not failed.ok and failed.output is None
    assert isinstance(failed.error, StrayCancelError)
    assert isinstance(failed.error.__cause__, asyncio.CancelledError)
    assert "input '2'" in str(failed.error) and "leaked by a library" in str(failed.error)
    assert {r.id: r.output for r in by_id.values()} == {
        str(i): Person(name=n) for i, n in enumerate(NAMES) if n != "Gus"}
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_stray_cancel_in_one_chunk_fails_that_document_as_a_chunk_failure() -> None:
    long = "".join(f"{name} line {k} {'w' * 40}\n" for k in range(30) for name in ["Ann"])
    long += "Gus was here\n"
    results = [r async for r in extract_many(
        FunctionModel(first_word), [("long", long), ("short", "Bob is here")], Person,
        chunking=Chunking(max_chars=400))]
    long_result, short_result = results
    assert short_result.ok and short_result.output == Person(name="Bob")
    assert isinstance(long_result.error, ChunkFailedError)
    assert isinstance(long_result.error.__cause__, StrayCancelError)


async def test_a_stray_cancel_from_the_inputs_iterator_fails_the_run_after_the_started_ones(
) -> None:
    async def feed() -> AsyncIterator[tuple[str, str]]:
        yield ("a", "Ann is here")
        yield ("b", "Bob is here")
        raise asyncio.CancelledError("leaked by the reader")

    got: list[ExtractResult] = []
    with pytest.raises(StrayCancelError, match=r"reading the inputs.*after 2 inputs") as caught:
        async for result in extract_many(FunctionModel(first_word), feed(), Person):
            got.append(result)
    assert [(r.id, r.output) for r in got] == [("a", Person(name="Ann")), ("b", Person(name="Bob"))]
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)


async def test_work_cancelled_on_its_own_makes_the_run_raise_after_the_other_records() -> None:
    async def cancels_itself(request: RecordedRequest) -> Reply:
        text = request.messages[-1].text
        if "Gus" in text:  # its own task cancelled by code: no record can come of it
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await asyncio.sleep(0)
        return Reply(text=json.dumps({"name": text.split()[0]}))

    got: list[str] = []
    with pytest.raises(StrayCancelError, match=r"1 inputs ended with no record.*inputs '2'"):
        async for result in extract_many(FunctionModel(cancels_itself), inputs(), Person,
                                         concurrency=2):
            got.append(result.id)
    assert got == ["0", "1", "3", "4", "5"]  # the records behind it are not lost with it


async def test_a_real_cancellation_of_the_consumer_yields_no_record_and_raises_nothing(
) -> None:
    in_flight = 0
    all_in = anyio.Event()
    never = anyio.Event()

    async def waits(request: RecordedRequest) -> Reply:
        nonlocal in_flight
        in_flight += 1
        if in_flight == 3:
            all_in.set()
        try:
            await never.wait()
        finally:
            in_flight -= 1
        return Reply(text="{}")

    got: list[Any] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            async def consume() -> None:
                async for result in extract_many(FunctionModel(waits), inputs(), Person,
                                                 concurrency=3):
                    got.append(result)  # pragma: no cover - nothing may come

            tg.start_soon(consume)
            await all_in.wait()  # every worker is inside its model call
            scope.cancel()
    assert scope.cancelled_caught and got == [] and in_flight == 0
