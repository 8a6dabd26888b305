"""Vendor fault: Gemini's 429 for a quota that no wait restores, retried.

Gemini answers 429 ``RESOURCE_EXHAUSTED`` both for a per-minute limit (wait
and retry) and for quotas a call cannot outwait: a daily quota
(``GenerateRequestsPerDayPerProjectPerModel-FreeTier``) and a quota of 0,
a model without a free tier ("Quota exceeded for metric:
generativelanguage.googleapis.com/generate_content_free_tier_requests,
limit: 0, model: gemini-3.1-pro ... Please retry in 56.4s",
google-gemini/gemini-cli#22486; "Gemini 2.5 Pro Preview doesn't have a free
quota tier", retried 20 times in ai-christianson/RA.Aid#182). Each was a
``RateLimitedError``, waited for and retried until the retries ran out. The
``google.rpc.QuotaFailure`` detail says which quota it is: a daily quota or
a quota of 0 is a ``QuotaExceededError`` now, raised at once; a per-minute
quota is still retried after its ``RetryInfo`` delay.

Served by the Gemini fake, through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import QuotaExceededError, ReActAgent
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeReply
from tests.fakes.gemini import GeminiFake
from tests.provider_scenarios import FAST


def exhausted(message: str, quota_id: str, value: str, delay: str = "56s") -> dict[str, Any]:
    return {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED",
                      "details": [
                          {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                           "violations": [{"quotaMetric": "generativelanguage.googleapis.com/"
                                                          "generate_content_free_tier_requests",
                                           "quotaId": quota_id, "quotaValue": value}]},
                          {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                           "retryDelay": delay}]}}


async def _call(fake: GeminiFake) -> str:
    model = GeminiChatModel("gemini-2.5-pro", base_url=fake.url, api_key="k", settings=FAST)
    try:
        return (await ReActAgent("g", model).call("hi")).text
    finally:
        await model.aclose()


@pytest.mark.parametrize("body", [
    exhausted("You exceeded your current quota. * Quota exceeded for metric: "
              "generativelanguage.googleapis.com/generate_content_free_tier_requests, "
              "limit: 0, model: gemini-3.1-pro. Please retry in 56.42777108s.",
              "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "0"),
    exhausted("You exceeded your current quota, please check your plan and billing details.",
              "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250"),
    {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
               "message": "Gemini 2.5 Pro Preview doesn't have a free quota tier. Please use "
                          "Gemini 2.5 Pro Experimental instead."}},
], ids=["limit-0", "per-day", "no-free-tier"])
async def test_a_quota_no_wait_restores_is_not_retried(body: dict[str, Any]) -> None:
    async with GeminiFake() as fake:
        fake.add_error(429, body)
        fake.add(FakeReply(text="never"))
        with pytest.raises(QuotaExceededError) as info:
            await _call(fake)
    assert info.value.status == 429 and not info.value.retryable
    assert len(fake.requests) == 1


async def test_a_per_minute_quota_is_still_retried() -> None:
    async with GeminiFake() as fake:
        fake.add_error(429, exhausted(
            "You exceeded your current quota, please check your plan and billing details.",
            "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "5", delay="0.01s"))
        fake.add(FakeReply(text="after retry"))
        assert await _call(fake) == "after retry"
    assert len(fake.requests) == 2
