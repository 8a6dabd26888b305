"""Vendor fault: a Gemini stream answered as one JSON array of its events.

``streamGenerateContent`` without ``alt=sse`` answers with the whole stream
as a JSON array of ``GenerateContentResponse`` objects, its default form
(nyo16/nous#26: "Gemini's streamGenerateContent endpoint returns a JSON array
by default, not SSE"); a gateway or proxy that drops the query string gives
that back to a client that asked for SSE. The adapter reads an
``application/json`` answer to a stream as one reply, and took the array's
first element only: the reply lost every event after the first (its text,
its tool calls, its usage and finish reason) and completed all the same.

Served by the Gemini fake behind such a gateway, through the public API."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolStrategy
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.gemini import GeminiFake
from tests.provider_scenarios import FAST


class QueryDroppingGateway(GeminiFake):
    """Gemini behind a gateway that drops ``?alt=sse``: a stream request gets
    the stream as one JSON array under ``application/json``."""

    def __init__(self) -> None:
        super().__init__()
        self.arrays = 0

    def is_stream(self, request: web.Request, body: Any) -> bool:
        self._array = request.path.endswith(":streamGenerateContent")
        return False

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        if not self._array:
            return super().render_json(reply, body)
        self.arrays += 1
        return list(self._events(reply, body))


class Ticket(BaseModel):
    id: int
    title: str


async def _complete(agent: ReActAgent, output: Any = None) -> Complete[Any]:
    events = [e async for e in agent.stream("the ticket", output)]
    assert isinstance(events[-1], Complete)
    return events[-1]


async def test_every_event_of_the_array_is_read() -> None:
    text = "Ticket 7 is about the login page failing on Safari."
    async with QueryDroppingGateway() as fake:
        fake.add(FakeReply(text=text, chunk_size=6, usage=(21, 13)))
        async with GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            done = await _complete(ReActAgent("r", model))
    assert fake.arrays == 1  # the array form was served, not SSE
    assert done.message.text == text
    assert (done.usage.input_tokens, done.usage.output_tokens) == (21, 13)
    assert done.finish_reason == "stop"


async def test_a_tool_call_after_the_first_event_is_the_output() -> None:
    data = {"id": 7, "title": "login page"}
    async with QueryDroppingGateway() as fake:
        fake.add(FakeReply(text="Reading the ticket first.", chunk_size=5,
                           tool_calls=[FakeCall("generate_response", data)]))
        async with GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            agent = ReActAgent("r", model, output=OutputConfig(strategy=ToolStrategy()))
            done = await _complete(agent, Ticket)
    assert done.output == Ticket(**data)
    assert len(fake.requests) == 1
