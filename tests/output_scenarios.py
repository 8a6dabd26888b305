"""Shared scenario of the model-fault tests on output readings: one reply
written on each output strategy (native schema output, the output tool, the
prompt), served by the OpenAI fake, read through ``agent.call``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentflow import NativeStrategy, OutputConfig, PromptStrategy, ReActAgent, ToolStrategy
from agentflow.output.strategies import OutputStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

__all__ = ["STRATEGIES", "call_output", "reply_with"]

STRATEGIES = pytest.mark.parametrize("strategy", [NativeStrategy(), ToolStrategy(),
                                                  PromptStrategy()],
                                     ids=["native", "tool", "prompt"])
"""Each test once per output strategy (``strategy``)."""


def reply_with(strategy: OutputStrategy, value: object) -> FakeReply:
    """``value`` as JSON, as ``strategy`` has the model write its output: the
    output tool's arguments, or the reply's text."""
    if isinstance(strategy, ToolStrategy):
        return FakeReply(tool_calls=[FakeCall("generate_response", json.dumps(value))])
    return FakeReply(text=json.dumps(value))


async def call_output(strategy: OutputStrategy, output: Any, prompt: str,
                      *replies: FakeReply) -> tuple[Any, int]:
    """``agent.call(prompt, output)`` on ``strategy`` against the OpenAI fake
    answering ``replies`` in turn: the output and the requests it took."""
    async with OpenAIFake() as fake:
        fake.add(*replies)
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("s", model, output=OutputConfig(strategy=strategy))
            reply = await agent.call(prompt, output)
        return reply.output, len(fake.requests)
