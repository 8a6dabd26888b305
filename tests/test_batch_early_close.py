"""Leaving ``extract_many`` early (``break``, cancellation, an exception in the
consumer) stops its workers and raises nothing of ours, at any point of a run.

The model answers after a random number of event-loop checkpoints (no timed
sleeps), so the consumer leaves at many different states of the workers: some
calls in flight, some results buffered, the input reader blocked, the stream
full. Each case runs many times with seeded randomness.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
from typing import Any, Literal

import anyio
import pytest
from pydantic import BaseModel

from agentflow import ModelProfile
from agentflow.batch import WINDOW, extract_many
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.leak_watch import collect_earlier_garbage


class Word(BaseModel):
    word: str


class Boom(Exception):
    """The consumer's own exception: the only one that may come out."""


def model(rng: random.Random, live: dict[str, int]) -> FunctionModel:
    async def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        live["calls"] += 1
        try:
            for _ in range(rng.randrange(6)):
                await anyio.lowlevel.checkpoint()
        finally:
            live["calls"] -= 1
        return Reply(tool_calls=[Call("generate_response", {"word": text})])

    return FunctionModel(answer, profile=ModelProfile())


How = Literal["break", "raise", "cancel", "unclosed"]


async def leave_early(seed: int, how: How) -> dict[str, int]:
    rng = random.Random(seed)
    live = {"calls": 0, "read": 0}
    total = rng.randrange(1, 60)

    def inputs() -> Any:
        for i in range(total):
            live["read"] += 1
            yield f"w{i}"

    stop_after = rng.randrange(0, total + 1)
    order = rng.choice(["input", "completed"])
    results = extract_many(model(rng, live), inputs(), Word,
                           concurrency=rng.randrange(1, 9), order=order)
    seen = 0
    if how == "unclosed":  # a plain break: the generator is finalized by the loop later
        async for _ in results:
            seen += 1
            if seen >= stop_after:
                break
        del results
        gc.collect()  # the loop's finalizer closes it in a task of its own: wait for that
        for _ in range(100_000):
            if asyncio.all_tasks() == {asyncio.current_task()}:
                break
            await anyio.lowlevel.checkpoint()
        assert asyncio.all_tasks() == {asyncio.current_task()}, "workers left running"
        assert live["calls"] == 0, "a model call outlived the closed iterator"
        return live
    with anyio.CancelScope() as scope:
        try:
            async with contextlib.aclosing(results) as stream:
                async for _ in stream:
                    seen += 1
                    if seen >= stop_after:
                        if how == "break":
                            break
                        if how == "raise":
                            raise Boom
                        scope.cancel()
                        await anyio.lowlevel.checkpoint()  # the cancellation lands here
        except Boom:
            pass
    assert live["calls"] == 0, "a model call outlived the closed iterator"
    return live


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("how", ["break", "raise", "cancel", "unclosed"])
def test_leaving_early_stops_the_workers_and_raises_nothing_of_ours(how: How) -> None:
    collect_earlier_garbage()  # their warnings would be errors here
    for seed in range(40 if how == "unclosed" else 150):  # unclosed: a gc pass each
        unhandled: list[dict[str, Any]] = []

        async def main(seed: int = seed, unhandled: list[dict[str, Any]] = unhandled
                       ) -> dict[str, int]:
            asyncio.get_running_loop().set_exception_handler(
                lambda loop, context: unhandled.append(context))
            return await leave_early(seed, how)

        live = asyncio.run(main())
        assert unhandled == [], f"seed {seed}: {unhandled}"
        assert live["calls"] == 0, f"seed {seed}: calls still in flight"


async def test_input_order_holds_back_a_bounded_window_behind_a_slow_input() -> None:
    """A slow first input does not let the run read the whole corpus ahead:
    at most WINDOW x concurrency inputs are started before it is yielded."""
    release = anyio.Event()
    read = [0]
    reached = anyio.Event()

    async def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        if text == "w0":
            await release.wait()
        return Reply(tool_calls=[Call("generate_response", {"word": text})])

    def inputs() -> Any:
        for i in range(10_000):
            read[0] += 1
            if read[0] == 2 * WINDOW + 1:
                reached.set()
            yield f"w{i}"

    results = extract_many(FunctionModel(answer, profile=ModelProfile()), inputs(), Word,
                           concurrency=2)
    got: list[str] = []

    async def consume() -> None:
        async with contextlib.aclosing(results) as stream:
            async for result in stream:
                got.append(result.id)
                if len(got) == 3:
                    break

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await reached.wait()
        for _ in range(200):  # let the reader run as far as it can
            await anyio.lowlevel.checkpoint()
        assert read[0] <= 2 * WINDOW + 2  # the window, plus one read waiting for a slot
        release.set()
    assert got == ["0", "1", "2"]


async def test_unique_ids_keeps_no_id_and_plain_lazy_inputs_are_checked() -> None:
    """``UniqueIds``: the producer vouches for its ids, so none is kept (a repeat
    is not refused); a plain lazy iterable is still checked as it is read."""
    from agentflow.batch import UniqueIds
    from agentflow.errors import DuplicateInputIdError

    async def answer(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", {"word": "w"})])

    def inputs() -> Any:
        yield ("a", "one")
        yield ("a", "two")

    model = FunctionModel(answer, profile=ModelProfile())
    got = [r.id async for r in extract_many(model, UniqueIds(inputs()), Word)]
    assert got == ["a", "a"]
    with pytest.raises(DuplicateInputIdError):
        [r async for r in extract_many(model, inputs(), Word)]
