"""Vendor fault: reasoning as ``reasoning_text`` with a ``reasoning_opaque`` state.

GitHub Copilot's chat completions stream a reasoning model's thinking as
``delta.reasoning_text`` and its encrypted reasoning state as
``delta.reasoning_opaque`` (one chunk), and whole replies carry both on
``message``; clients send both back on the assistant turn
(https://github.com/BerriAI/litellm/issues/35021,
https://github.com/anomalyco/opencode/pull/8900: the API failed Gemini 3 tool
loops without the opaque state). Both were dropped: no thinking was streamed
or kept, and the next request of a tool loop went without the state. The
text is now thinking, and the state goes back with the turn it came in.

Served by an OpenAI-style fake speaking Copilot's fields, streamed and whole,
through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import ReActAgent, ThinkingChunk, ToolResult
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

OPAQUE = "Eo0BCkYIBhgCKkDq0encrypted-state=="


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny"


class CopilotReasoning(OpenAIFake):
    """Sends ``reply.thinking`` as ``reasoning_text`` and, for a reply that has
    some, ``OPAQUE`` as ``reasoning_opaque`` (its own chunk, before the calls)."""

    def message_json(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        message = super().message_json(reply, body)
        message.pop(self.reasoning_field, None)
        if reply.thinking:
            message.update(reasoning_text=reply.thinking, reasoning_opaque=OPAQUE)
        return message

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().delta_frames(reply, body)
        frames = [f for f in frames if self.reasoning_field not in f["choices"][0]["delta"]]
        if reply.thinking:
            frames[1:1] = [self.chunk(body, {"reasoning_text": reply.thinking[:9]}),
                           self.chunk(body, {"reasoning_text": reply.thinking[9:]}),
                           self.chunk(body, {"reasoning_opaque": OPAQUE})]
        return frames


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_copilot_reasoning_is_thinking_and_its_state_goes_back(stream: bool) -> None:
    async with CopilotReasoning() as fake:
        fake.add(FakeReply(thinking="The user wants Paris's weather.",
                           tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny in Paris."))
        async with OpenAIChatModel("gemini-3-pro-preview", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("c", model, tools=[get_weather])
            events = [e async for e in agent.stream("Weather in Paris?")]
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["Paris: sunny"]
    if stream:
        thought = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
        assert thought == "The user wants Paris's weather."
    turn = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert turn["reasoning_opaque"] == OPAQUE
    assert turn["reasoning_text"] == "The user wants Paris's weather."
    assert turn["tool_calls"][0]["function"]["name"] == "get_weather"
