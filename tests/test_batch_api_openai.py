"""The OpenAI Batch API wire (providers/_openai_batch.py) against the fake,
with the official ``openai`` SDK as a witness of the fake's shapes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow.batch_api.protocol import BatchCapable, BatchFinder, BatchState
from agentflow.errors import AuthenticationError, RateLimitedError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.providers._openai_batch import parse_output_line
from agentflow.providers.openai import OpenAIChatModel

from .fakes.base import FakeReply
from .fakes.openai import OpenAIFake, openai_error
from .provider_scenarios import FAST

KEY = "sk-batch-secret-0123456789"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}},
          "required": ["name"], "additionalProperties": False}
OPTIONS = GenerateOptions(response_format=ResponseFormat("json_schema", SCHEMA, "Person"))


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake(api_key=KEY) as server:
        yield server


@pytest.fixture
async def model(fake: OpenAIFake) -> Any:
    m = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key=KEY, settings=FAST)
    yield m
    await m.aclose()


def requests(model: OpenAIChatModel, n: int) -> list[Any]:
    return [model.batch_request(f"r{i}", [Msg.user(f"text {i}")], (), OPTIONS) for i in range(n)]


async def poll_to_end(api: Any, batch_id: str) -> list[Any]:
    states = []
    for _ in range(10):
        status = await api.status(batch_id)
        states.append(status.state)
        if status.state.terminal:
            return states
    raise AssertionError(f"never terminal: {states}")


async def test_model_is_batch_capable_and_request_is_the_live_body(model: Any) -> None:
    assert isinstance(model, BatchCapable)
    req = model.batch_request("r0", [Msg.user("hi")], (), OPTIONS)
    assert req.path == "chat/completions"
    assert "stream" not in req.body and "stream_options" not in req.body
    assert req.body["response_format"]["type"] == "json_schema"
    assert req.body["model"] == "gpt-4o-mini"


async def test_submit_poll_results_round_trip(fake: OpenAIFake, model: Any) -> None:
    fake.default = lambda body: FakeReply(text=orjson.dumps(
        {"name": body["messages"][-1]["content"]}).decode().replace(":", ": "))
    api = model.batch_api()
    assert isinstance(api, BatchFinder)
    batch_id = await api.submit(requests(model, 3), tag="t-1")
    assert fake.submitted == {"r0": 1, "r1": 1, "r2": 1}
    assert await poll_to_end(api, batch_id) == [
        BatchState.IN_PROGRESS, BatchState.FINALIZING, BatchState.COMPLETED]
    status = await api.status(batch_id)
    assert (status.total, status.succeeded, status.failed) == (3, 3, 0)
    results = [r async for r in api.results(batch_id)]
    assert [r.custom_id for r in results] == ["r2", "r1", "r0"]  # out of order
    by_id = {r.custom_id: r for r in results}
    chunks = list(model.parse_batch_reply(by_id["r1"].reply))
    text = "".join(c.text for c in chunks if c.type == "text")
    assert text == '{"name": "text 1"}'
    assert any(c.type == "finish" for c in chunks)
    assert any(c.type == "usage" for c in chunks)
    assert await api.find("t-1") == batch_id
    assert await api.find("t-2") is None
    # the JSONL lines as OpenAI documents them
    upload = fake.files["file-1"].splitlines()
    line = orjson.loads(upload[0])
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert line["custom_id"] == "r0" and "stream" not in line["body"]
    await api.aclose()


async def test_per_request_failures_and_expiry_come_back_typed(
        fake: OpenAIFake, model: Any) -> None:
    fake.add(FakeReply(text='{"name": "a"}'),
             openai_error(500, "The server had an error", "server_error"),
             openai_error(400, "bad thing", code="invalid_value"))
    fake.batch_plans.append(["validating", "in_progress", "expired"])
    fake.expire_done = 3
    api = model.batch_api()
    batch_id = await api.submit(requests(model, 4))
    assert (await poll_to_end(api, batch_id))[-1] is BatchState.EXPIRED
    results = {r.custom_id: r async for r in api.results(batch_id)}
    assert results["r0"].reply is not None and results["r0"].error is None
    assert results["r1"].error is not None and results["r1"].error.status == 500
    assert results["r1"].error.retryable
    assert results["r2"].error is not None and results["r2"].error.status == 400
    assert not results["r2"].error.retryable and results["r2"].error.code == "invalid_value"
    assert results["r3"].error is not None and results["r3"].error.kind == "expired"
    assert results["r3"].error.retryable
    await api.aclose()


async def test_cancel_goes_through_cancelling(fake: OpenAIFake, model: Any) -> None:
    api = model.batch_api()
    batch_id = await api.submit(requests(model, 2))
    await api.cancel(batch_id)
    assert fake.batches[batch_id].status == "cancelling"
    assert (await api.status(batch_id)).state is BatchState.CANCELLED
    results = [r async for r in api.results(batch_id)]
    assert {r.error.kind for r in results if r.error} == {"cancelled"}
    assert fake.executed == {}
    await api.cancel(batch_id)  # idempotent on a terminal batch
    await api.aclose()


async def test_invalid_input_file_fails_the_batch_with_the_reason(
        fake: OpenAIFake, model: Any) -> None:
    api = model.batch_api()
    dup = requests(model, 1) * 2
    batch_id = await api.submit(dup)
    status = await api.status(batch_id)
    assert status.state is BatchState.FAILED
    assert status.message is not None and "duplicate_custom_id" in status.message
    assert not fake.submitted
    await api.aclose()


async def test_polls_retry_through_429_and_5xx(fake: OpenAIFake, model: Any) -> None:
    api = model.batch_api()
    batch_id = await api.submit(requests(model, 1))
    fake.poll_errors.extend([openai_error(429, "Too many", "requests", code="rate_limit_exceeded"),
                             openai_error(502, "Bad gateway", "server_error")])
    assert (await api.status(batch_id)).state is BatchState.IN_PROGRESS
    fake.poll_errors.extend([openai_error(429, "Too many", "requests")] * 3)
    with pytest.raises(RateLimitedError):  # past the client's retries: the runner's backoff
        await api.status(batch_id)
    await api.aclose()


async def test_wrong_key_is_typed_and_masked(fake: OpenAIFake) -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="sk-wrong-key-999999",
                            settings=FAST)
    api = model.batch_api()
    with pytest.raises(AuthenticationError) as info:
        await api.submit(requests(model, 1))
    assert "sk-wrong-key-999999" not in str(info.value)
    await api.aclose()
    await model.aclose()


async def test_bad_lines_are_skipped_not_assigned() -> None:
    assert parse_output_line({"id": "x"}) is None
    assert parse_output_line("garbage") is None
    ok = parse_output_line({"custom_id": "a", "response": {"status_code": 200, "body": {}}})
    assert ok is not None and ok.reply == {} and ok.error is None


async def test_official_sdk_reads_the_fake_batch_api(fake: OpenAIFake, model: Any) -> None:
    openai = pytest.importorskip("openai")
    fake.default = FakeReply(text='{"name": "x"}')
    client = openai.AsyncOpenAI(api_key=KEY, base_url=fake.url, max_retries=0)
    content = b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", ' \
              b'"body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]}}\n'
    uploaded = await client.files.create(file=("in.jsonl", content), purpose="batch")
    batch = await client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                        completion_window="24h", metadata={"k": "v"})
    assert batch.status == "validating"
    for _ in range(3):
        batch = await client.batches.retrieve(batch.id)
    assert batch.status == "completed" and batch.request_counts is not None
    assert batch.request_counts.completed == 1 and batch.output_file_id
    out = await client.files.content(batch.output_file_id)
    assert b'"custom_id":"a"' in out.content
    page = await client.batches.list()
    assert [b.id for b in page.data] == [batch.id]
    other = await client.batches.create(input_file_id=uploaded.id,
                                        endpoint="/v1/chat/completions", completion_window="24h")
    cancelled = await client.batches.cancel(other.id)
    assert cancelled.status == "cancelling"
    await client.close()


async def test_creation_is_not_retried_after_a_failure_that_may_have_created_it(
        fake: OpenAIFake, model: Any) -> None:
    """A 500 on POST /batches may come after the batch exists: never retried
    (the runner finds it by tag); a 429 before creation is a refusal: retried."""
    from agentflow.errors import ServerError

    api = model.batch_api()
    fake.create_errors.append(openai_error(500, "The server had an error", "server_error"))
    with pytest.raises(ServerError):
        await api.submit(requests(model, 1), tag="t-x")
    assert len(fake.batches) == 1 and sum(fake.submitted.values()) == 1
    assert await api.find("t-x") == next(iter(fake.batches))
    await api.aclose()


async def test_runner_adopts_a_batch_whose_creation_reply_was_lost(
        fake: OpenAIFake, model: Any) -> None:
    from pydantic import BaseModel

    from agentflow.batch import extract_many
    from agentflow.batch_api.runner import BatchSettings

    class Person(BaseModel):
        name: str

    fake.default = FakeReply(text='{"name": "Ada"}')
    fake.create_errors.append(openai_error(502, "Bad gateway", "server_error"))
    results = [r async for r in extract_many(
        model, ["name: Ada"], Person, mode="batch", chunking=None,
        batch=BatchSettings(flush_after=0.01, poll_initial=0.01, poll_max=0.01))]
    assert results[0].ok and len(fake.batches) == 1 and sum(fake.submitted.values()) == 1


MARKUP = ('<minimax:tool_call><invoke name="generate_response">'
          '<parameter name="name">1984</parameter></invoke></minimax:tool_call>')


def _completion(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}


async def test_batch_reply_markup_is_typed_from_the_requests_tools(fake: OpenAIFake) -> None:
    """In-band tool-call markup (MiniMax: string values only) in a batch reply
    is read against the request's tools, as the live path reads it: a string
    parameter keeps "1984" as text instead of becoming the number 1984."""
    from agentflow.model import ToolSpec

    model = OpenAIChatModel("MiniMax-M2", base_url=fake.url, api_key=KEY, settings=FAST,
                            tool_markups=["minimax"])
    tool = ToolSpec("generate_response", "the answer", {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
    chunks = list(model.parse_batch_reply(_completion(MARKUP), [tool]))
    calls = [c for c in chunks if c.type == "tool_call"]
    assert [orjson.loads(c.arguments) for c in calls] == [{"name": "1984"}]
    assert [c.reason for c in chunks if c.type == "finish"] == ["tool_calls"]
    await model.aclose()


async def test_batch_mode_reads_markup_as_live_does(fake: OpenAIFake) -> None:
    """End to end: a batch reply whose structured output arrives as in-band
    markup validates on the first (batch) attempt; no live re-ask."""
    import dataclasses

    from pydantic import BaseModel

    from agentflow.batch import extract_many
    from agentflow.batch_api.runner import BatchSettings
    from agentflow.providers._openai_compat import GENERIC_PROFILE

    class Book(BaseModel):
        name: str

    fake.default = FakeReply(text=MARKUP)
    tools_only = dataclasses.replace(GENERIC_PROFILE, native_output=None)
    model = OpenAIChatModel("MiniMax-M2", base_url=fake.url, api_key=KEY, settings=FAST,
                            tool_markups=["minimax"], profile=tools_only)
    settings = BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02)
    results = [r async for r in extract_many(model, [("b1", "The book: 1984.")], Book,
                                             mode="batch", batch=settings, chunking=None)]
    await model.aclose()
    assert results[0].ok, results[0].error
    assert results[0].output.name == "1984" and results[0].attempts == 1
    assert not [r for r in fake.requests if r.path == "/v1/chat/completions"]  # no live re-ask
