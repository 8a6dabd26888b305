"""Vendor fault: a stream whose server holds the connection after ``[DONE]``.

An OpenAI-compatible gateway can deliver the whole reply, ``data: [DONE]``
included, and then linger before it ends the response body
(earendil-works/pi#7954: "A turn can hang forever after the full answer is
delivered ... any OpenAI-compatible SSE gateway can deliver its content and
then linger before closing the connection"; seen with xiaomi mimo-v2.5-pro).
The official SDK stops reading at ``[DONE]`` (openai-python
``AsyncStream.__stream__``: ``if sse.data.startswith("[DONE]"): break``);
agentflow read on to the end of the body, so a whole reply waited for
``read_timeout`` (300 s by default) and then failed as a
``ProviderTimeoutError``: the answer was lost. Anthropic's ``message_stop``
and Ollama's ``done`` line already ended the reading.

Served by an OpenAI fake that holds each stream open after its last frame
until the test lets it go, through the public API."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class LingeringGateway(OpenAIFake):
    """Sends every frame of a stream, ``[DONE]`` included, then holds the
    response open until ``let_go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.let_go = asyncio.Event()
        self.held = 0

    async def _stream(self, request: web.Request, reply: FakeReply, body: Any,
                      headers: Any = None, content_type: str | None = None
                      ) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers=headers)
        response.content_type = content_type or self.stream_content_type()
        await response.prepare(request)
        for frame in self.render_events(reply, body):
            await response.write(frame)
        self.held += 1
        await self.let_go.wait()
        await response.write_eof()
        return response


class Ticket(BaseModel):
    id: int
    title: str


async def _complete(fake: LingeringGateway, schema: Any = None, **kwargs: Any) -> Complete[Any]:
    try:
        async with OpenAIChatModel("mimo-v2.5-pro", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            events = [e async for e in ReActAgent("g", model, **kwargs).stream("ticket", schema)]
    finally:
        fake.let_go.set()
    assert isinstance(events[-1], Complete)
    return events[-1]


async def test_a_reply_ends_at_done_while_the_server_holds_on() -> None:
    async with LingeringGateway() as fake:
        fake.add(FakeReply(text="Ticket 7 is about the login page.", chunk_size=5))
        done = await _complete(fake)
        assert fake.held == 1
    assert done.message.text == "Ticket 7 is about the login page."
    assert done.usage.known


async def test_a_tool_loop_goes_on_after_each_done() -> None:
    data = {"id": 7, "title": "login page"}
    async with LingeringGateway() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"ticket": 7})]),
                 FakeReply(tool_calls=[FakeCall("generate_response", data)]))

        def lookup(ticket: int) -> str:
            """Read a ticket."""
            return f"ticket {ticket}: login page fails"

        done = await _complete(fake, Ticket, tools=[lookup],
                               output=OutputConfig(strategy=ToolStrategy()))
    assert done.output == Ticket(**data)
    assert fake.held == 2
