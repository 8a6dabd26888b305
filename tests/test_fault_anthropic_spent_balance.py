"""Vendor fault: Anthropic reports a spent balance as a bad request or a rate limit.

An account out of credits gets HTTP 400 ``invalid_request_error`` "Your
credit balance is too low to access the Anthropic API. Please go to Plans &
Billing to upgrade or purchase credits." (anthropics/claude-quickstarts#229,
anthropics/claude-code#4684); one past its spending limit gets 400 "You have
reached your specified API usage limits. You will regain access on ..."
(anthropics/claude-code#2127); a long-context request without extra usage
gets 429 ``rate_limit_error`` "Extra usage is required for long context
requests." (anthropics/claude-code#29584). The first two were typed as a
``BadRequestError`` (a fault of the request: an extraction run blamed each
document), the last as a ``RateLimitedError``, retried in vain. All three are
now a ``QuotaExceededError``, raised at once; an ordinary bad request and an
ordinary rate limit are unchanged.

Served by the Anthropic fake, whole and streamed, through the public API."""

from __future__ import annotations

import pytest

from agentflow import BadRequestError, QuotaExceededError, ReActAgent
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def envelope(kind: str, message: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": kind, "message": message},
            "request_id": "req_011CbrFTcXhtiMzr3s6EocF7"}


async def _call(fake: AnthropicFake, stream: bool) -> str:
    model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                               stream=stream, settings=FAST)
    try:
        return (await ReActAgent("r", model).call("hi")).text
    finally:
        await model.aclose()


@STREAMS
@pytest.mark.parametrize(("status", "kind", "message"), [
    (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic "
                                   "API. Please go to Plans & Billing to upgrade or purchase "
                                   "credits."),
    (400, "invalid_request_error", "You have reached your specified API usage limits. You "
                                   "will regain access on 2026-04-01 at 00:00 UTC."),
    (429, "rate_limit_error", "Extra usage is required for long context requests."),
], ids=["credit", "spend-limit", "extra-usage"])
async def test_a_spent_balance_is_a_quota_error(stream: bool, status: int, kind: str,
                                                message: str) -> None:
    async with AnthropicFake() as fake:
        fake.add_error(status, envelope(kind, message))
        fake.add(FakeReply(text="never"))
        with pytest.raises(QuotaExceededError) as info:
            await _call(fake, stream)
    assert info.value.status == status and not info.value.retryable
    assert "credit" in str(info.value) or "usage" in str(info.value)
    assert len(fake.requests) == 1


@STREAMS
async def test_other_bad_requests_and_rate_limits_are_unchanged(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add_error(400, envelope("invalid_request_error", "messages: at least one message "
                                                              "is required"))
        with pytest.raises(BadRequestError):
            await _call(fake, stream)
        fake.add_error(429, envelope("rate_limit_error", "Number of request tokens has "
                                                         "exceeded your per-minute rate limit"),
                       {"retry-after": "0"})
        fake.add(FakeReply(text="after retry"))
        assert await _call(fake, stream) == "after retry"
    assert len(fake.requests) == 3
