"""Issue 32, kind 2: usage a vendor did not report is unknown, never zero.

A reply without usage (a stream whose server ignores
``stream_options.include_usage``, a Gemini reply without ``usageMetadata``,
an Ollama reply without ``prompt_eval_count``) gives a ``Usage`` that says so
(``unreported``), through sums, the call's usage, records, summaries and cost
estimates. Served by the OpenAI-style, Gemini and Ollama fakes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentflow import ReActAgent
from agentflow.batch_api.cost import usage_summary
from agentflow.events import Complete
from agentflow.extraction._report_parts import _meta
from agentflow.model import ChatModel, Usage
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[Callable[[], FakeServer], Callable[[str, bool], ChatModel]]] = {
    "openai": (OpenAIFake, lambda url, s: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=s, settings=FAST)),
    "deepseek": (DeepSeekFake, lambda url, s: DeepSeekChatModel(
        "deepseek-chat", base_url=url, api_key="k", stream=s, settings=FAST)),
    "glm": (GLMFake, lambda url, s: GLMChatModel(
        "glm-4.6", base_url=url, api_key="k", stream=s, settings=FAST)),
    "gemini": (GeminiFake, lambda url, s: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=s, settings=FAST)),
    "ollama": (OllamaFake, lambda url, s: OllamaChatModel(
        "llama3.2", base_url=url, stream=s, settings=FAST)),
}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_reply_without_usage_is_unknown_not_zero(vendor: str, stream: bool) -> None:
    make_fake, make_model = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(FakeReply(text="first", extra={"no_usage": True}),
                 FakeReply(text="second", usage=(30, 5)))
        model = make_model(fake.url, stream)
        try:
            agent = ReActAgent("u", model)
            first, unknown = await _call(agent, "hi")
            _, known = await _call(agent, "again")
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert first.text == "first"
    assert unknown.unreported == 1 and not unknown.known and unknown.requests == 1
    assert unknown.describe() == "tokens unknown (1 request unreported)"
    assert known == Usage(30, 5, requests=1) and known.known
    both = unknown + known
    assert both.unreported == 1 and both.total_tokens == 35
    assert both.describe() == "35 tokens + unknown (1 of 2 requests unreported)"


async def _call(agent: ReActAgent, prompt: str) -> tuple[Any, Usage]:
    """The call's reply and usage, as its ``Complete`` event carries them."""
    async for event in agent.stream(prompt):
        if isinstance(event, Complete):
            return event.message, event.usage
    raise AssertionError("no Complete event")


def test_summaries_say_unknown_never_zero() -> None:
    unknown = Usage(requests=3, unreported=3)
    assert usage_summary(object(), unknown) == "tokens unknown (3 requests unreported)"
    assert usage_summary(object(), Usage(100, 20, requests=1)) == "120 tokens"
    record: dict[str, Any] = {"usage": {"input_tokens": 0, "output_tokens": 0,
                                        "unreported": 1, "requests": 1}}
    assert "tokens unknown" in _meta(record, None)  # type: ignore[arg-type]
    assert "0 tokens" not in _meta(record, None)  # type: ignore[arg-type]


def test_usage_arithmetic_keeps_known_and_unknown_apart() -> None:
    a = Usage(10, 2, requests=1)
    b = Usage(requests=1).request()  # a reply that reported nothing
    assert b == Usage(requests=1, unreported=1)
    assert a.request() == Usage(10, 2, requests=1)
    total = a + b + b
    assert (total.total_tokens, total.requests, total.unreported) == (12, 3, 2)
    assert Usage().known and Usage() + Usage() == Usage()
