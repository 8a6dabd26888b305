"""extract_many(mode="batch"|"auto") through the batch runner, on the fake
OpenAI server (its Batch API and its live endpoint): first turns in batches,
re-asks live (or in follow-up batches), per-request failures, expiry with one
resubmission and never two, unknown custom_ids, polling through 429/5xx."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.batch_api.mode import AUTO_MIN_INPUTS, resolve_mode
from agentflow.batch_api.protocol import BatchLimits
from agentflow.batch_api.runner import BatchProgress, BatchSettings
from agentflow.errors import BatchRequestError, BatchUnavailableError
from agentflow.providers._openai_batch import OpenAIBatchAPI
from agentflow.providers.openai import OpenAIChatModel
from agentflow.testing import ScriptedModel

from .fakes.base import FakeReply
from .fakes.openai import OpenAIFake, openai_error
from .provider_scenarios import FAST

KEY = "sk-runner-secret-0123456789"


class Person(BaseModel):
    name: str


def fast(**kw: Any) -> BatchSettings:
    return BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02, **kw)


def echo(body: dict[str, Any]) -> FakeReply:
    """Answers each request with the name written in its user text ("name: X")."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    text = users[0] if isinstance(users[0], str) else users[0][0]["text"]
    name = text.split("name: ", 1)[1]
    if name.startswith("BAD") and not any(m["role"] == "assistant" for m in body["messages"]):
        return FakeReply(text="I think the name is " + name)  # prose: needs a re-ask
    return FakeReply(text=orjson.dumps({"name": name}).decode(), usage=(100, 10))


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake(api_key=KEY) as server:
        server.default = echo
        yield server


@pytest.fixture
async def model(fake: OpenAIFake) -> Any:
    m = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
    yield m
    await m.aclose()


def docs(*names: str) -> list[tuple[str, str]]:
    return [(f"id{i}", f"name: {n}") for i, n in enumerate(names)]


def live_calls(fake: OpenAIFake) -> int:
    return sum(1 for r in fake.requests if r.path == "/v1/chat/completions")


async def run(model: Any, inputs: Any, settings: BatchSettings | None = None,
              mode: str = "batch") -> dict[str, Any]:
    return {r.id: r async for r in extract_many(model, inputs, Person, mode=mode,  # type: ignore[arg-type]
                                                 batch=settings or fast(), chunking=None)}


async def test_first_turns_go_in_one_batch_and_match_by_custom_id(
        fake: OpenAIFake, model: Any) -> None:
    seen: list[BatchProgress] = []
    results = await run(model, docs("Ada", "Bob", "Cy", "Dee"), fast(on_progress=seen.append))
    assert {k: r.output.name for k, r in results.items()} == {
        "id0": "Ada", "id1": "Bob", "id2": "Cy", "id3": "Dee"}  # file came back reversed
    assert len(fake.batches) == 1 and live_calls(fake) == 0
    assert sorted(fake.submitted.values()) == [1, 1, 1, 1]
    assert all(r.usage.input_tokens == 100 for r in results.values())
    assert seen[-1].completed == 4 and seen[-1].failed == 0 and seen[-1].submitted == 4


async def test_prose_reply_is_reasked_live_within_the_engine(
        fake: OpenAIFake, model: Any) -> None:
    results = await run(model, docs("Ada", "BADx"))
    assert results["id1"].ok and results["id1"].output.name == "BADx"
    assert results["id1"].attempts == 2
    assert len(fake.batches) == 1 and live_calls(fake) == 1


async def test_batch_only_puts_reasks_in_a_follow_up_batch(fake: OpenAIFake, model: Any) -> None:
    results = await run(model, docs("Ada", "BADx"), fast(batch_only=True))
    assert results["id1"].ok and results["id1"].output.name == "BADx"
    assert len(fake.batches) == 2 and live_calls(fake) == 0


async def test_a_failed_request_is_its_inputs_typed_error(fake: OpenAIFake, model: Any) -> None:
    def script(body: dict[str, Any]) -> Any:
        if "Bob" in str(body["messages"]):
            return openai_error(400, "Invalid value for 'messages'", code="invalid_value")
        return echo(body)

    fake.default = script
    results = await run(model, docs("Ada", "Bob", "Cy"))
    assert results["id0"].ok and results["id2"].ok
    error = results["id1"].error
    assert isinstance(error, BatchRequestError) and error.kind == "error"
    assert error.status == 400 and "Invalid value" in str(error)
    assert sum(fake.submitted.values()) == 3  # a 400 is never resubmitted


async def test_every_request_failed_gives_one_error_per_input(
        fake: OpenAIFake, model: Any) -> None:
    fake.default = openai_error(400, "model not found", code="model_not_found")
    results = await run(model, docs("Ada", "Bob", "Cy"))
    assert len(results) == 3 and not any(r.ok for r in results.values())
    assert all(isinstance(r.error, BatchRequestError) for r in results.values())


async def test_expired_requests_are_resubmitted_once(fake: OpenAIFake, model: Any) -> None:
    fake.batch_plans.append(["validating", "in_progress", "expired"])
    fake.expire_done = 1
    results = await run(model, docs("Ada", "Bob", "Cy"))
    assert all(r.ok for r in results.values())
    assert len(fake.batches) == 2
    assert sorted(fake.submitted.values()) == [1, 2, 2]
    assert max(fake.executed.values()) == 1  # never paid twice


async def test_expired_twice_is_an_error_never_a_third_submission(
        fake: OpenAIFake, model: Any) -> None:
    fake.batch_plans.extend([["in_progress", "expired"], ["in_progress", "cancelled"]])
    results = await run(model, docs("Ada", "Bob"))
    assert all(isinstance(r.error, BatchRequestError) for r in results.values())
    assert {r.error.kind for r in results.values()} == {"cancelled"}  # type: ignore[union-attr]
    assert sorted(fake.submitted.values()) == [2, 2] and not fake.executed


