"""Vendor fault: OpenRouter's ``reasoning_details`` were not sent back.

OpenRouter returns a reasoning model's reasoning as ``reasoning_details``
(``reasoning.text`` items streamed in fragments keyed by ``index``, and a
``reasoning.encrypted`` item that holds Gemini 3's thought signature) and
asks for the list back on the assistant turn in later requests. Dropped, the
tool loop's second request is refused: 400 "Provider returned error" with
``metadata.raw`` "Gemini models require OpenRouter reasoning details to be
preserved in each request ... Function call is missing a thought_signature"
(microsoft/agent-framework#2947,
https://github.com/microsoft/agent-framework/issues/2947; open-webui/open-webui#19328;
LibreChat-AI/agents#37). The OpenAI-compatible adapter read ``reasoning``
and dropped the list. The items are put together now (by type and index,
text fields joined) and kept with the turn's thinking, and go back on it as
they came, streamed and whole, in the conversation's later calls too.

Served by an OpenRouter-like fake (the OpenAI fake with Gemini's rule behind
OpenRouter's envelope), through the public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import AgentState, BadRequestError, ReActAgent
from agentflow.providers._reasoning_details import DetailsMerger
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
REFUSED = ("Gemini models require OpenRouter reasoning details to be preserved in each "
           "request. Please refer to our docs: https://openrouter.ai/docs/guides/"
           "best-practices/reasoning-tokens#preserving-reasoning-blocks. Upstream error: "
           '{"error": {"code": 400, "message": "Function call is missing a thought_signature '
           'in functionCall parts.", "status": "INVALID_ARGUMENT"}}')
THOUGHT = "The user wants the weather; I should call the tool."


class OpenRouterGemini(OpenAIFake):
    """``google/gemini-3-*`` behind OpenRouter: a reply with tool calls carries
    ``reasoning_details`` (the thought text in fragments, then the encrypted
    signature); a history holding such a turn without its details is refused."""

    def __init__(self) -> None:
        super().__init__()
        self.issued: list[dict[str, Any]] = []

    def _details(self, reply: FakeReply) -> list[dict[str, Any]]:
        encrypted = {"type": "reasoning.encrypted", "data": f"enc-{len(self.issued)}",
                     "id": "tool_get_weather_1", "format": "google-gemini-v1", "index": 1}
        self.issued.append(encrypted)
        return [{"type": "reasoning.text", "text": THOUGHT, "format": "google-gemini-v1",
                 "index": 0}, encrypted]

    def message_json(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        message = super().message_json(reply, body)
        if reply.tool_calls:
            message["reasoning"] = THOUGHT
            message["reasoning_details"] = self._details(reply)
        return message

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().delta_frames(reply, body)
        if not reply.tool_calls:
            return frames
        text, encrypted = self._details(reply)
        cut = len(THOUGHT) // 2
        parts = [{**text, "text": THOUGHT[:cut]}, {"type": "reasoning.text", "index": 0,
                                                   "text": THOUGHT[cut:]}]
        thinking = [self.chunk(body, {"reasoning": p["text"], "reasoning_details": [p]})
                    for p in parts]
        signed = self.chunk(body, {"reasoning_details": [encrypted]})
        return [frames[0], *thinking, *frames[1:], signed]

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        for message in body.get("messages") or []:
            if message.get("role") == "assistant" and message.get("tool_calls"):
                given = message.get("reasoning_details") or []
                if not any(d in self.issued for d in given):
                    return FakeError(400, {"error": {
                        "message": "Provider returned error", "code": 400,
                        "metadata": {"raw": REFUSED, "provider_name": "Google AI Studio"}}})
        return super().check(request, body)


class City(BaseModel):
    name: str
    country: str


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def _model(fake: OpenAIFake, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("google/gemini-3-flash-preview", base_url=fake.url, api_key="k",
                           stream=stream, settings=FAST)


@STREAMS
async def test_the_details_go_back_with_their_turn(stream: bool) -> None:
    async with OpenRouterGemini() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        async with _model(fake, stream) as model:
            reply = await ReActAgent("a", model, tools=[get_weather]).call(
                "Where is the Louvre, and the weather there?", City)
    assert reply.output == City(name="Louvre", country="FR")
    turn = next(m for m in fake.bodies[1]["messages"] if m.get("tool_calls"))
    assert turn["reasoning_details"] == [
        {"type": "reasoning.text", "text": THOUGHT, "format": "google-gemini-v1", "index": 0},
        fake.issued[-1]]


async def test_a_conversation_keeps_them_across_calls() -> None:
    state = AgentState()
    async with OpenRouterGemini() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny in Paris."), FakeReply(text="You are welcome."))
        async with _model(fake, True) as model:
            agent = ReActAgent("a", model, tools=[get_weather])
            await agent.call("Weather in Paris?", state=state)
            restored = AgentState.from_json(state.to_json())  # persisted, then read back
            assert (await agent.call("Thanks!", state=restored)).text == "You are welcome."
    assert len(fake.requests) == 3


async def test_the_refusal_of_a_turn_without_them_is_typed() -> None:
    state = AgentState()
    async with OpenRouterGemini() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny."))
        async with _model(fake, False) as model:
            await ReActAgent("a", model, tools=[get_weather]).call("Weather?", state=state)
        fake.issued.clear()  # a history the server no longer recognises
        async with _model(fake, False) as model:
            with pytest.raises(BadRequestError) as caught:
                await ReActAgent("a", model, tools=[get_weather]).call("Again?", state=state)
    assert "reasoning details to be preserved" in str(caught.value)


def test_fragments_are_put_together_by_type_and_index() -> None:
    merger = DetailsMerger()
    merger.add([{"type": "reasoning.text", "text": "Let ", "index": 0, "signature": None}])
    merger.add([{"type": "reasoning.text", "text": "me see.", "index": 0,
                 "signature": "sig"}, "noise"])
    merger.add([{"type": "reasoning.encrypted", "data": "abc", "index": 1}])
    merger.add(orjson.loads(b'[{"type": "reasoning.summary", "summary": "S"}]'))
    assert merger.items() == [
        {"type": "reasoning.text", "text": "Let me see.", "index": 0, "signature": "sig"},
        {"type": "reasoning.encrypted", "data": "abc", "index": 1},
        {"type": "reasoning.summary", "summary": "S"}]
    assert not merger.changed
