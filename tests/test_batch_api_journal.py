"""The batch journal and resuming: a run stopped at any point and rerun with
the same journal polls the batches it already submitted and never pays twice
for an input (the fake counts submissions and executions per custom_id)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentflow.batch import extract_many
from agentflow.batch_api.journal import Journal, journal_path
from agentflow.batch_api.runner import BatchSettings
from agentflow.errors import InvalidRecordError
from agentflow.providers.openai import OpenAIChatModel

from .fakes.openai import OpenAIFake
from .provider_scenarios import FAST
from .test_batch_api_runner import KEY, Person, docs, echo

LONG = ["validating"] + ["in_progress"] * 40 + ["finalizing", "completed"]


def test_journal_round_trip_and_atomic_writes(tmp_path: Path) -> None:
    path = journal_path(tmp_path / "out.jsonl")
    assert path.name == "out.jsonl.batches.json"
    journal = Journal(path)
    sub = journal.intend({"af-1": "doc-1", "af-2": "doc-2"})
    assert Journal(path).submissions[0].batch_id is None  # on disk before submitting
    journal.submitted(sub.tag, "batch_9")
    other = journal.intend({"af-3": "doc-3"})
    journal.abandon(other.tag)
    again = Journal(path).submissions
    assert len(again) == 1 and again[0].batch_id == "batch_9"
    assert dict(again[0].requests) == {"af-1": "doc-1", "af-2": "doc-2"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize("content", [b"{not json", b'{"version": 7, "submissions": []}',
                                     b'{"version": 1, "submissions": [{"tag": 1}]}'])
def test_a_damaged_journal_is_refused_with_its_name(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.batches.json"
    path.write_bytes(content)
    with pytest.raises(InvalidRecordError, match=r"x\.batches\.json"):
        Journal(path)


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake(api_key=KEY) as server:
        server.default = echo
        yield server


def settings(journal: Path) -> BatchSettings:
    return BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.01,
                         journal=str(journal))


async def collect(fake: OpenAIFake, inputs: Any, journal: Path) -> dict[str, Any]:
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
    try:
        return {r.id: r async for r in extract_many(
            model, inputs, Person, mode="batch", batch=settings(journal), chunking=None)}
    finally:
        await model.aclose()


async def kill_when(fake: OpenAIFake, inputs: Any, journal: Path, ready: Any) -> None:
    """Start a run and cancel it once ``ready()`` holds (a kill, as far as the
    run's state on disk and at the vendor goes)."""
    task = asyncio.ensure_future(collect(fake, inputs, journal))
    async with asyncio.timeout(60):  # a guard against a hang only
        while not ready():  # noqa: ASYNC110 - the run offers no event
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def take_then_die(fake: OpenAIFake, inputs: Any, journal: Path, n: int) -> list[str]:
    """Run until ``n`` results were taken (the caller wrote them), then stop
    as a caller that died; the ids taken."""
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
    taken: list[str] = []
    async for result in extract_many(model, inputs, Person, mode="batch",
                                     batch=settings(journal), chunking=None):
        taken.append(result.id)
        if len(taken) == n:
            break
    await model.aclose()
    return taken


def journalled(journal: Path) -> list[Any]:
    if not journal.exists():
        return []
    return [s["batch_id"] for s in orjson.loads(journal.read_bytes())["submissions"]]


async def test_killed_mid_poll_resumes_the_same_batch(fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    fake.batch_plans.append(list(LONG))
    inputs = docs("Ada", "Bob", "Cy")
    await kill_when(fake, inputs, journal,
                    lambda: journalled(journal) == ["batch_2"] and fake.batch_calls[-1][0] == "GET")
    results = await collect(fake, inputs, journal)
    assert {r.output.name for r in results.values()} == {"Ada", "Bob", "Cy"}
    assert len(fake.batches) == 1 and sorted(fake.submitted.values()) == [1, 1, 1]
    assert sorted(fake.executed.values()) == [1, 1, 1]


async def test_killed_after_submit_before_the_id_was_journalled(
        fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    fake.hold_create = asyncio.Event()  # the vendor has the batch; the client never hears of it
    inputs = docs("Ada", "Bob")
    await kill_when(fake, inputs, journal, fake.created.is_set)
    assert journalled(journal) == [None]  # only the intent
    fake.hold_create.set()
    results = await collect(fake, inputs, journal)
    assert all(r.ok for r in results.values())
    assert len(fake.batches) == 1 and sorted(fake.submitted.values()) == [1, 1]  # found by tag
    assert journalled(journal) == ["batch_2"]


async def test_killed_before_the_vendor_accepted_submits_once(
        fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    inputs = docs("Ada", "Bob")
    fake.hold_upload = hold = asyncio.Event()  # the intent is journalled; the vendor has nothing
    await kill_when(fake, inputs, journal,
                    lambda: fake.uploading.is_set() and journalled(journal) == [None])
    assert not fake.batches
    fake.hold_upload = None
    hold.set()  # the killed client's upload ends into a closed connection
    results = await collect(fake, inputs, journal)
    assert all(r.ok for r in results.values())
    assert sorted(fake.submitted.values()) == [1, 1]


async def test_killed_after_some_results_were_taken(fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    inputs = docs("Ada", "Bob", "Cy", "Dee")
    taken = await take_then_die(fake, inputs, journal, 2)
    rest = [d for d in inputs if d[0] not in taken]  # --out resume skips finished inputs
    results = await collect(fake, rest, journal)
    assert sorted(results) == sorted(d[0] for d in rest) and all(r.ok for r in results.values())
    assert len(fake.batches) == 1 and sorted(fake.executed.values()) == [1, 1, 1, 1]


async def test_an_expired_batch_resubmits_only_inputs_without_a_result(
        fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    fake.batch_plans.append(["validating"] + ["in_progress"] * 40 + ["expired"])
    fake.expire_done = 1
    inputs = docs("Ada", "Bob", "Cy")
    await kill_when(fake, inputs, journal, lambda: journalled(journal) == ["batch_2"])
    results = await collect(fake, inputs, journal)
    assert all(r.ok for r in results.values())
    assert [len(b.lines) for b in fake.batches.values()] == [3, 2]
    assert sorted(fake.submitted.values()) == [1, 2, 2]
    assert sorted(fake.executed.values()) == [1, 1, 1]


class _NoFinder:
    """A batch API that keeps no tags (the bare ``BatchAPI`` protocol)."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self.limits = api.limits
        self.status = api.status
        self.results = api.results
        self.cancel = api.cancel
        self.aclose = api.aclose

    async def submit(self, requests: Any) -> str:
        return str(await self._api.submit(requests))


async def test_without_tag_lookup_an_unrecorded_batch_is_submitted_again(
        fake: OpenAIFake, tmp_path: Path) -> None:
    """The documented limit of the rule: a vendor API without ``find`` cannot
    recover a batch whose id the journal never got (one HTTP round trip)."""
    class Bare(OpenAIChatModel):
        def batch_api(self) -> Any:
            return _NoFinder(super().batch_api())

    journal = tmp_path / "out.jsonl.batches.json"
    fake.hold_create = asyncio.Event()
    inputs = docs("Ada")

    async def go() -> dict[str, Any]:
        model = Bare("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
        try:
            return {r.id: r async for r in extract_many(
                model, inputs, Person, mode="batch", batch=settings(journal), chunking=None)}
        finally:
            await model.aclose()

    task = asyncio.ensure_future(go())
    await asyncio.wait_for(fake.created.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    fake.hold_create.set()
    results = await go()
    assert results["id0"].ok
    assert len(fake.batches) == 2 and fake.submitted == {next(iter(fake.submitted)): 2}


async def test_a_journalled_batch_the_vendor_no_longer_has_is_resubmitted_once(
        fake: OpenAIFake, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A rerun whose journalled batch answers 404 (purged after its retention,
    or made under another project) resubmits its inputs once, says so with the
    batch id, and forgets the gone batch instead of failing on every rerun."""
    journal = tmp_path / "out.jsonl.batches.json"
    fake.batch_plans.append(list(LONG))
    inputs = docs("Ada", "Bob")
    await kill_when(fake, inputs, journal,
                    lambda: journalled(journal) == ["batch_2"] and fake.batch_calls[-1][0] == "GET")
    del fake.batches["batch_2"]  # the vendor purged it
    caplog.set_level(logging.INFO, logger="agentflow")
    results = await collect(fake, inputs, journal)
    assert {r.output.name for r in results.values() if r.ok} == {"Ada", "Bob"}
    assert sorted(fake.submitted.values()) == [2, 2]  # once more, never twice more
    gone = [r.getMessage() for r in caplog.records if "batch.gone" in r.getMessage()]
    assert len(gone) == 1 and "batch_2" in gone[0]
    assert "batch_2" not in journalled(journal)
    again = await collect(fake, inputs, journal)  # a third run: nothing is gone any more
    assert all(r.ok for r in again.values()) and sorted(fake.submitted.values()) == [2, 2]


async def test_a_gone_batch_resubmits_only_inputs_without_a_result(
        fake: OpenAIFake, tmp_path: Path) -> None:
    journal = tmp_path / "out.jsonl.batches.json"
    inputs = docs("Ada", "Bob", "Cy", "Dee")
    taken = await take_then_die(fake, inputs, journal, 2)
    (batch_id,) = fake.batches
    fake.batches.clear()  # then the vendor purged the batch, output file and all
    rest = [d for d in inputs if d[0] not in taken]
    results = await collect(fake, rest, journal)
    assert sorted(results) == sorted(d[0] for d in rest) and all(r.ok for r in results.values())
    resent = list(fake.batches.values())
    assert len(resent) == 1 and len(resent[0].lines) == 2  # only the two without a record
    assert sorted(fake.submitted.values()) == [1, 1, 2, 2]
    assert batch_id not in journalled(journal)


async def test_a_purged_output_file_is_a_gone_batch(fake: OpenAIFake, tmp_path: Path) -> None:
    """The batch still answers, but its output file is gone (404): its
    requests are resubmitted once rather than failed."""
    journal = tmp_path / "out.jsonl.batches.json"
    fake.purge_files = 1
    results = await collect(fake, docs("Ada", "Bob"), journal)
    assert all(r.ok for r in results.values())
    assert sorted(fake.submitted.values()) == [2, 2] and len(fake.batches) == 2