async def test_rejected_batch_fails_each_input_with_the_reason(
        fake: OpenAIFake, model: Any) -> None:
    fake.batch_plans.append(["failed"])
    results = await run(model, docs("Ada", "Bob"))
    for r in results.values():
        assert isinstance(r.error, BatchRequestError) and "rejected" in str(r.error)
    assert sum(fake.submitted.values()) == 2


async def test_unknown_custom_id_is_ignored(fake: OpenAIFake, model: Any) -> None:
    fake.garbled_ids = True
    results = await run(model, docs("Ada", "Bob"))
    assert {r.output.name for r in results.values()} == {"Ada", "Bob"}


async def test_polls_wait_out_429_and_5xx(fake: OpenAIFake, model: Any) -> None:
    fake.poll_errors.extend([openai_error(429, "slow down", "requests")] * 4
                            + [openai_error(503, "overloaded", "server_error")] * 4)
    results = await run(model, docs("Ada"))
    assert results["id0"].ok and not fake.poll_errors


async def test_a_poll_refused_for_good_fails_each_request_with_its_own_error(
        fake: OpenAIFake, model: Any) -> None:
    # one error failed into every request of the batch: each awaiter raised
    # the same object, and the frames of every raise piled up on it
    fake.poll_errors.append(openai_error(400, "bad batch id", "invalid_request_error"))
    results = await run(model, docs("Ada", "Bob"))
    first, second = (results[k].error for k in ("id0", "id1"))
    assert first is not None and second is not None and first is not second
    assert type(first) is type(second) and str(first) == str(second)
    assert vars(first) == vars(second) and "bad batch id" in str(first)
    assert first.__traceback__ is not second.__traceback__


@pytest.mark.parametrize(("limits", "sizes"), [
    (BatchLimits(2, 10_000_000), [2, 2, 1]),  # by requests
    (BatchLimits(100, 1_200), [2, 2, 1]),  # by bytes of the JSONL file
], ids=["requests", "bytes"])
async def test_groups_respect_the_limits(fake: OpenAIFake, limits: BatchLimits,
                                         sizes: list[int]) -> None:
    class Limited(OpenAIChatModel):
        def batch_api(self) -> OpenAIBatchAPI:
            return OpenAIBatchAPI(self._http.sibling(), limits=limits)

    model = Limited("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
    results = await run(model, docs("A", "B", "C", "D", "E"))
    await model.aclose()
    assert all(r.ok for r in results.values())
    assert sorted((len(b.lines) for b in fake.batches.values()), reverse=True) == sizes


async def test_batch_mode_without_a_batch_api_fails_before_any_request() -> None:
    scripted = ScriptedModel([])
    with pytest.raises(BatchUnavailableError):
        async for _ in extract_many(scripted, ["x"], Person, mode="batch"):
            pass
    assert not scripted.requests


async def test_auto_runs_small_jobs_live_and_large_ones_in_batches(
        fake: OpenAIFake, model: Any) -> None:
    small = await run(model, iter(docs("Ada", "Bob")), mode="auto")
    assert all(r.ok for r in small.values()) and not fake.batches and live_calls(fake) == 2
    names = [f"N{i}" for i in range(AUTO_MIN_INPUTS)]
    large = await run(model, iter(docs(*names)), mode="auto")  # an iterator: counted by peeking
    assert len(large) == AUTO_MIN_INPUTS and all(r.ok for r in large.values())
    assert len(fake.batches) == 1 and live_calls(fake) == 2


def test_mode_table() -> None:
    assert resolve_mode("live", True, 10_000) is False
    assert resolve_mode("batch", True, 1) is True
    assert resolve_mode("auto", True, AUTO_MIN_INPUTS - 1) is False
    assert resolve_mode("auto", True, None) is True
    assert resolve_mode("auto", False, None) is False
    with pytest.raises(BatchUnavailableError):
        resolve_mode("batch", False, 1)
    with pytest.raises(ValueError):
        resolve_mode("bulk", True, 1)


async def test_a_submission_refused_for_a_wrong_key_stops_the_run(fake: OpenAIFake) -> None:
    """A wrong key is the run's fault, not each input's: the run raises it
    (``extract_many``'s ``same_for_every_input`` rule) instead of one failed
    record per input."""
    from agentflow.errors import AuthenticationError

    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="sk-wrong-0000000000",
                            settings=FAST)
    with pytest.raises(AuthenticationError):
        await run(model, docs("Ada", "Bob"))
    await model.aclose()
    assert not fake.batches and not fake.requests


@pytest.mark.parametrize(("setting", "value"), [
    ("poll_initial", 0.0), ("poll_initial", -1.0), ("poll_initial", float("nan")),
    ("poll_initial", float("inf")), ("poll_max", 1.0), ("poll_max", float("nan")),
    ("poll_max", float("-inf")), ("max_wait", float("-inf")), ("max_wait", 0.0),
    ("poll_factor", 0.5), ("flush_after", -1.0), ("max_resubmits", -1), ("max_inflight", 0),
])
def test_settings_that_would_hammer_the_vendor_are_refused(setting: str, value: Any) -> None:
    # poll_initial=0 (or a factor < 1) polls the batch status endpoint in a
    # tight loop for hours: refused when the settings are built.
    with pytest.raises(ValueError, match=f"BatchSettings.{setting} must be"):
        BatchSettings(**{setting: value})
    BatchSettings(poll_initial=0.01, poll_max=float("inf"), flush_after=0, max_resubmits=0)
