"""Vendor fault: Ollama Cloud's spent plan window was retried as a rate limit.

Ollama Cloud answers a plan whose hourly, session or weekly allowance is
spent with a 429 and a sentence: "you've reached your hourly usage limit,
please wait or upgrade to continue" (continuedev/continue#9233,
https://github.com/continuedev/continue/issues/9233), "you (user) have
reached your session usage limit, upgrade for higher limits:
https://ollama.com/upgrade" (continuedev/continue#11444), "... reached your
weekly usage limit ..." (NousResearch/hermes-agent#68832: "still gets
classified as rate_limit, retries the same exhausted key ... and burns the
retry budget"). Read as any 429, it was sent again ``max_retries`` times,
each refused at once; the window is hours or days away. It is a
``QuotaExceededError`` now, never retried, on the native API and on the
OpenAI-compatible one; a plain "too many requests" is still retried.

Served by the Ollama and OpenAI fakes, through the public API."""

from __future__ import annotations

import pytest

from agentflow import QuotaExceededError, ReActAgent
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake, ollama_error
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST

SPENT = [
    "you've reached your hourly usage limit, please wait or upgrade to continue",
    "you (ada) have reached your session usage limit, upgrade for higher limits: "
    "https://ollama.com/upgrade",
    "you (ada) have reached your weekly usage limit, upgrade for higher limits: "
    "https://ollama.com/upgrade or add extra usage: https://ollama.com/settings (ref: 1f2e)",
]


@pytest.mark.parametrize("message", SPENT, ids=["hourly", "session", "weekly"])
async def test_a_spent_window_is_a_quota_error_at_once(message: str) -> None:
    async with OllamaFake() as fake:
        fake.add(ollama_error(429, message), FakeReply(text="ok"))
        model = OllamaChatModel("glm-4.6:cloud", base_url=fake.url, settings=FAST)
        try:
            with pytest.raises(QuotaExceededError) as caught:
                await ReActAgent("o", model).call("hi")
        finally:
            await model.aclose()
    assert "usage limit" in str(caught.value) and not caught.value.retryable
    assert len(fake.requests) == 1


async def test_the_openai_compatible_endpoint_says_the_same() -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(429, SPENT[2], "rate_limit_error"), FakeReply(text="ok"))
        async with OpenAIChatModel("gpt-oss:120b-cloud", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(QuotaExceededError):
                await ReActAgent("o", model).call("hi")
    assert len(fake.requests) == 1


async def test_a_plain_rate_limit_is_still_retried() -> None:
    async with OllamaFake() as fake:
        fake.add(OllamaFake.rate_limited(0), FakeReply(text="ok"))
        model = OllamaChatModel("glm-4.6:cloud", base_url=fake.url, settings=FAST)
        try:
            assert (await ReActAgent("o", model).call("hi")).text == "ok"
        finally:
            await model.aclose()
    assert len(fake.requests) == 2
