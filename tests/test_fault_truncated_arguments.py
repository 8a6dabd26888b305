"""Issue 32, kind 5: tool-call arguments cut inside a value are never closed
by bracket repair and accepted, whatever the finish reason says (a router
that rewrote ``length`` as ``tool_calls``): the model is asked again, and a
call that never gets whole arguments ends with a typed error. A lost final
``}`` after a whole value (vLLM's Hermes parser) is still repaired.

Served by the OpenAI and Anthropic fakes, streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, StructuredOutputError
from agentflow.output.config import OutputConfig
from agentflow.output.decoding import explain_raw
from agentflow.output.strategies import ToolStrategy
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

GR = "generate_response"
CUT = '{"name":"Ana","items":["a","b"'
WHOLE = {"name": "Ana", "items": ["a", "b", "c"]}


class Order(BaseModel):
    name: str
    items: list[str]


def cut_reply(finish: str | None = "tool_calls") -> FakeReply:
    return FakeReply(tool_calls=[FakeCall(GR, CUT, id="call_cut")], finish_reason=finish,
                     chunk_size=6)


@pytest.mark.parametrize("stream", [True, False])
async def test_openai_cut_arguments_with_tool_calls_finish_are_asked_again(stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(cut_reply(), FakeReply(tool_calls=[FakeCall(GR, WHOLE)]))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("cut", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("the order", Order)
        assert reply.output == Order(**WHOLE)  # never the repaired ["a", "b"]
        assert len(fake.requests) == 2
        retry = fake.bodies[1]["messages"]
        said = " ".join(str(m.get("content")) for m in retry if m.get("role") == "tool")
        assert "cut off" in said


async def test_openai_cut_arguments_every_time_end_typed_not_silent() -> None:
    async with OpenAIFake() as fake:
        fake.default = cut_reply()
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            agent = ReActAgent("cut", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("the order", Order)
        with pytest.raises(StructuredOutputError):
            _ = reply.output


async def test_anthropic_cut_partial_json_is_asked_again() -> None:
    async with AnthropicFake() as fake:
        fake.add(cut_reply("tool_use"), FakeReply(tool_calls=[FakeCall(GR, WHOLE)]))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST)
        try:
            agent = ReActAgent("cut", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("the order", Order)
        finally:
            await model.aclose()
        assert reply.output == Order(**WHOLE)
        assert len(fake.requests) == 2


async def test_a_lost_final_brace_after_a_whole_value_is_still_repaired() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall(GR, '{"name":"Ana","items":["a","b","c"]')]))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            agent = ReActAgent("cut", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("the order", Order)
        assert reply.output == Order(**WHOLE) and len(fake.requests) == 1


def test_the_model_is_told_its_arguments_were_cut() -> None:
    assert "cut off" in explain_raw(CUT)
    assert "cut off" not in explain_raw("{'a': {1, 2}}")
