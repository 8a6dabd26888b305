"""The Anthropic Message Batches protocol (providers/_anthropic_batch.py)
driven directly against the fake (tests/fakes/anthropic_batches.py), with the
anthropic SDK as a witness of the wire shapes."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.batch_api.protocol import BatchCapable, BatchRequest, BatchResult, BatchState
from agentflow.batch_api.runner import BatchSettings
from agentflow.errors import (
    BadRequestError,
    BatchRequestError,
    ContextLengthError,
    RateLimitedError,
    RedirectError,
    ServerError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ToolChoice, ToolSpec
from agentflow.providers import HttpSettings
from agentflow.providers._anthropic_batch import AnthropicBatchAPI
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeCall, FakeReply, collect

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, rate_governor=False)
TOOL = ToolSpec("record", "Record the answer.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
FORCED = GenerateOptions(tool_choice=ToolChoice("specific", "record"))


def _model(fake: AnthropicFake, **kw: Any) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", api_key="sk-ant-test", base_url=fake.url,
                              settings=FAST, **kw)


def _requests(model: AnthropicChatModel, n: int) -> list[BatchRequest]:
    return [model.batch_request(f"in-{i}", [Msg.user(f"Extract the name from document {i}.")],
                                [TOOL], FORCED) for i in range(n)]


async def _finish(api: AnthropicBatchAPI, batch_id: str, limit: int = 20) -> list[BatchState]:
    """Poll until terminal; the states seen."""
    seen = []
    for _ in range(limit):
        status = await api.status(batch_id)
        seen.append(status.state)
        if status.state.terminal:
            return seen
    raise AssertionError(f"batch never ended: {seen}")


async def _results(api: AnthropicBatchAPI, batch_id: str) -> dict[str, BatchResult]:
    return {r.custom_id: r async for r in api.results(batch_id)}


def test_the_model_is_batch_capable() -> None:
    model = AnthropicChatModel("claude-sonnet-4-5", api_key="k")
    assert isinstance(model, BatchCapable)
    assert model.batch_api().limits.max_requests == 100_000
    assert model.batch_api().limits.max_bytes == 256 * 1024 * 1024


async def test_submit_poll_results_parse_like_the_live_reply() -> None:
    reply = FakeReply(tool_calls=[FakeCall("record", {"name": "Ada"}, id="toolu_fixed")],
                      usage=(40, 9))
    async with AnthropicFake() as fake:
        fake.default = reply
        model = _model(fake, stream=False)
        live_chunks = [c async for c in model.stream(
            [Msg.user("Extract the name from document 0.")], [TOOL], FORCED)]
        live_body = fake.bodies[-1]
        api = model.batch_api()
        requests = _requests(model, 3)
        assert requests[0].body == live_body  # exactly what the live call sent
        assert requests[0].path == "/v1/messages" and "stream" not in requests[0].body
        batch_id = await api.submit(requests)
        assert batch_id.startswith("msgbatch_")
        assert fake.batches.submitted == {"in-0": 1, "in-1": 1, "in-2": 1}
        states = await _finish(api, batch_id)
        assert states == [BatchState.IN_PROGRESS, BatchState.IN_PROGRESS, BatchState.COMPLETED]
        final = await api.status(batch_id)
        assert (final.total, final.succeeded, final.failed) == (3, 3, 0)
        order = [r.custom_id async for r in api.results(batch_id)]
        assert order == ["in-2", "in-1", "in-0"]  # not the order sent: matched by id
        results = await _results(api, batch_id)
        assert all(r.error is None for r in results.values())
        assert list(model.parse_batch_reply(results["in-0"].reply)) == live_chunks
        await api.aclose()
        await model.aclose()


async def test_per_request_failures_are_typed_and_say_whether_to_resubmit() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="ok")
        fake.batches.script.outcomes = {"in-1": "errored", "in-2": "expired", "in-3": "canceled"}
        model = _model(fake, thinking_budget=2048)
        api = model.batch_api()
        requests = _requests(model, 4)  # forced tool_choice with thinking: the API refuses
        requests[0] = model.batch_request("in-0", [Msg.user("hi")], [], GenerateOptions())
        requests[4:] = [BatchRequest("in-4", "/v1/messages", _requests(model, 1)[0].body)]
        batch_id = await api.submit(requests)
        await _finish(api, batch_id)
        status = await api.status(batch_id)
        assert status.state is BatchState.EXPIRED  # one request expired
        assert (status.total, status.succeeded, status.failed) == (5, 1, 4)
        results = await _results(api, batch_id)
        assert results["in-0"].reply is not None and results["in-0"].error is None
        server = results["in-1"].error
        assert server is not None and server.kind == "error" and server.status == 500
        assert server.code == "api_error" and server.retryable
        assert results["in-2"].error is not None and results["in-2"].error.kind == "expired"
        assert results["in-3"].error is not None and results["in-3"].error.kind == "cancelled"
        assert results["in-2"].error.retryable and results["in-3"].error.retryable
        refused = results["in-4"].error
        assert refused is not None and refused.status == 400 and not refused.retryable
        assert "tool_choice forces tool use" in refused.message
        await api.aclose()
        await model.aclose()


async def test_expiry_keeps_what_ran_and_expires_the_rest() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batches.script.expire = True
        fake.batches.script.finished = 1
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 3))
        assert (await _finish(api, batch_id))[-1] is BatchState.EXPIRED
        results = await _results(api, batch_id)
        assert results["in-0"].reply is not None
        assert [results[f"in-{i}"].error.kind for i in (1, 2)] == ["expired", "expired"]  # type: ignore[union-attr]
        await api.aclose()
        await model.aclose()


async def test_cancel_goes_through_canceling_and_is_idempotent() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await api.cancel(batch_id)
        await api.cancel(batch_id)
        assert (await api.status(batch_id)).state is BatchState.CANCELLING
        assert (await api.status(batch_id)).state is BatchState.CANCELLED
        await api.cancel(batch_id)  # ended: nothing to do, no error
        results = await _results(api, batch_id)
        assert {r.error.kind for r in results.values() if r.error} == {"cancelled"}
        assert len(results) == 2
        await api.aclose()
        await model.aclose()


async def test_unknown_and_garbled_result_lines_are_yielded_without_an_input() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batches.script.garbage = True
        fake.batches.script.order = "sent"
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await _finish(api, batch_id)
        results = [r async for r in api.results(batch_id)]
        ids = [r.custom_id for r in results]
        assert ids == ["in-0", "not-a-request-of-this-batch", "", "in-1"]
        garbled = results[2].error
        assert garbled is not None and "malformed batch result line" in garbled.message
        await api.aclose()
        await model.aclose()


async def test_429_and_5xx_while_polling_are_retried_with_backoff() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        fake.batches.script.poll_errors = deque([
            AnthropicFake.rate_limited(0), anthropic_error(500, "api_error", "boom"),
            anthropic_error(529, "overloaded_error", "Overloaded")])
        status = await api.status(batch_id)
        assert status.state is BatchState.IN_PROGRESS
        assert fake.batches.polls == 4
        await api.aclose()
        await model.aclose()


async def test_a_poll_error_surfaces_typed_once_retries_are_spent() -> None:
    async with AnthropicFake() as fake:
        model = AnthropicChatModel("claude-sonnet-4-5", api_key="k", base_url=fake.url,
                                   settings=HttpSettings(max_retries=0, rate_governor=False))
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        fake.batches.script.poll_errors = deque([AnthropicFake.rate_limited(3)])
        with pytest.raises(RateLimitedError) as caught:
            await api.status(batch_id)
        assert caught.value.retry_after == 3
        await api.aclose()
        await model.aclose()


async def test_submit_is_not_retried_after_a_failure_that_may_have_created_the_batch() -> None:
    async with AnthropicFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        fake.batches.script.create_errors = deque([anthropic_error(500, "api_error", "boom")])
        with pytest.raises(ServerError):
            await api.submit(_requests(model, 2))
        assert fake.batches.creations == 1 and fake.batches.submitted == {"in-0": 1, "in-1": 1}
        await api.aclose()
        await model.aclose()


async def test_submit_is_retried_after_a_refusal() -> None:
    async with AnthropicFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        fake.batches.script.create_errors = deque([
            AnthropicFake.rate_limited(0), anthropic_error(529, "overloaded_error", "Overloaded")])
        batch_id = await api.submit(_requests(model, 2))
        assert fake.batches.creations == 3 and len(fake.batches.jobs) == 1
        assert batch_id in fake.batches.jobs
        await api.aclose()
        await model.aclose()


@pytest.mark.parametrize(("ids", "needle"), [
    (["ok", "has space"], "does not match"),
    (["x" * 65], "does not match"),
    (["same", "same"], "appears twice"),
    ([], "at least one request"),
])
async def test_a_batch_the_vendor_would_refuse_is_refused_before_sending(
        ids: list[str], needle: str) -> None:
    async with AnthropicFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        body = _requests(model, 1)[0].body
        with pytest.raises(BadRequestError, match=needle) as caught:
            await api.submit([BatchRequest(i, "/v1/messages", body) for i in ids])
        assert caught.value.status is None  # never sent
        assert fake.batches.creations == 0
        await api.aclose()
        await model.aclose()


async def test_over_the_request_limit_is_refused_before_sending() -> None:
    async with AnthropicFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        requests = [BatchRequest(f"r{i}", "/v1/messages", {"model": "m"}) for i in range(100_001)]
        with pytest.raises(BadRequestError, match="100000 per batch"):
            await api.submit(requests)
        assert fake.batches.creations == 0
        await api.aclose()
        await model.aclose()


async def test_results_of_a_running_batch_and_foreign_results_url_are_refused() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        with pytest.raises(BadRequestError, match="no results yet"):
            await collect(api.results(batch_id))
        await _finish(api, batch_id)
        fake.batch_results_origin = "http://elsewhere.example"
        with pytest.raises(RedirectError) as caught:
            await collect(api.results(batch_id))
        assert "sk-ant-test" not in str(caught.value)
        await api.aclose()
        await model.aclose()


@pytest.mark.parametrize("suffix", ["/", "?gateway=on"], ids=["slash", "query"])
async def test_a_relative_results_url_is_joined_to_the_api_root_as_every_path(
        suffix: str) -> None:
    """A ``results_url`` given as a path is joined to the base URL as every
    request's path is (``join_url``): a base URL's query string (a gateway's
    ``?key=``) stays the query (it was appended after the query: a 404)."""
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batch_results_relative = True
        model = AnthropicChatModel("claude-sonnet-4-5", api_key="sk-ant-test",
                                   base_url=fake.url + suffix, settings=FAST)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await _finish(api, batch_id)
        assert sorted(await _results(api, batch_id)) == ["in-0", "in-1"]
        await api.aclose()
        await model.aclose()


# ----------------------------------------------------------------------------- SDK witness

async def test_submitted_body_conforms_to_the_sdk_request_types() -> None:
    from anthropic.types.messages.batch_create_params import BatchCreateParams

    from tests.sdk.kits import ANTHROPIC_EXT
    from tests.sdk.strict import check

    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="done")
        model = _model(fake)
        api = model.batch_api()
        requests = _requests(model, 2)
        requests.append(model.batch_request(
            "plain", [Msg.system("Be brief."), Msg.user("hi")], [],
            GenerateOptions(temperature=0.2, max_tokens=50)))
        batch_id = await api.submit(requests)
        raw = fake.batches.jobs[batch_id].raw
        extensions = {f"requests[*].params.{k}": v for k, v in ANTHROPIC_EXT.items()}
        assert not check(raw, BatchCreateParams, extensions=extensions)
        await api.aclose()
        await model.aclose()


async def test_the_sdk_reads_the_fakes_batches_as_we_do() -> None:
    import anthropic

    async with AnthropicFake() as fake:
        fake.default = FakeReply(tool_calls=[FakeCall("record", {"name": "Ada"}, id="toolu_1")])
        fake.batches.script.outcomes = {"in-1": "errored", "in-2": "expired"}
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 4))
        sdk = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=fake.url, max_retries=0)
        created = await sdk.messages.batches.retrieve(batch_id)
        assert created.processing_status == "in_progress"
        await _finish(api, batch_id)
        ended = await sdk.messages.batches.retrieve(batch_id)
        status = await api.status(batch_id)
        counts = ended.request_counts
        assert ended.processing_status == "ended" and ended.results_url
        assert (counts.succeeded, counts.errored + counts.expired) == (status.succeeded,
                                                                     status.failed)
        ours = await _results(api, batch_id)
        async for line in await sdk.messages.batches.results(batch_id):
            mine = ours[line.custom_id]
            if line.result.type == "succeeded":
                assert line.result.message.model_dump(mode="json", exclude_none=True) == {
                    k: v for k, v in mine.reply.items() if v is not None}
            else:
                assert mine.error is not None
                expected = {"errored": "error", "expired": "expired"}[line.result.type]
                assert mine.error.kind == expected
        await sdk.close()
        await api.aclose()
        await model.aclose()


# ----------------------------------------------------------------------------- end to end

class Person(BaseModel):
    name: str


def echo(body: dict[str, Any]) -> FakeReply:
    """The name written in the first user text ("name: X"); a first turn for
    a name starting with BAD answers prose (the engine re-asks)."""
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else next(
        b["text"] for b in first if b["type"] == "text")
    name = text.split("name: ", 1)[1].split("<", 1)[0].strip()
    if name.startswith("BAD") and len(body["messages"]) == 1:
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


def _live(fake: AnthropicFake) -> int:
    return sum(1 for r in fake.requests if r.path == "/v1/messages")


async def test_extract_many_in_batch_mode_on_the_anthropic_fake() -> None:
    async with AnthropicFake() as fake:
        fake.default = echo
        model = _model(fake)
        results = await _run(model, _docs("Ada", "BADx", "Cy"))
        assert {k: r.output.name for k, r in results.items()} == {
            "id0": "Ada", "id1": "BADx", "id2": "Cy"}
        assert len(fake.batches.jobs) == 1 and _live(fake) == 1  # the re-ask went live
        assert results["id1"].attempts == 2
        assert sorted(fake.batches.submitted.values()) == [1, 1, 1]
        assert results["id0"].usage.input_tokens == 100
        await model.aclose()


async def test_a_request_over_the_context_window_is_a_context_length_record() -> None:
    """A batch request the vendor answers "prompt is too long" fails as it would
    live (``ContextLengthError``, saying to chunk), never resubmitted; the
    other requests of the batch are untouched."""
    def reply(body: dict[str, Any]) -> Any:
        if "LONG" in orjson.dumps(body["messages"]).decode():
            return anthropic_error(400, "invalid_request_error",
                                   "prompt is too long: 210000 tokens > 200000 maximum")
        return echo(body)

    async with AnthropicFake() as fake:
        fake.default = reply
        model = _model(fake)
        results = await _run(model, _docs("Ada", "LONG"))
        assert results["id0"].output.name == "Ada"
        error = results["id1"].error
        assert isinstance(error, ContextLengthError) and not isinstance(error, BatchRequestError)
        assert "210000 tokens > 200000" in str(error) and "chunking=" in str(error)
        assert sorted(fake.batches.submitted.values()) == [1, 1] and _live(fake) == 0
        await model.aclose()


async def test_expired_requests_are_resubmitted_once_and_never_paid_twice() -> None:
    async with AnthropicFake() as fake:
        fake.default = echo
        fake.batches.script.expire = True
        fake.batches.script.finished = 1
        fake.batches.script.expire_batches = 1
        model = _model(fake)
        results = await _run(model, _docs("Ada", "Bob", "Cy"))
        assert all(r.ok for r in results.values()), results
        assert len(fake.batches.jobs) == 2
        assert sorted(fake.batches.submitted.values()) == [1, 2, 2]
        assert max(fake.batches.executed.values()) == 1
        await model.aclose()


async def test_an_archived_batch_is_gone_and_its_requests_resubmitted_once() -> None:
    """A batch archived before its results were read (``archived_at`` set,
    no ``results_url``: Anthropic's "results no longer available") is gone,
    like one the vendor answers 404 for: its requests go again once."""
    async with AnthropicFake() as fake:
        fake.default = echo
        fake.archive_batches = 1
        model = _model(fake)
        results = await _run(model, _docs("Ada", "Bob"))
        assert {r.output.name for r in results.values() if r.ok} == {"Ada", "Bob"}
        assert len(fake.batches.jobs) == 2 and len(fake.archived) == 1
        assert sorted(fake.batches.submitted.values()) == [2, 2]
        await model.aclose()


async def test_killed_while_polling_a_rerun_polls_the_same_batch(tmp_path: Any) -> None:
    journal = str(tmp_path / "batches.json")
    async with AnthropicFake() as fake:
        fake.default = echo
        fake.batches.script.polls = 10_000  # runs until the test lets it end
        model = _model(fake)
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
