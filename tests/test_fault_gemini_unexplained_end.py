"""Vendor fault: Gemini ends a reply with ``OTHER`` (or ``STOP``) and nothing in it.

Gemini answers some requests with a candidate that holds no content and the
finish reason ``OTHER`` (``{"finishReason": "OTHER", "index": 0}``,
"frequently resulting in null response", google/generative-ai-docs#235).
A text call returned the empty string as a completed answer. With no text
and no call, such an end is the vendor's failure now: a text call ends with
a typed, retryable ``ServerError`` and leaves its state as it was; a call
with an output type asks again. ``OTHER`` after some text is still that
text, with its finish reason.

``STOP`` on a candidate holding only ``{"role": "model"}`` (no parts: no
text, no call, no thought; BerriAI/litellm#24442 on gemini-2.5-flash-lite,
google-gemini/deprecated-generative-ai-python#744 on gemini-2.5-pro: "rerunning
the same prompt multiple times might eventually return the expected output")
is the same failure: it was returned as an empty, completed answer.

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
EMPTY_STOP = {"candidates": [{"content": {"role": "model"}, "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 3130, "totalTokenCount": 3130,
                                "promptTokensDetails": [{"modality": "TEXT",
                                                         "tokenCount": 3130}]},
              "modelVersion": "gemini-2.5-flash-lite", "responseId": "8ZfBaYu9LarVz7IPlJG7gQU"}
ENDS = pytest.mark.parametrize("empty", [EMPTY, EMPTY_STOP], ids=["other", "stop"])


class EmptyOther(GeminiFake):
    """Answers ``extra["empty"]`` (a body) for a reply that has one."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra.get("empty") or super().render_json(reply, body)

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        empty = reply.extra.get("empty")
        return [sse(empty)] if empty else super().render_events(reply, body)


class City(BaseModel):
    name: str
    country: str


def _model(fake: GeminiFake, stream: bool) -> GeminiChatModel:
    return GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k", stream=stream,
                           settings=FAST)


@STREAMS
@ENDS
async def test_an_empty_unexplained_end_is_a_typed_error(stream: bool,
                                                        empty: dict[str, Any]) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with EmptyOther() as fake:
        fake.add(FakeReply(extra={"empty": empty}))
        model = _model(fake, stream)
        try:
            with pytest.raises(ServerError) as info:
                await ReActAgent("g", model).call("Where is the Louvre?", state=state)
        finally:
            await model.aclose()
    assert info.value.retryable
    assert state.to_json() == before


@STREAMS
@ENDS
async def test_an_output_call_asks_again(stream: bool, empty: dict[str, Any]) -> None:
    async with EmptyOther() as fake:
        fake.add(FakeReply(extra={"empty": empty}),
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


@STREAMS
async def test_a_stop_after_thoughts_alone_is_still_read(stream: bool) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(thinking="The Louvre is in Paris.", finish_reason="STOP"))
        model = GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                stream=stream, settings=FAST, include_thoughts=True)
        try:
            events = [e async for e in ReActAgent("g", model).stream("Where is the Louvre?")]
        finally:
            await model.aclose()
    done = events[-1]
    assert isinstance(done, Complete) and done.finish_reason == "stop"
