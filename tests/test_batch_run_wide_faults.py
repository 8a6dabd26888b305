"""``extract_many`` stops at a fault that is the run's, not one input's.

A wrong key (``AuthenticationError``) or a spent balance or daily limit
(``QuotaExceededError``) says ``same_for_every_input``: every other input
would meet it too. ``agentflow extract`` stopped at the first (exit 2); the
library went on and failed every remaining document one by one, each with
its own request. Now no input starts after it, the inputs in flight are
cancelled, the results that finished before it are yielded, and the
iteration raises the typed error, as the CLI does. A long document's chunk
failure whose cause is such a fault counts as it.

Served by the OpenAI fake on 127.0.0.1, through the public API."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import (
    AuthenticationError,
    ChunkFailedError,
    ExtractResult,
    QuotaExceededError,
    RateLimitedError,
    ReActAgent,
    extract_many,
    extract_many_sync,
)
from agentflow.errors.run_wide import run_wide
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

WRONG_KEY = FakeError(401, {"error": {"message": "Incorrect API key provided: sk-wr****",
                                      "type": "invalid_request_error",
                                      "code": "invalid_api_key"}})
NO_QUOTA = FakeError(429, {"error": {"message": "You exceeded your current quota.",
                                     "type": "insufficient_quota", "code": "insufficient_quota"}})


class Person(BaseModel):
    name: str


def model_for(fake: OpenAIFake) -> OpenAIChatModel:
    """A model on ``fake`` sending requests at once (no slow start before the
    rate limits are known: the documents' requests overlap)."""
    return OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                           settings=replace(FAST, rate_governor=False))


def sent(fake: OpenAIFake, doc: str) -> bool:
    """Whether a request carried ``doc``."""
    return any(doc in str(body) for body in fake.bodies)


def by_document(answers: dict[str, Any]) -> Any:
    """A script item answering each request by the document it carries."""
    def answer(body: Any) -> Any:
        return next(reply for doc, reply in answers.items() if doc in str(body))
    return answer


async def run(fake: OpenAIFake, docs: list[str], **options: Any) -> list[ExtractResult]:
    """The results yielded before the iteration raises (re-raised as
    ``Stopped`` carrying them)."""
    got: list[ExtractResult] = []
    async with model_for(fake) as model:
        try:
            async for result in extract_many(model, docs, Person, ground=False, **options):
                got.append(result)
        except Exception as exc:
            raise Stopped(got) from exc
    return got


class Stopped(Exception):
    def __init__(self, results: list[ExtractResult]) -> None:
        super().__init__(f"{len(results)} results")
        self.results = results


@pytest.mark.parametrize("fault", [WRONG_KEY, NO_QUOTA], ids=["wrong-key", "spent-quota"])
async def test_the_first_run_wide_fault_raises_and_nothing_further_is_sent(
        fault: FakeError) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name": "Ann"}'), fault)
        fake.default = FakeReply(text='{"name": "never"}')
        with pytest.raises(Stopped) as stopped:
            await run(fake, ["Ann is here.", "Bob is here.", "Cy is here.", "Di is here."],
                      concurrency=1)
    error = stopped.value.__cause__
    assert type(error) is (AuthenticationError if fault is WRONG_KEY else QuotaExceededError)
    assert [r.id for r in stopped.value.results] == ["0"]  # what finished before it
    assert stopped.value.results[0].output == Person(name="Ann")
    assert len(fake.requests) == 2  # never retried, and no later document was sent
    assert not sent(fake, "Cy is here.") and not sent(fake, "Di is here.")


