"""Vendor fault: a chat template that takes only strict turns.

Open-weight chat templates (Mistral, Gemma, Llama 2 on vLLM, TGI, llama.cpp)
take one optional system message and then user and assistant turns
alternating, and refuse anything else while the prompt is built: 400 "After
the optional system message, conversation roles must alternate
user/assistant/user/assistant/..." (vllm-project/vllm#6862, two user turns in
a row; suitenumerique/conversations#197, Gemma 3 and several system messages
at the start; microsoft/autogen#1037). Mistral's API checks the order too:
"Unexpected role 'user' after role 'tool'". Some take no system message at
all: Gemma 2's template ("System role not supported"), OpenAI's o1 models at
launch ("Unsupported value: 'messages[0].role' does not support 'system' with
this model."). An agent's system prompt beside
the structured-output mode message, or the reminder after a reply that
missed the output tool, failed every request. The refused request is now
sent again in strict turns (``providers._alternating``), and the model sends
its conversations so from then on.

Served by an OpenAI fake that builds its prompt as such a template does."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import AgentState, OutputConfig, ReActAgent, ToolStrategy
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.providers._alternating import AFTER_TOOLS
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error

ALTERNATE = ("After the optional system message, conversation roles must alternate "
             "user/assistant/user/assistant/...")


def template_problem(messages: list[dict[str, Any]]) -> str | None:
    """Why a Mistral v0.3-style template refuses ``messages``: tool calls and
    results are outside the user/assistant count, and only the assistant may
    follow tool results."""
    rest = messages[1:] if messages and messages[0]["role"] == "system" else messages
    turn, previous = 0, None
    for message in rest:
        role = message["role"]
        if role == "tool" or (role == "assistant" and message.get("tool_calls")):
            previous = role
            continue
        if previous == "tool" and role != "assistant":
            return f"Unexpected role '{role}' after role 'tool'"
        if role == "system" or (role == "user") != (turn % 2 == 0):
            return ALTERNATE
        turn, previous = turn + 1, role
    return None


class TemplateFake(OpenAIFake):
    """Refuses (``status``) a conversation its template cannot render."""

    def __init__(self, status: int = 400) -> None:
        super().__init__()
        self.status = status

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        problem = template_problem(body.get("messages") or [])
        if problem is not None:
            return openai_error(self.status, problem, "BadRequestError")
        return super().validate(body)


class City(BaseModel):
    name: str
    country: str


def _model(url: str) -> OpenAIChatModel:
    return OpenAIChatModel("google/gemma-3-27b-it", base_url=url, api_key="k")


@pytest.mark.parametrize("status", [400, 500])
async def test_an_output_call_with_a_system_prompt_and_a_reminder_goes_through(
        status: int) -> None:
    async with TemplateFake(status) as fake:
        fake.add(FakeReply(text="The Louvre is in Paris, France."), FakeReply(tool_calls=[
            FakeCall("generate_response", {"name": "Louvre", "country": "FR"})]))
        async with _model(fake.url) as model:
            agent = ReActAgent("t", model, sys_prompt="You answer briefly.",
                               output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("Where is the Louvre?", City)
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 3  # one refusal, then strict turns at once
    for body in fake.bodies[1:]:
        assert template_problem(body["messages"]) is None
    assert [m["role"] for m in fake.bodies[2]["messages"]] == ["system", "user", "assistant",
                                                                "user"]


async def test_two_user_turns_in_a_row_are_sent_as_one() -> None:
    state = AgentState([Msg.user("What is the capital city of Ontario?")])
    async with TemplateFake() as fake:
        fake.add(FakeReply(text="Toronto, founded as York in 1793."))
        async with _model(fake.url) as model:
            reply = await ReActAgent("t", model).call("And tell me about its history.",
                                                      state=state)
    assert reply.text.startswith("Toronto")
    sent = fake.bodies[-1]["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert sent[0]["content"] == ("What is the capital city of Ontario?\n\n"
                                  "And tell me about its history.")


async def test_a_user_turn_after_tool_results_gets_an_assistant_turn_before_it() -> None:
    state = AgentState([
        Msg.user("Weather in Paris?"),
        Msg("assistant", [ToolUseBlock("abcDEF123", "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock("abcDEF123", "18C", name="get_weather")]),
    ])
    async with TemplateFake() as fake:
        fake.add(FakeReply(text="It is 18C."))
        async with _model(fake.url) as model:
            reply = await ReActAgent("t", model).call("And now?", state=state)
    assert reply.text == "It is 18C."
    roles = [(m["role"], m.get("content")) for m in fake.bodies[-1]["messages"]]
    assert roles[2:] == [("tool", "18C"), ("assistant", AFTER_TOOLS), ("user", "And now?")]


NO_SYSTEM = ["System role not supported",
             "Unsupported value: 'messages[0].role' does not support 'system' with this model."]


class NoSystemFake(OpenAIFake):
    """Refuses any system message with ``message``."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if any(m["role"] == "system" for m in body.get("messages") or ()):
            return openai_error(400, self.message, param="messages[0].role")
        return super().validate(body)


@pytest.mark.parametrize("message", NO_SYSTEM, ids=["gemma-2", "o1"])
async def test_a_model_without_a_system_role_gets_its_instructions_as_user_text(
        message: str) -> None:
    async with NoSystemFake(message) as fake:
        fake.add(FakeReply(text="Paris."), FakeReply(text="France."))
        async with _model(fake.url) as model:
            agent = ReActAgent("t", model, sys_prompt="You answer in one word.")
            assert (await agent.call("Where is the Louvre?")).text == "Paris."
            assert (await agent.call("Which country?")).text == "France."
    assert len(fake.requests) == 3
    first = fake.bodies[1]["messages"]
    assert [m["role"] for m in first] == ["user"]
    assert first[0]["content"] == "You answer in one word.\n\nWhere is the Louvre?"
