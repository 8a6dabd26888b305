"""Vendor fault: a usage report holding a negative token count.

OpenAI's o3 answered with ``"usage": {"prompt_tokens": 1151,
"completion_tokens": -35, "total_tokens": 1116}`` (64bit/async-openai#404),
and gateways relay such counts (pollinations/pollinations#5378: negative
completion counts stored from a gateway's replies). A negative count is no
count: it was taken as it came, so a call's usage, its cost and every sum
it joined (a batch's totals, a run's budget) were lowered by it, and it read
as a known count. Now a usage holding one is unknown for that request
(``Usage.unreported``; ``describe()`` says "tokens unknown"), on every vendor
whose replies carry usage.

Served by the OpenAI, Anthropic, Gemini and Ollama fakes, streamed and whole,
through the public API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentflow import Complete, ReActAgent
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

Kit = tuple[Callable[[], FakeServer], Callable[[str, bool], Any]]
KITS: dict[str, Kit] = {
    "openai": (OpenAIFake, lambda url, stream: OpenAIChatModel(
        "o3", base_url=url, api_key="k", stream=stream, settings=FAST)),
    "anthropic": (AnthropicFake, lambda url, stream: AnthropicChatModel(
        "claude-sonnet-4-5", base_url=url, api_key="k", stream=stream, settings=FAST)),
    "gemini": (GeminiFake, lambda url, stream: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=stream, settings=FAST)),
    "ollama": (OllamaFake, lambda url, stream: OllamaChatModel(
        "qwen3", base_url=url, stream=stream, settings=FAST)),
}


async def _complete(fake: FakeServer, make: Callable[[str, bool], Any], stream: bool,
                    usage: tuple[int, int]) -> Complete[Any]:
    fake.add(FakeReply(text="Ticket 7 is about the login page.", usage=usage))
    async with make(fake.url, stream) as model:
        events = [e async for e in ReActAgent("u", model).stream("the ticket")]
    assert isinstance(events[-1], Complete)
    return events[-1]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("vendor", sorted(KITS))
async def test_a_negative_count_is_an_unknown_usage(vendor: str, stream: bool) -> None:
    fake_type, make = KITS[vendor]
    async with fake_type() as fake:
        done = await _complete(fake, make, stream, (1151, -35))
    assert done.message.text == "Ticket 7 is about the login page."
    assert not done.usage.known and done.usage.unreported == 1
    assert done.usage.output_tokens >= 0 and done.usage.input_tokens >= 0
    assert "unknown" in done.usage.describe()


@pytest.mark.parametrize("vendor", sorted(KITS))
async def test_counts_of_zero_and_more_are_kept(vendor: str) -> None:
    fake_type, make = KITS[vendor]
    async with fake_type() as fake:
        done = await _complete(fake, make, True, (1151, 0))
    assert done.usage.known and done.usage.input_tokens >= 1151
