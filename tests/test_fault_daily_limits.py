"""Vendor fault: a 429 for a daily limit, retried as if a minute would free it.

OpenAI-style servers answer a spent daily allowance with the same 429 as a
per-minute limit: OpenRouter's "Rate limit exceeded: free-models-per-day.
Add 10 credits to unlock 1000 free model requests per day"
(Gitlawb/openclaude#936, as HTTP 429 and as a 429 error inside a 200
body), OpenAI's "Rate limit reached for gpt-4o ... on requests per day
(RPD): Limit 200, Used 200". Each was a ``RateLimitedError``: waited for and
retried until the retries ran out, every document of a batch doing the same.
A daily limit is a ``QuotaExceededError`` now, raised at once; a per-minute
limit is still retried. So are the GLM Coding Plan's spent windows (code 1308,
a 5-hour cap, dirge-code/dirge#818; 1310, "Weekly/Monthly Limit Exhausted",
openclaw/openclaw#33813), which were retried as a concurrency limit.

Served by the OpenAI fake (an OpenRouter-like gateway), through the public API."""

from __future__ import annotations

import pytest

from agentflow import QuotaExceededError, ReActAgent
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.glm import GLMFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

OPENROUTER = {"error": {"message": "Rate limit exceeded: free-models-per-day. Add 10 credits "
                                   "to unlock 1000 free model requests per day", "code": 429,
                        "metadata": {"headers": {"X-RateLimit-Limit": "50",
                                                 "X-RateLimit-Remaining": "0"}}}}
OPENAI_RPD = {"error": {"message": "Rate limit reached for gpt-4o in organization org-x on "
                                   "requests per day (RPD): Limit 200, Used 200, Requested 1. "
                                   "Please try again in 7m12s.",
                        "type": "requests", "param": None, "code": "rate_limit_exceeded"}}


async def _call(fake: OpenAIFake) -> str:
    async with OpenAIChatModel("openrouter/free-model", base_url=fake.url, api_key="k",
                               settings=FAST) as model:
        return (await ReActAgent("r", model).call("hi")).text


@pytest.mark.parametrize(("status", "body"), [(429, OPENROUTER), (200, OPENROUTER),
                                              (429, OPENAI_RPD)],
                         ids=["openrouter-429", "openrouter-200-body", "openai-rpd"])
async def test_a_daily_limit_is_a_quota_error(status: int, body: object) -> None:
    async with OpenAIFake() as fake:
        fake.add_error(status, body)
        fake.add(FakeReply(text="never"))
        with pytest.raises(QuotaExceededError) as info:
            await _call(fake)
    assert not info.value.retryable and "per day" in str(info.value)
    assert len(fake.requests) == 1


async def test_a_per_minute_limit_is_still_retried() -> None:
    async with OpenAIFake() as fake:
        fake.add_error(429, {"error": {"message": "Rate limit reached for gpt-4o on requests per "
                                                  "min (RPM): Limit 3, Used 3, Requested 1.",
                                       "type": "requests", "code": "rate_limit_exceeded"}},
                       {"retry-after-ms": "10"})
        fake.add(FakeReply(text="after retry"))
        assert await _call(fake) == "after retry"
    assert len(fake.requests) == 2


@pytest.mark.parametrize("error", [
    {"code": "1308", "message": "已达到 5 小时的使用上限。您的限额将在 2026-08-25 07:41:44 重置。"},
    {"code": "1310", "message": "Weekly/Monthly Limit Exhausted. Your limit will reset at "
                                "2026-03-09 00:00:00"},
], ids=["1308-five-hours", "1310-weekly"])
async def test_a_glm_coding_plan_window_is_a_quota_error(error: dict[str, str]) -> None:
    async with GLMFake() as fake:
        fake.add_error(429, {"error": error})
        fake.add(FakeReply(text="never"))
        async with GLMChatModel("glm-4.7", base_url=fake.url, api_key="k",
                                settings=FAST) as model:
            with pytest.raises(QuotaExceededError) as info:
                await ReActAgent("g", model).call("hi")
    assert not info.value.retryable and info.value.code == error["code"]
    assert len(fake.requests) == 1
