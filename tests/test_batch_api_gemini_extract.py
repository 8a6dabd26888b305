"""Gemini batch mode end to end: ``extract_many(mode="batch")`` on the fake
(tests/fakes/gemini_batches.py), re-asks, expiry, a failed submit and a
killed run."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

import orjson
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.batch_api.runner import BatchSettings
from agentflow.errors import BatchRequestError
from tests.fakes.base import FakeReply
from tests.fakes.gemini import GeminiFake, gemini_error
from tests.gemini_batch_support import gemini_model


class Person(BaseModel):
    name: str


def echo(body: dict[str, Any]) -> FakeReply:
    """The name written in the first user text ("name: X"); a first turn for
    a name starting with BAD answers prose (the engine re-asks)."""
    text = next(p["text"] for p in body["contents"][0]["parts"] if "text" in p)
    name = text.split("name: ", 1)[1].split("<", 1)[0].strip()
    if name.startswith("BAD") and len(body["contents"]) == 1:
        return FakeReply(text="I think the name is " + name)
    return FakeReply(text=orjson.dumps({"name": name}).decode(), usage=(100, 10))


def _docs(*names: str) -> list[tuple[str, str]]:
    return [(f"id{i}", f"name: {n}") for i, n in enumerate(names)]


def _settings(**kw: Any) -> BatchSettings:
    return BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02, **kw)


async def _run(model: Any, inputs: Any, settings: BatchSettings | None = None
               ) -> dict[str, Any]:
    return {r.id: r async for r in extract_many(model, inputs, Person, mode="batch",
                                                 batch=settings or _settings(), chunking=None)}


def _live(fake: GeminiFake) -> int:
    return sum(1 for r in fake.requests
               if r.path.endswith((":generateContent", ":streamGenerateContent")))


async def test_extract_many_in_batch_mode_on_the_gemini_fake() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        model = gemini_model(fake)
        results = await _run(model, _docs("Ada", "BADx", "Cy"))
        assert {k: r.output.name for k, r in results.items()} == {
            "id0": "Ada", "id1": "BADx", "id2": "Cy"}
        assert len(fake.batches.jobs) == 1 and _live(fake) == 1  # the re-ask went live
        assert results["id1"].attempts == 2
        assert sorted(fake.batches.submitted.values()) == [1, 1, 1]
        assert results["id0"].usage.input_tokens == 100
        await model.aclose()


async def test_an_expired_batch_resubmits_only_what_did_not_run() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.expire = True
        fake.batches.script.expire_batches = 1
        fake.batches.script.finished = 1
        model = gemini_model(fake)
        results = await _run(model, _docs("Ada", "Bob", "Cy"))
        assert all(r.ok for r in results.values()), results
        assert len(fake.batches.jobs) == 2
        assert sorted(fake.batches.submitted.values()) == [1, 2, 2]
        assert max(fake.batches.executed.values()) == 1
        await model.aclose()


async def test_a_batch_created_despite_a_failed_submit_is_found_not_paid_twice() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.create_errors = deque([gemini_error(500, "Internal error")])
        model = gemini_model(fake)
        results = await _run(model, _docs("Ada", "Bob"))
        assert {r.output.name for r in results.values()} == {"Ada", "Bob"}
        assert fake.batches.creations == 1 and sorted(fake.batches.submitted.values()) == [1, 1]
        await model.aclose()


async def test_killed_while_polling_a_rerun_polls_the_same_batch(tmp_path: Any) -> None:
    journal = str(tmp_path / "batches.json")
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.polls = 10_000  # runs until the test lets it end
        model = gemini_model(fake)
        task = asyncio.ensure_future(_run(model, _docs("Ada", "Bob"), _settings(journal=journal)))
        async with asyncio.timeout(60):  # a guard against a hang only
            while fake.batches.polls < 2:  # noqa: ASYNC110 - the fake offers no event
                await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert fake.batches.creations == 1
        fake.batches.script.polls = 0  # the next poll ends it
        results = await _run(model, _docs("Ada", "Bob"), _settings(journal=journal))
        assert {r.output.name for r in results.values()} == {"Ada", "Bob"}
        assert fake.batches.creations == 1 and sorted(fake.batches.submitted.values()) == [1, 1]
        assert sorted(fake.batches.executed.values()) == [1, 1]
        await model.aclose()


async def test_a_batch_that_never_ends_fails_after_max_wait_naming_it() -> None:
    """A batch the vendor kept "running" was polled for ever (every 5 min,
    past any vendor's window) and its inputs never ended. Polling is
    bounded (``BatchSettings.max_wait``): the inputs fail with a typed error
    naming the batch, which stays at the vendor for a rerun to poll."""
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.polls = 10_000  # never ends within the test
        model = gemini_model(fake)
        try:
            results = await _run(model, _docs("Ada", "Bob"), _settings(max_wait=0.05))
        finally:
            await model.aclose()
    errors = [r.error for r in results.values()]
    assert len(errors) == 2 and all(isinstance(e, BatchRequestError) for e in errors)
    batch_id = errors[0].batch_id  # type: ignore[union-attr]
    assert errors[0].kind == "timeout" and batch_id in str(errors[0])  # type: ignore[union-attr]
    assert "BatchSettings.max_wait" in str(errors[0])
    # one error per input, equal in content: every awaiter raised its own, so
    # the frames each raise adds do not pile up on an object the batch shares
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1])
    assert vars(errors[0]) == vars(errors[1])
