"""The Anthropic adapter against anthropic-sdk-python 2.10, on the points the
SDK knows and the adapter did not:

* ``usage.output_tokens_details.thinking_tokens`` (``types/usage.py``,
  ``types/message_delta_usage.py``, ``types/output_tokens_details.py``): the
  output tokens spent thinking, whole and on the cumulative
  ``message_delta``. It was dropped, so a Claude reply's
  ``Usage.reasoning_tokens`` was always 0.
* ``error.details.error_code`` (``_exceptions.extract_error_code``,
  ``_error_classes.ERROR_CLASSES``): a 429 ``enforced_spend_limit_reached`` or
  ``contract_spend_limit_reached`` is a monthly or contract limit, no rate
  limit; it was retried in vain. A ``ramp_limit_exceeded`` 429 asks for its
  ``retry-after`` and is still retried.
* ``conflict_error`` (``types/shared/error_type.py``) in a stream ``error``
  event is a 409, as the SDK's status tables have it (it was taken for a 500).

Served by the Anthropic fake on 127.0.0.1; the SDK itself reads the same
reply where it can be a witness."""

from __future__ import annotations

import anthropic
import pytest

from agentflow.errors import ProviderError, QuotaExceededError, ServerError
from agentflow.messages import Msg
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.reply import generate
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def _model(fake: AnthropicFake, stream: bool) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                              stream=stream, settings=FAST)


@STREAMS
async def test_thinking_tokens_are_reasoning_tokens(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="ok", usage=(20, 50), extra={"thinking_tokens": 31}))
        model = _model(fake, stream)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert (reply.usage.output_tokens, reply.usage.reasoning_tokens) == (50, 31)


async def test_the_sdk_reads_the_same_thinking_tokens() -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="ok", usage=(20, 50), extra={"thinking_tokens": 31}))
        sdk = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=fake.url, max_retries=0)
        try:
            message = await sdk.messages.create(
                model="claude-sonnet-4-5", max_tokens=64,
                messages=[{"role": "user", "content": "hi"}])
        finally:
            await sdk.close()
    details = message.usage.output_tokens_details
    assert details is not None and details.thinking_tokens == 31


@STREAMS
async def test_no_or_malformed_details_count_no_reasoning(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="a", usage=(20, 5)))
        fake.add(FakeReply(text="b", usage=(20, 5), extra={"thinking_tokens": "many"}))
        model = _model(fake, stream)
        try:
            plain = await generate(model, [Msg.user("hi")])
            odd = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert plain.usage.reasoning_tokens == odd.usage.reasoning_tokens == 0
    assert odd.message.text == "b"


def _limit(code: str) -> dict[str, object]:
    return {"type": "error", "request_id": "req_011",
            "error": {"type": "rate_limit_error", "message": "Spend limit reached.",
                      "details": {"error_code": code}}}


@STREAMS
@pytest.mark.parametrize("code", ["enforced_spend_limit_reached",
                                  "contract_spend_limit_reached"])
async def test_a_spend_limit_429_is_a_quota_error_never_retried(stream: bool,
                                                                code: str) -> None:
    assert issubclass(anthropic._error_classes.ERROR_CLASSES[(429, code)],
                      anthropic.RateLimitError)  # the SDK's own table knows the code
    async with AnthropicFake() as fake:
        fake.add_error(429, _limit(code), {"retry-after": "0"})
        fake.add(FakeReply(text="never"))
        model = _model(fake, stream)
        with pytest.raises(QuotaExceededError) as info:
            try:
                await generate(model, [Msg.user("hi")])
            finally:
                await model.aclose()
    assert (info.value.status, info.value.code, info.value.retryable) == (429, code, False)
    assert len(fake.requests) == 1


@STREAMS
async def test_a_ramp_limit_429_is_retried(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add_error(429, _limit("ramp_limit_exceeded"), {"retry-after": "0"})
        fake.add(FakeReply(text="after the wait"))
        model = _model(fake, stream)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert reply.message.text == "after the wait" and len(fake.requests) == 2


async def test_a_conflict_error_event_is_a_409() -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="partial reply", extra={
            "error": {"type": "conflict_error", "message": "Conflict."}, "error_after": 3}))
        model = _model(fake, True)
        with pytest.raises(ProviderError) as info:
            try:
                await generate(model, [Msg.user("hi")])
            finally:
                await model.aclose()
    assert isinstance(info.value, ServerError) and info.value.status == 409
