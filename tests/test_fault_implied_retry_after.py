"""Vendor fault: a 429 that says its wait somewhere other than ``Retry-After``.

Groq and OpenAI write the wait into the message ("... on tokens per minute
(TPM): Limit 15000, Used 11390, Requested 4351. Please try again in 2.961s.",
Aider-AI/aider#3265, https://github.com/Aider-AI/aider/issues/3265, where the
client "implements its own delay scheme which does not work well"), Azure
OpenAI as "Please retry after N seconds"; LiteLLM's proxy relays the
vendor's header only as ``llm_provider-retry-after`` (BerriAI/litellm#21553:
"only llm_provider-retry-after is returned"); Anthropic-style rate-limit
headers say when the spent bucket refills (``anthropic-ratelimit-requests-
remaining: 0`` with its ``-reset`` time, anthropics/anthropic-sdk-typescript#357);
OpenRouter copies ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset`` (epoch
milliseconds) into the error body's ``error.metadata.headers``
(everruns/everruns#2280, https://github.com/everruns/everruns/pull/2280).
Without ``Retry-After`` the request was sent again after the default
backoff, before the window reopened, and refused again until the retries
were spent. The wait is read from those places now (``Retry-After`` still
first), and a wait past ``max_retry_after`` is raised at once as any is.

Served by the OpenAI and Anthropic fakes, through the public API."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel

from agentflow import RateLimitedError, ReActAgent
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error

SETTINGS = HttpSettings(backoff_initial=0.01, backoff_max=0.02, max_retries=1, read_timeout=5,
                        max_retry_after=30, rate_governor=False)
ANSWER = '{"name": "Louvre", "country": "FR"}'
GROQ = ("Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_1` "
        "service tier `on_demand` on tokens per minute (TPM): Limit 15000, Used 11390, "
        "Requested 4351. Please try again in {wait}. Visit https://console.groq.com/docs/"
        "rate-limits for more information.")
AZURE = ("Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
         "2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. "
         "Please retry after {wait}. Please go here: https://aka.ms/oai/quotaincrease if you "
         "would like to further increase the default rate limit.")


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize(("message", "headers", "wait"), [
    (GROQ.format(wait="450ms"), {}, 0.45),
    (GROQ.format(wait="0.4s"), {}, 0.4),
    (AZURE.format(wait="1 second"), {}, 1.0),
    ("litellm.RateLimitError: AzureException - rate limit", {"llm_provider-retry-after": "1"},
     1.0),
], ids=["groq-ms", "groq-s", "azure-words", "litellm-relayed"])
async def test_the_wait_is_read_where_the_server_said_it(message: str,
                                                         headers: dict[str, str],
                                                         wait: float) -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(429, message, "tokens", code="rate_limit_exceeded",
                              headers=headers), FakeReply(text=ANSWER))
        async with OpenAIChatModel("llama-3.3-70b-versatile", base_url=fake.url, api_key="k",
                                   settings=SETTINGS) as model:
            start = time.monotonic()
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
            took = time.monotonic() - start
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2 and took >= wait


async def test_a_spent_bucket_waits_for_its_reset() -> None:
    reset = (datetime.now(UTC) + timedelta(seconds=0.6)).isoformat()
    headers = {"anthropic-ratelimit-requests-limit": "50",
               "anthropic-ratelimit-requests-remaining": "0",
               "anthropic-ratelimit-requests-reset": reset}
    async with AnthropicFake() as fake:
        fake.add(anthropic_error(429, "rate_limit_error", "This request would exceed your "
                                 "organization's rate limit of 50 requests per minute.",
                                 headers), FakeReply(text=ANSWER))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=SETTINGS)
        try:
            start = time.monotonic()
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
            took = time.monotonic() - start
        finally:
            await model.aclose()
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2 and took >= 0.5


async def test_a_long_wait_in_words_is_raised_at_once() -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(429, GROQ.format(wait="2m25.44s"), "tokens",
                              code="rate_limit_exceeded"), FakeReply(text=ANSWER))
        async with OpenAIChatModel("llama-3.3-70b-versatile", base_url=fake.url, api_key="k",
                                   settings=SETTINGS) as model:
            with pytest.raises(RateLimitedError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert caught.value.retry_after == pytest.approx(145.44)
    assert len(fake.requests) == 1  # past max_retry_after: raised at once, saying when


@pytest.mark.parametrize("where", ["body", "headers"])
async def test_an_empty_windows_reset_time_is_waited_for(where: str) -> None:
    reset = str(int((time.time() + 0.8) * 1000))  # epoch milliseconds
    limits = {"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
              "X-RateLimit-Reset": reset}
    body = {"error": {"message": "Rate limit exceeded: free-models-per-min. ", "code": 429,
                      "metadata": {"headers": limits} if where == "body" else {}}}
    async with OpenAIFake() as fake:
        fake.add(FakeError(429, body, {} if where == "body" else limits),
                 FakeReply(text=ANSWER))
        async with OpenAIChatModel("deepseek/deepseek-r1:free", base_url=fake.url,
                                   api_key="k", settings=SETTINGS) as model:
            start = time.monotonic()
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
            took = time.monotonic() - start
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2 and took >= 0.5
