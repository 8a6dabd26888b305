"""Vendor fault: a spent account's refusal read as a rate limit.

Moonshot's API (Kimi) refuses every request of an account whose balance is
spent with 403 or 429 and the type ``exceeded_current_quota_error``: "Your
account ... is not active, organization ... exceeded current quota, please
check your plan and billing details"
(https://github.com/MoonshotAI/Kimi-K2/issues/5); a gateway relays it under its
own code (OpenRouter's 429 "Provider returned error" with "Your account ...
is suspended due to insufficient balance" in ``metadata.raw``,
https://github.com/anomalyco/opencode/issues/24462). The 429 was a
``RateLimitedError``, retried with backoff to the same refusal (in a batch,
for every input) and the 403 a bare ``PermissionDeniedError``. Both are now
``QuotaExceededError``, never retried; Moonshot's per-minute limit
(``rate_limit_reached_error``) is still a retried ``RateLimitedError``.

Served by the OpenAI-style fake, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow import QuotaExceededError, RateLimitedError, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

NOT_ACTIVE = {"error": {"message": "Your account org-0a1b <ak-f81z> is not active, organization "
                        "<org-0a1b> exceeded current quota, please check your plan and billing "
                        "details", "type": "exceeded_current_quota_error"}}
RELAYED = {"error": {"message": "Provider returned error", "code": 429, "metadata": {
    "raw": orjson.dumps({"error": {
        "message": "Your account org-446a <ak-f817> is suspended due to insufficient balance, "
                   "please recharge your account or check your plan and billing details",
        "type": "exceeded_current_quota_error"}}).decode(),
    "provider_name": "Moonshot AI"}}}
RPM = {"error": {"message": "Your account org-0a1b <ak-f81z> request reached organization max "
                 "RPM: 3, please try again after 1 seconds", "type": "rate_limit_reached_error"}}


async def _refused(status: int, body: Any) -> tuple[Exception, int]:
    async with OpenAIFake() as fake:
        fake.add_error(status, body)
        fake.add_error(status, body)
        fake.add_error(status, body)
        async with OpenAIChatModel("kimi-k2.6", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(Exception) as info:
                await ReActAgent("k", model).call("Hello")
    return info.value, len(fake.requests)


@pytest.mark.parametrize(("status", "body"), [(429, NOT_ACTIVE), (403, NOT_ACTIVE),
                                              (429, RELAYED)], ids=["429", "403", "relayed"])
async def test_a_spent_account_is_a_quota_error(status: int, body: Any) -> None:
    error, requests = await _refused(status, body)
    assert isinstance(error, QuotaExceededError), repr(error)
    assert requests == 1
    assert "billing" in str(error)


async def test_the_per_minute_limit_is_still_retried() -> None:
    error, requests = await _refused(429, RPM)
    assert isinstance(error, RateLimitedError) and not isinstance(error, QuotaExceededError)
    assert requests == 3
