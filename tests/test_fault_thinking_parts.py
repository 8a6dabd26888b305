"""Vendor fault: reasoning given as ``thinking`` parts of ``content``.

Mistral's reasoning models (Magistral) answer ``content`` as a list of parts,
the reasoning first as ``{"type": "thinking", "thinking": [{"type": "text",
"text": ...}]}``, then ``{"type": "text", "text": ...}`` parts, in whole
replies and in every stream delta (https://github.com/vercel/ai/pull/8072,
https://github.com/BerriAI/litellm/issues/16272). The parts were read for
their ``text`` alone: the reasoning was dropped, no ``ThinkingChunk`` was
streamed and the reply kept no thinking. It is now thinking; a ``thinking``
part whose value is a string (other compatible servers) too.

Served by an OpenAI-style fake, streamed and whole, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Complete, NativeStrategy, OutputConfig, ReActAgent, ThinkingChunk
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class City(BaseModel):
    name: str
    country: str


class ThinkingParts(OpenAIFake):
    """``content`` as Magistral's parts: a thinking part (nested text parts,
    or a string when ``extra["flat"]``), then a text part."""

    def parts(self, reply: FakeReply) -> list[dict[str, Any]]:
        inner: Any = reply.thinking if reply.extra.get("flat") else [
            {"type": "text", "text": reply.thinking}]
        return [{"type": "thinking", "thinking": inner}, {"type": "text", "text": reply.text}]

    def message_json(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        message = super().message_json(reply, body)
        message.pop(self.reasoning_field, None)  # the reasoning is in the parts alone
        return {**message, "content": self.parts(reply)}

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        thinking, text = self.parts(reply)
        return [self.chunk(body, {"role": "assistant", "content": ""}),
                self.chunk(body, {"content": [thinking]}),
                self.chunk(body, {"content": [text]})]


async def _ask(stream: bool, flat: bool = False) -> list[Any]:
    async with ThinkingParts() as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "France"}',
                           thinking="The capital of France is Paris.", extra={"flat": flat}))
        async with OpenAIChatModel("magistral-medium-2509", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("t", model, output=OutputConfig(strategy=NativeStrategy()))
            return [e async for e in agent.stream("The capital of France?", City)]


@pytest.mark.parametrize("stream", [True, False])
async def test_thinking_parts_are_thinking(stream: bool) -> None:
    events = await _ask(stream)
    done = events[-1]
    assert isinstance(done, Complete)
    assert done.output == City(name="Paris", country="France")
    thought = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thought == "The capital of France is Paris."


async def test_a_thinking_part_given_as_a_string_is_thinking() -> None:
    events = await _ask(stream=True, flat=True)
    thought = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thought == "The capital of France is Paris."
    assert isinstance(events[-1], Complete)
    assert events[-1].output == City(name="Paris", country="France")