async def test_inputs_in_flight_are_cancelled_and_finished_ones_held_back_are_yielded() -> None:
    """``order="input"``: the second document finished while the first was
    still in flight; the third meets a wrong key. The first is cancelled (its
    slow reply never awaited), the second yielded, the error raised, the
    fourth never sent."""
    async with OpenAIFake() as fake:
        fake.default = by_document({
            "Ann": FakeReply(text='{"name": "Ann"}', latency=5),  # in flight till the end
            "Bob": FakeReply(text='{"name": "Bob"}'),
            "Cy": WRONG_KEY,
            "Di": FakeReply(text='{"name": "Di"}'),
        })
        with anyio.fail_after(60), pytest.raises(Stopped) as stopped:  # a guard against a hang
            await run(fake, ["Ann is here.", "Bob is here.", "Cy is here.", "Di is here."],
                      concurrency=2)
    assert isinstance(stopped.value.__cause__, AuthenticationError)
    # Ann not awaited: in input order, her reply would have come first
    assert [(r.id, r.output) for r in stopped.value.results] == [("1", Person(name="Bob"))]
    assert not sent(fake, "Di is here.")


async def test_a_fault_of_one_input_still_leaves_a_record_and_the_run_goes_on() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeError(400, {"error": {"message": "bad image",
                                           "type": "invalid_request_error"}}),
                 FakeReply(text='{"name": "Bob"}'))
        results = await run(fake, ["Ann is here.", "Bob is here."], concurrency=1)
    assert [r.ok for r in results] == [False, True]


def test_the_sync_twin_yields_what_finished_then_raises() -> None:
    async def serve() -> None:
        async with OpenAIFake() as fake:
            fake.add(FakeReply(text='{"name": "Ann"}'), WRONG_KEY)
            got: list[ExtractResult] = []
            async with model_for(fake) as model:
                with pytest.raises(AuthenticationError):
                    await anyio.to_thread.run_sync(lambda: _drain(model, got))
            assert [r.id for r in got] == ["0"] and len(fake.requests) == 2

    anyio.run(serve)


def _drain(model: OpenAIChatModel, got: list[ExtractResult]) -> None:
    for result in extract_many_sync(model, ["Ann.", "Bob.", "Cy."], Person, ground=False,
                                    concurrency=1):
        got.append(result)


def test_a_chunk_failure_caused_by_the_runs_fault_is_the_runs_fault() -> None:
    wrong_key = AuthenticationError("bad key", status=401)
    chunk = ChunkFailedError("chunk [0, 10) failed", start=0, end=10)
    chunk.__cause__ = wrong_key
    assert run_wide(chunk) is wrong_key
    limited = ChunkFailedError("chunk [0, 10) failed", start=0, end=10)
    limited.__cause__ = RateLimitedError("slow down")
    assert run_wide(limited) is None and run_wide(None) is None


@pytest.mark.parametrize("order", ["input", "completed"])
async def test_a_record_made_after_the_fault_is_yielded_before_it_is_raised(order: str) -> None:
    """A worker the run's fault cancels may still make its record (here its
    tool goes on after the cancellation, as code that does not honour one
    does, and the call ends normally). That record finished: it is yielded
    before the typed error, in either order, never dropped with the stream."""
    tool_running = asyncio.Event()

    async def lookup(name: str) -> str:
        """Look a person up."""
        tool_running.set()
        with contextlib.suppress(asyncio.CancelledError):  # the tool's own choice: it
            await asyncio.Event().wait()  # answers anyway once the run's fault cancels it
        return f"{name}: found"

    def answer(body: Any) -> Any:
        text = str(body)
        if "Cy is here." in text:
            return WRONG_KEY
        if "found" in text:  # the tool's result came back: the record's answer
            return FakeReply(text='{"name": "Bob"}')
        return FakeReply(tool_calls=[FakeCall("lookup", {"name": "Bob"})])

    async def documents() -> AsyncIterator[str]:
        yield "Bob is here."
        await tool_running.wait()  # the fault comes while Bob's tool runs
        yield "Cy is here."

    got: list[ExtractResult] = []
    async with OpenAIFake() as fake:
        fake.default = answer
        async with model_for(fake) as model:
            agent = ReActAgent("a", model, tools=[lookup])
            with anyio.fail_after(10), pytest.raises(AuthenticationError):
                async for result in extract_many(agent, documents(), Person, ground=False,
                                                 concurrency=2, order=order):  # type: ignore[arg-type]
                    got.append(result)
    assert [(r.id, r.output) for r in got] == [("0", Person(name="Bob"))]
    assert len(fake.requests) == 3  # Bob's two turns, Cy's refused one
