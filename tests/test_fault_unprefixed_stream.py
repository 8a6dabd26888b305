"""Vendor fault: a stream whose chunks come without ``data:``, or under
another content type.

Some OpenAI-compatible servers and gateways stream ``chat.completion.chunk``
objects one a line with no ``data:`` before them (xinference before its fix,
xorbitsai/inference#523, https://github.com/xorbitsai/inference/issues/523;
Helicone's AI gateway, Helicone/ai-gateway#137), as NDJSON, or send proper
events under ``Content-Type: text/plain`` or ``application/json``
(openclaw/openclaw#97474). SSE framing ignores a line of no known field, so
every chunk was dropped and the stream ended in a "truncated" error; a
streamed request answered as ``text/plain`` lost its body to the transport's
whole-body check before the events were read; NDJSON under a JSON type was
refused as "not JSON". Each is read now: lines of bare JSON are the stream's
chunks (an error object among them is the server's error, typed), and a
body read whole is parsed for events or NDJSON whatever its content type.

Served by the OpenAI fake on 127.0.0.1, streamed and whole, through the
public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import Complete, ReActAgent, ServerError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Shaped(OpenAIFake):
    """The OpenAI fake whose stream is NDJSON (``bare``) or proper SSE
    (``sse``), under ``content_type``."""

    def __init__(self, shape: str, content_type: str) -> None:
        super().__init__()
        self.shape = shape
        self.content_type = content_type

    def stream_content_type(self) -> str:
        return self.content_type

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if self.shape == "sse":
            return super().render_events(reply, body)
        frames = self.delta_frames(reply, body) + self.tail_frames(reply, body)
        lines = [orjson.dumps(f) + b"\n" for f in frames]
        if "stream_error" in reply.extra:
            lines = [*lines[:2], orjson.dumps({"error": reply.extra["stream_error"]}) + b"\n"]
        return lines


class City(BaseModel):
    name: str
    country: str


SHAPES = pytest.mark.parametrize(("shape", "content_type"), [
    ("bare", "text/event-stream"), ("bare", "application/x-ndjson"),
    ("bare", "application/json"), ("sse", "text/plain"), ("sse", "application/json"),
])


@SHAPES
async def test_the_chunks_are_read(shape: str, content_type: str) -> None:
    async with Shaped(shape, content_type) as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "FR"}'))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("a", model).stream("Where is the Louvre?", City)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == City(name="Paris", country="FR")
    assert [b.get("stream") for b in fake.bodies] == [True]


async def test_an_error_line_among_them_is_the_servers_error() -> None:
    async with Shaped("bare", "text/event-stream") as fake:
        fake.add(*[FakeReply(text="Paris is in France.", extra={"stream_error": {
            "message": "model worker crashed", "type": "server_error"}})] * 4)
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(ServerError) as caught:
                async for _ in ReActAgent("a", model).stream("Where is the Louvre?"):
                    pass
    assert "model worker crashed" in str(caught.value)
