"""Vendor fault: a 429 asking for a wait of hours was slept on and sent again.

A spent hourly or daily quota answers 429 with a ``Retry-After`` of an hour
or more (GitHub Copilot's quota, lobehub/lobehub#13572,
https://github.com/lobehub/lobehub/issues/13572: "A retry-after of 3 hours
(quota exhaustion) gets truncated to 10 seconds and retried 3 times instead
of surfacing immediately as unrecoverable"; Gemini's per-day quota,
google-gemini/gemini-cli#10925: "requests would hang for 3 min + before I got
the error"). The wait was capped at ``max_retry_after`` (120 s) and the
request sent again ``max_retries`` times: minutes held, every attempt
refused again. The vendors' SDKs do not retry such a reply at all
(openai-python ``_base_client._should_retry`` @ e43b422: "Not retrying
because `Retry-After` of %s seconds exceeds the maximum of %s seconds").
Now a wait past ``max_retry_after`` is raised at once, a typed
``RateLimitedError`` whose ``retry_after`` says when; a wait within it is
still honoured.

Served by the OpenAI and Anthropic fakes (``Retry-After`` in seconds, as an
HTTP date and as ``retry-after-ms``), through the public API."""

from __future__ import annotations

import email.utils
import time

import pytest
from pydantic import BaseModel

from agentflow import OverloadedError, RateLimitedError, ReActAgent
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake, openai_error

SETTINGS = HttpSettings(backoff_initial=0.01, backoff_max=0.05, max_retries=3, read_timeout=5,
                        max_retry_after=30.0)  # far below the hours asked, far above a request
ANSWER = '{"name": "Louvre", "country": "FR"}'
LIMIT = ("Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): "
         "Limit 3, Used 3, Requested 1.")


class City(BaseModel):
    name: str
    country: str


def _http_date(seconds: float) -> str:
    return email.utils.formatdate(time.time() + seconds, usegmt=True)


@pytest.mark.parametrize("headers", [
    {"Retry-After": "3600"},
    {"retry-after-ms": "10800000"},
    {"Retry-After": _http_date(7200)},
], ids=["seconds", "ms", "http-date"])
async def test_a_wait_of_hours_is_raised_at_once(headers: dict[str, str]) -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(429, LIMIT, "requests", code="rate_limit_exceeded",
                              headers=headers), FakeReply(text=ANSWER))
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, api_key="k",
                                   settings=SETTINGS) as model:
            start = time.monotonic()
            with pytest.raises(RateLimitedError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
            took = time.monotonic() - start
    error = caught.value
    assert len(fake.requests) == 1 and took < SETTINGS.max_retry_after
    assert error.retry_after is not None and error.retry_after > 3000  # when to come back
    assert "requests per min" in str(error)


async def test_a_529_asking_for_a_long_wait_is_raised_at_once() -> None:
    async with AnthropicFake() as fake:
        fake.add(anthropic_error(529, "overloaded_error", "Overloaded", {"retry-after": "600"}),
                 FakeReply(text=ANSWER))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=SETTINGS)
        try:
            with pytest.raises(OverloadedError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert caught.value.retry_after == 600
    assert len(fake.requests) == 1


async def test_a_wait_within_the_cap_is_still_honoured() -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(429, LIMIT, "requests", code="rate_limit_exceeded",
                              headers={"retry-after-ms": "200"}), FakeReply(text=ANSWER))
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, api_key="k",
                                   settings=SETTINGS) as model:
            start = time.monotonic()
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
            took = time.monotonic() - start
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2 and took >= 0.2
