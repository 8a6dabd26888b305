"""Vendor fault: an Anthropic or Gemini error delivered inside a 200.

A gateway or proxy in front of Anthropic relays the error envelope
(``{"type": "error", "error": {"type": "overloaded_error", ...}}``) with its
200; Gemini writes its Google RPC error object into a 200 stream, as a
``data:`` event or as bare JSON lines (googleapis/python-genai
``_api_client.py``: "When API returns an error message, it comes line by
line"; the SDK raises such a chunk as the ``APIError`` of its ``code``).
A whole reply's error was typed but never retried (``overloaded_error`` failed
the call where its HTTP 529 twin is retried), an Anthropic one was even a
``ServerError`` "empty reply"; a Gemini error with a ``status`` but no
numeric ``code`` was a retryable 500 whatever its status; bare JSON lines were
dropped, the stream then taken for a cut one. Now the OpenAI-compatible
path serves them (tests/test_fault_ok_body_errors.py,
tests/test_fault_stream_error_events.py): a whole body's error is retried
by the HTTP layer like its HTTP twin when that is transient, raised at once
otherwise; a stream's is typed and ``partial`` (``stream_retries``).

Served by the Anthropic and Gemini fakes, through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import (
    BadRequestError,
    Complete,
    OverloadedError,
    ProviderError,
    RateLimitedError,
    ReActAgent,
    ServerError,
)
from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.fakes.gemini import GeminiFake
from tests.provider_scenarios import FAST


def anthropic(fake: AnthropicFake, stream: bool = False) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                              stream=stream, settings=FAST)


def gemini(fake: GeminiFake, stream: bool = False) -> GeminiChatModel:
    return GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k", stream=stream,
                           settings=FAST)


async def call(model: ChatModel, **agent: Any) -> str:
    try:
        return (await ReActAgent("n", model, **agent).call("Capital of France?")).text
    finally:
        await model.aclose()  # type: ignore[attr-defined]


async def streamed(model: ChatModel, **agent: Any) -> str:
    try:
        events = [e async for e in ReActAgent("n", model, **agent).stream("Capital of France?")]
    finally:
        await model.aclose()  # type: ignore[attr-defined]
    done = events[-1]
    assert isinstance(done, Complete)
    return done.message.text


def envelope(kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": f"{kind} happened"},
            "request_id": "req_1"}


def rpc(code: int | None, status: str) -> dict[str, Any]:
    error: dict[str, Any] = {"message": f"{status} happened", "status": status}
    if code is not None:
        error["code"] = code
    return {"error": error}


@pytest.mark.parametrize("kind", ["overloaded_error", "api_error", "rate_limit_error"])
async def test_anthropic_transient_error_in_a_200_body_is_retried(kind: str) -> None:
    async with AnthropicFake() as fake:
        fake.add_error(200, envelope(kind))
        fake.add(FakeReply(text="Paris."))
        assert await call(anthropic(fake)) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize(("kind", "error"), [
    ("invalid_request_error", BadRequestError), ("overloaded_error", OverloadedError)])
async def test_anthropic_lasting_or_spent_error_in_a_200_body_is_typed(
        kind: str, error: type[ProviderError]) -> None:
    sends = 1 if kind == "invalid_request_error" else FAST.max_retries + 1
    async with AnthropicFake() as fake:
        for _ in range(sends):
            fake.add_error(200, envelope(kind))
        fake.add(FakeReply(text="never sent"))
        with pytest.raises(error):
            await call(anthropic(fake))
    assert len(fake.requests) == sends


@pytest.mark.parametrize(("code", "status"), [
    (503, "UNAVAILABLE"), (500, "INTERNAL"), (429, "RESOURCE_EXHAUSTED"), (None, "UNAVAILABLE"),
    (None, "INTERNAL")], ids=["503", "500", "429", "unavailable-no-code", "internal-no-code"])
async def test_gemini_transient_error_in_a_200_body_is_retried(code: int | None,
                                                               status: str) -> None:
    async with GeminiFake() as fake:
        fake.add_error(200, rpc(code, status))
        fake.add(FakeReply(text="Paris."))
        assert await call(gemini(fake)) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("code", [400, None], ids=["400", "no-code"])
async def test_gemini_lasting_error_in_a_200_body_is_raised_at_once(code: int | None) -> None:
    async with GeminiFake() as fake:
        fake.add_error(200, [rpc(code, "INVALID_ARGUMENT")])  # in a one-element list
        fake.add(FakeReply(text="never sent"))
        with pytest.raises(BadRequestError) as info:
            await call(gemini(fake))
    assert info.value.status == 400
    assert len(fake.requests) == 1


@pytest.mark.parametrize("after", [0, 2], ids=["first", "mid"])
@pytest.mark.parametrize(("code", "status", "error"), [
    (503, "UNAVAILABLE", OverloadedError), (None, "UNAVAILABLE", OverloadedError),
    (429, "RESOURCE_EXHAUSTED", RateLimitedError), (500, "INTERNAL", ServerError)],
    ids=["503", "unavailable-no-code", "429", "500"])
async def test_gemini_bare_json_error_in_a_stream_is_typed_and_partial(
        code: int | None, status: str, error: type[ProviderError], after: int) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text="The capital is Paris.", chunk_size=4, extra={
            "error": rpc(code, status)["error"], "error_after": after, "bare_error": True}))
        with pytest.raises(error) as info:
            await streamed(gemini(fake, stream=True))
    assert info.value.partial and info.value.retryable
    assert len(fake.requests) == 1  # stream_retries=0: never sent again unasked


async def test_gemini_bare_json_error_is_sent_again_under_stream_retries() -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text="The capital is", chunk_size=4, extra={
            "error": rpc(503, "UNAVAILABLE")["error"], "error_after": 2, "bare_error": True}),
                 FakeReply(text="Paris."))
        assert await streamed(gemini(fake, stream=True), stream_retries=1) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("bare", [True, False], ids=["bare", "data"])
async def test_gemini_lasting_error_in_a_stream_is_not_retried(bare: bool) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text="The capital is", chunk_size=4, extra={
            "error": rpc(None, "INVALID_ARGUMENT")["error"], "error_after": 1,
            "bare_error": bare}), FakeReply(text="never sent"))
        with pytest.raises(BadRequestError):
            await streamed(gemini(fake, stream=True), stream_retries=2)
    assert len(fake.requests) == 1
