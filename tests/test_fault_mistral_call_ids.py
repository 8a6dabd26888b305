"""Vendor fault: a server that takes only nine-character tool-call ids.

Mistral's API refuses a history whose tool-call ids are not exactly nine
letters and digits (400 "Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but
must be a-z, A-Z, 0-9, with a length of 9."; langchain-ai/langchain#24668,
anomalyco/opencode#1680, karthink/gptel#1203), and so do Mistral chat
templates on self-hosted servers, even for the ids the server itself gave
(omlx answers 500: jundot/omlx#1997; ml-explore/mlx-lm#1375). A conversation
begun on another vendor, or a tool loop on such a server, failed on every
request after the first tool call. The refused request is now sent again
with nine-character ids (deterministic, call and result alike), and the
model sends them from then on.

Served by an OpenAI fake answering as Mistral's API does, streamed and whole."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.providers._call_ids import nine_char_call_id
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

NINE = re.compile(r"[A-Za-z0-9]{9}")
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class MistralFake(OpenAIFake):
    """Refuses any tool-call id in the history that is not nine letters and
    digits, with ``status`` (400: Mistral's API; 500: a Mistral template on omlx)."""

    def __init__(self, status: int = 400) -> None:
        super().__init__()
        self.status = status

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        for message in body.get("messages") or ():
            ids = [c.get("id") for c in message.get("tool_calls") or ()]
            if message.get("role") == "tool":
                ids.append(message.get("tool_call_id"))
            for call_id in ids:
                if not NINE.fullmatch(str(call_id)):
                    return FakeError(self.status, {
                        "object": "error", "message": f"Tool call id was {call_id} but must be "
                        "a-z, A-Z, 0-9, with a length of 9.", "type": "invalid_request_error",
                        "param": None, "code": "3280"})
        return super().validate(body)


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


def _model(url: str, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("mistral-large-latest", base_url=url, api_key="k", stream=stream,
                           settings=FAST)


def _ids(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        out += [c["id"] for c in message.get("tool_calls") or ()]
        if message["role"] == "tool":
            out.append(message["tool_call_id"])
    return out


@STREAMS
@pytest.mark.parametrize("call_id", ["toolu_01A09q90qw90lq917835lq9", "call_0fypS1hVX"])
async def test_another_vendors_history_goes_on_with_nine_character_ids(
        call_id: str, stream: bool) -> None:
    state = AgentState([
        Msg.user("Weather in Paris?"),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock(call_id, "18C, sunny", name="get_weather")]),
        Msg.assistant("It is 18C and sunny in Paris."),
    ])
    async with MistralFake() as fake:
        fake.add(FakeReply(text="Still sunny."), FakeReply(text="Still."))
        async with _model(fake.url, stream) as model:
            agent = ReActAgent("m", model, tools=[get_weather])
            assert (await agent.call("And now?", state=state)).text == "Still sunny."
            assert (await agent.call("And later?", state=state)).text == "Still."
    assert len(fake.requests) == 3  # refused once, then nine-character ids at once
    wire = nine_char_call_id(call_id)
    assert _ids(fake.bodies[1]) == [wire, wire] and NINE.fullmatch(wire)
    assert _ids(fake.bodies[2])[:2] == [wire, wire]


@pytest.mark.parametrize("status", [400, 500])
async def test_a_server_refusing_its_own_ids_is_answered_with_nine_character_ids(
        status: int) -> None:
    async with MistralFake(status) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"},
                                                id="chatcmpl-tool-5d3a1b9f0c2e4f6a8b7c")]),
                 FakeReply(text="It is 18C in Paris."))
        async with _model(fake.url, True) as model:
            reply = await ReActAgent("m", model, tools=[get_weather]).call("Weather in Paris?")
    assert reply.text == "It is 18C in Paris."
    assert len(fake.requests) == 3  # the refusal is not retried as a server fault
    ids = _ids(fake.bodies[2])
    assert len(ids) == 2 and ids[0] == ids[1] and NINE.fullmatch(ids[0])


def test_nine_character_ids_are_stable_and_distinct() -> None:
    assert nine_char_call_id("abcDEF123") == "abcDEF123"
    for call_id in ("call_PTLP8xhu3uwZk4l3nlnrrJha", "functions.get_weather:0", "", "é"):
        mapped = nine_char_call_id(call_id)
        assert NINE.fullmatch(mapped) and mapped == nine_char_call_id(call_id)
    assert nine_char_call_id("a_1") != nine_char_call_id("a_2")
