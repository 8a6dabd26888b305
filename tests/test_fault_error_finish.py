"""Vendor fault: a reply whose finish reason says the generation failed.

DeepSeek ends a reply cut by its own resource shortage with finish reason
``insufficient_system_resource`` (api-docs.deepseek.com, "Create Chat
Completion"), GLM with ``network_error``, Gemini a function call it could not
form with ``MALFORMED_FUNCTION_CALL`` and empty content (googleapis/python-genai#1836,
NousResearch/hermes-agent#83869), all over HTTP 200. The text such a reply
carries, empty or cut mid-sentence, was returned as a completed answer. A
call without an output type now ends with a typed, retryable
``ServerError`` and leaves its state as it was; a call with an output type
asks the model again, as before; ``generate`` still reports the raw finish
reason.

Served by the DeepSeek, GLM and Gemini fakes, streamed and whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import AgentState, Complete, Msg, ReActAgent, ServerError, generate
from agentflow.model import ChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.glm import GLMChatModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[Callable[[], FakeServer], Callable[[str, bool], ChatModel], str]] = {
    "deepseek": (DeepSeekFake, lambda url, s: DeepSeekChatModel(
        "deepseek-chat", base_url=url, api_key="k", stream=s, settings=FAST),
        "insufficient_system_resource"),
    "glm": (GLMFake, lambda url, s: GLMChatModel(
        "glm-4.6", base_url=url, api_key="k", stream=s, settings=FAST), "network_error"),
    "gemini": (GeminiFake, lambda url, s: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=s, settings=FAST),
        "MALFORMED_FUNCTION_CALL"),
}
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class City(BaseModel):
    name: str
    country: str


def weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "sunny"


async def _call(agent: ReActAgent, output: Any, state: AgentState, stream: bool) -> Msg[Any]:
    """The call's reply, from ``call()`` or from a streamed call's ``Complete``."""
    if not stream:
        return await agent.call("Where is the Louvre?", output, state=state)
    events = [e async for e in agent.stream("Where is the Louvre?", output, state=state)]
    assert isinstance(events[-1], Complete)
    return events[-1].message


@STREAMS
@pytest.mark.parametrize("vendor", sorted(VENDORS))
@pytest.mark.parametrize("text", ["", "The Louvre is in Pa"])
async def test_a_failed_generation_is_a_typed_error_not_an_answer(vendor: str, stream: bool,
                                                                  text: str) -> None:
    make_fake, make_model, raw = VENDORS[vendor]
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with make_fake() as fake:
        fake.add(FakeReply(text=text, finish_reason=raw), FakeReply(text=text, finish_reason=raw))
        model = make_model(fake.url, stream)
        try:
            with pytest.raises(ServerError) as info:
                await _call(ReActAgent("e", model, tools=[weather]), None, state, stream)
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert info.value.retryable and info.value.vendor == vendor
    assert state.to_json() == before  # nothing of the failed call is kept
    assert reply.finish_reason == "error"  # the low level says so


@STREAMS
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_an_output_call_asks_again_after_a_failed_generation(vendor: str,
                                                                   stream: bool) -> None:
    make_fake, make_model, raw = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(FakeReply(text="", finish_reason=raw), FakeReply(
            tool_calls=[FakeCall("generate_response", {"name": "Louvre", "country": "FR"})]))
        model = make_model(fake.url, stream)
        try:
            done = await _call(ReActAgent("e", model, tools=[weather]), City, AgentState(),
                               stream)
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert done.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2


@STREAMS
async def test_a_reply_cut_at_the_token_limit_is_still_a_text_answer(stream: bool) -> None:
    async with DeepSeekFake() as fake:
        fake.add(FakeReply(text="The Louvre is in", finish_reason="length"))
        model = DeepSeekChatModel("deepseek-chat", base_url=fake.url, api_key="k",
                                  stream=stream, settings=FAST)
        try:
            done = await _call(ReActAgent("e", model), None, AgentState(), stream)
        finally:
            await model.aclose()
    assert done.text == "The Louvre is in"
