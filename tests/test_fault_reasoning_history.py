"""Vendor fault: a thinking model's server wants its reasoning back.

Kimi K2's thinking models (kimi-k2-thinking, K2.5, K2.6 on api.moonshot.ai)
refuse a history whose tool-call turns lack their ``reasoning_content``: 400
"thinking is enabled but reasoning_content is missing in assistant tool call
message at index 2" (farion1231/cc-switch#2365, openclaw/openclaw#59689), an
empty one counting as missing on K2.5/K2.6 (theopenco/llmgateway#2093);
DeepSeek's thinking mode reached through a gateway refuses the same
("Missing `reasoning_content` field in the assistant message"). On the
generic OpenAI-compatible adapter, which drops reasoning from the history,
every tool loop failed at its second request. The refused request is now
sent again with each tool-call turn's reasoning (a single space for a turn
that kept none), and the model sends it so from then on.

Served by an OpenAI fake answering as Moonshot's API does, streamed and whole."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST

MOONSHOT = "thinking is enabled but reasoning_content is missing in assistant tool call " \
           "message at index {i}"
DEEPSEEK = "Missing `reasoning_content` field in the assistant message at message index {i}"


class ThinkingFake(OpenAIFake):
    """Refuses a tool-call turn without a non-empty ``reasoning_content``."""

    def __init__(self, wording: str = MOONSHOT) -> None:
        super().__init__()
        self.wording = wording

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        for i, message in enumerate(body.get("messages") or ()):
            if message.get("tool_calls") and not message.get("reasoning_content"):
                return openai_error(400, self.wording.format(i=i))
        return super().validate(body)


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


@pytest.mark.parametrize("wording", [MOONSHOT, DEEPSEEK], ids=["moonshot", "deepseek"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_tool_loop_goes_on_with_its_reasoning_sent_back(wording: str,
                                                                 stream: bool) -> None:
    async with ThinkingFake(wording) as fake:
        fake.add(FakeReply(thinking="I need the weather tool.",
                           tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="It is 18C in Paris."), FakeReply(text="Still 18C."))
        async with OpenAIChatModel("kimi-k2-thinking", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("k", model, tools=[get_weather])
            state = AgentState()
            assert (await agent.call("Weather in Paris?", state=state)).text == \
                "It is 18C in Paris."
            assert (await agent.call("And now?", state=state)).text == "Still 18C."
    assert len(fake.requests) == 4  # one refusal, then the reasoning goes back at once
    turn = next(m for m in fake.bodies[2]["messages"] if m.get("tool_calls"))
    assert turn["reasoning_content"] == "I need the weather tool."


async def test_a_turn_that_kept_no_reasoning_sends_a_space() -> None:
    state = AgentState([
        Msg.user("Weather in Paris?"),
        Msg("assistant", [ToolUseBlock("call_1", "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock("call_1", "18C", name="get_weather")]),
        Msg.assistant("It is 18C."),
    ])
    async with ThinkingFake() as fake:
        fake.add(FakeReply(text="Still 18C."))
        async with OpenAIChatModel("kimi-k2.6", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("k", model, tools=[get_weather]).call("And now?",
                                                                           state=state)
    assert reply.text == "Still 18C."
    turn = next(m for m in fake.bodies[-1]["messages"] if m.get("tool_calls"))
    assert turn["reasoning_content"] == " "
    assert "reasoning_content" not in next(
        m for m in fake.bodies[-1]["messages"] if m["role"] == "assistant"
        and not m.get("tool_calls"))
