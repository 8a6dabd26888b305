"""Vendor fault: Gemini ends a reply with ``OTHER`` and nothing in it.

Gemini answers some requests with a candidate that holds no content and the
finish reason ``OTHER`` (``{"finishReason": "OTHER", "index": 0}``,
"frequently resulting in null response", google/generative-ai-docs#235).
A text call returned the empty string as a completed answer. With no text
and no call, such an end is the vendor's failure now: a text call ends with
a typed, retryable ``ServerError`` and leaves its state as it was; a call
with an output type asks again. ``OTHER`` after some text is still that
text, with its finish reason.

Served by the Gemini fake, whole and streamed, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import AgentState, Complete, Msg, ReActAgent, ServerError
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeReply, sse
from tests.fakes.gemini import GeminiFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
EMPTY = {"candidates": [{"finishReason": "OTHER", "index": 0}],
         "usageMetadata": {"promptTokenCount": 171, "totalTokenCount": 171}}


class EmptyOther(GeminiFake):
    """Answers ``EMPTY`` for a reply whose ``extra`` says ``empty``."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return EMPTY if reply.extra.get("empty") else super().render_json(reply, body)

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [sse(EMPTY)] if reply.extra.get("empty") else super().render_events(reply, body)


class City(BaseModel):
    name: str
    country: str


def _model(fake: GeminiFake, stream: bool) -> GeminiChatModel:
    return GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k", stream=stream,
                           settings=FAST)


@STREAMS
async def test_an_empty_unexplained_end_is_a_typed_error(stream: bool) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with EmptyOther() as fake:
        fake.add(FakeReply(extra={"empty": True}))
        model = _model(fake, stream)
        try:
            with pytest.raises(ServerError) as info:
                await ReActAgent("g", model).call("Where is the Louvre?", state=state)
        finally:
            await model.aclose()
    assert info.value.retryable
    assert state.to_json() == before


@STREAMS
async def test_an_output_call_asks_again(stream: bool) -> None:
    async with EmptyOther() as fake:
        fake.add(FakeReply(extra={"empty": True}),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        model = _model(fake, stream)
        try:
            reply = await ReActAgent("g", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2


@STREAMS
async def test_text_before_an_unexplained_end_is_kept(stream: bool) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text="The Louvre is in Paris.", finish_reason="OTHER"))
        model = _model(fake, stream)
        try:
            events = [e async for e in ReActAgent("g", model).stream("Where is the Louvre?")]
        finally:
            await model.aclose()
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "The Louvre is in Paris."
    assert done.finish_reason == "other"
