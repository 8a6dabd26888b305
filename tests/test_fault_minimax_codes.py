"""Vendor fault: MiniMax error codes the adapter did not know, retried as server errors.

MiniMax answers errors with HTTP 200 and ``base_resp.status_code``. A wrong
key is ``2049 invalid api key`` (MiniMax-AI/MiniMax-01#37,
MiniMax-AI/MiniMax-M2.5#18), a Token Plan whose usage window is spent is
``2056 usage limit exceeded`` (MiniMax-AI/MiniMax-M2.7#36; an agent that kept
retrying it, MiniMax-AI/minimax-code#108); its error-code table also lists
connection (1041) and growth (2045) rate limits and a bad-input code (1042,
platform.minimax.io/docs/api-reference/errorcode). Any code but six was a
retried ``ServerError``: a wrong key was sent three times and reported as a
server fault, a spent plan hammered. Each is now typed from the table: a
wrong key is an ``AuthenticationError``, a spent plan a
``QuotaExceededError`` (neither retried), the rate limits retried.

Served by the MiniMax fake, whole and streamed, through the public API."""

from __future__ import annotations

import pytest

from agentflow import (
    AuthenticationError,
    BadRequestError,
    ProviderError,
    QuotaExceededError,
    ReActAgent,
)
from agentflow.providers.minimax import MiniMaxChatModel
from tests.fakes.base import FakeReply
from tests.fakes.minimax import MiniMaxFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def model_for(fake: MiniMaxFake, stream: bool) -> MiniMaxChatModel:
    return MiniMaxChatModel("MiniMax-M2.7", base_url=fake.url, api_key="sk-cp-secret-value-1",
                            stream=stream, settings=FAST)


@STREAMS
@pytest.mark.parametrize(("code", "message", "kind"), [
    (2049, "invalid api key", AuthenticationError),
    (2056, "usage limit exceeded, 5-hour usage limit reached for Token Plan Starter "
           "(0/0 used), resets at 2026-05-15T15:00:00Z", QuotaExceededError),
    (1042, "illegal characters exceeded 10%", BadRequestError),
], ids=["invalid-key", "plan-spent", "bad-input"])
async def test_a_lasting_code_is_typed_and_not_retried(
        stream: bool, code: int, message: str, kind: type[ProviderError]) -> None:
    async with MiniMaxFake() as fake:
        fake.add_base_error(code, message)
        fake.add(FakeReply(text="never"))
        model = model_for(fake, stream)
        try:
            with pytest.raises(kind) as info:
                await ReActAgent("r", model).call("hi")
        finally:
            await model.aclose()
    assert info.value.code == str(code) and not info.value.retryable
    assert len(fake.requests) == 1
    assert "sk-cp-secret-value-1" not in str(info.value)


@STREAMS
@pytest.mark.parametrize("code", [1041, 2045])
async def test_a_rate_limit_code_is_retried(stream: bool, code: int) -> None:
    async with MiniMaxFake() as fake:
        fake.add_base_error(code, "rate limit")
        fake.add(FakeReply(text="after retry"))
        model = model_for(fake, stream)
        try:
            reply = await ReActAgent("r", model).call("hi")
        finally:
            await model.aclose()
    assert reply.text == "after retry"
    assert len(fake.requests) == 2
