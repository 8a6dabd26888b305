"""Vendor fault: prompt-cache writes counted as plain input.

A request that writes a prompt cache is billed above plain input: Anthropic
reports the written part as ``usage.cache_creation_input_tokens`` (5-minute
writes at 1.25x the input price, 1-hour ones at 2x), OpenRouter as
``usage.prompt_tokens_details.cache_write_tokens``
(openrouter.ai/docs/use-cases/usage-accounting), gateways relaying Anthropic
in OpenAI's shape as top-level ``cache_creation_input_tokens`` (LiteLLM).
``Usage`` had no field for it: the writes were folded into ``input_tokens``
and every cost estimate priced them as plain input, low by a quarter of the
written part or more. ``Usage.cache_write_tokens`` now holds them (a part of
``input_tokens``, as ``cached_tokens`` is), summed over a call's requests and
priced as writes.

Served by the Anthropic and OpenAI fakes, streamed and whole."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import Complete, ReActAgent, Usage
from agentflow.batch_api.cost import estimate_cost
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


async def _usage(events: Any) -> Usage:
    done = [e async for e in events][-1]
    assert isinstance(done, Complete)
    return done.usage


@STREAMS
async def test_anthropic_cache_writes_are_their_own_count(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="Hi.", usage=(10, 5), extra={"cache_write": 2000}))
        fake.add(FakeReply(text="Again.", usage=(10, 5), extra={"cache_read": 2000}))
        async with AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                      stream=stream, settings=FAST) as model:
            first = await _usage(ReActAgent("a", model).stream("Hello"))
            second = await _usage(ReActAgent("a", model).stream("Hello"))
    assert first == Usage(2010, 5, requests=1, cache_write_tokens=2000)
    assert second == Usage(2010, 5, cached_tokens=2000, requests=1)
    assert (first + second).cache_write_tokens == 2000


class OpenRouterUsageFake(OpenAIFake):
    """OpenRouter's usage: the writes in ``prompt_tokens_details.cache_write_tokens``."""

    def usage_json(self, reply: FakeReply) -> dict[str, Any] | None:
        usage = super().usage_json(reply)
        assert usage is not None
        usage["prompt_tokens_details"] = {"cached_tokens": 0, "cache_write_tokens": 1500,
                                          "audio_tokens": 0}
        usage["cost"] = 0.95
        return usage


class RelayUsageFake(OpenAIFake):
    """A gateway relaying Anthropic's counts top-level in OpenAI's usage (LiteLLM)."""

    def usage_json(self, reply: FakeReply) -> dict[str, Any] | None:
        usage = super().usage_json(reply)
        assert usage is not None
        usage.update(cache_creation_input_tokens=1500, cache_read_input_tokens=0)
        return usage


@STREAMS
@pytest.mark.parametrize("fake_type", [OpenRouterUsageFake, RelayUsageFake],
                         ids=["openrouter", "relay"])
async def test_openai_style_cache_writes_are_read(stream: bool,
                                                  fake_type: type[OpenAIFake]) -> None:
    async with fake_type() as fake:
        fake.add(FakeReply(text="Hi.", usage=(1600, 5)))
        async with OpenAIChatModel("anthropic/claude-sonnet-4.5", base_url=fake.url,
                                   api_key="k", stream=stream, settings=FAST) as model:
            usage = await _usage(ReActAgent("a", model).stream("Hello"))
    assert usage == Usage(1600, 5, requests=1, cache_write_tokens=1500)


def test_cache_writes_are_priced_above_plain_input() -> None:
    pytest.importorskip("genai_prices")
    plain = estimate_cost("claude-sonnet-4-5", Usage(3000, 10), provider="anthropic")
    written = estimate_cost("claude-sonnet-4-5", Usage(3000, 10, cache_write_tokens=2000),
                            provider="anthropic")
    assert plain is not None and written is not None
    assert written.live_usd > plain.live_usd
