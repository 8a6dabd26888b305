"""Vendor fault: ``data: null`` events between the chunks of a stream.

Some OpenAI-compatible upstreams put an event whose data is JSON ``null``
between the ``chat.completion.chunk`` events of an otherwise valid stream
(https://github.com/earendil-works/pi/pull/2466: "an OpenAI-compatible
upstream that occasionally inserted a null chunk into the SSE stream").
The reply failed as a malformed stream (``ProviderConnectionError``) and its
text and output were lost. Such an event carries nothing and is skipped; a
whole reply that is ``null`` is still no reply.

Served by an OpenAI-style fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Complete, NativeStrategy, OutputConfig, ReActAgent
from agentflow.errors import ProviderError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Ticket(BaseModel):
    id: int
    title: str


class NullEvents(OpenAIFake):
    """Sends ``data: null`` after every other event of a stream, and a whole
    reply of ``null`` when ``extra["null_reply"]`` is set."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = super().render_events(reply, body)
        return [part for frame in frames for part in (frame, b"data: null\n\n")]

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return None if reply.extra.get("null_reply") else super().render_json(reply, body)


async def test_null_events_in_a_stream_are_skipped() -> None:
    async with NullEvents() as fake:
        fake.add(FakeReply(text='{"id": 7, "title": "login"}'))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("t", model, output=OutputConfig(strategy=NativeStrategy()))
            events = [e async for e in agent.stream("the ticket", Ticket)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Ticket(id=7, title="login")
    assert len(fake.requests) == 1


async def test_a_text_stream_with_null_events_is_read_whole() -> None:
    async with NullEvents() as fake:
        fake.add(FakeReply(text="Paris is the capital of France."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("t", model).stream("Capital of France?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Paris is the capital of France."


async def test_a_null_whole_reply_is_still_an_error() -> None:
    async with NullEvents() as fake:
        fake.default = FakeReply(extra={"null_reply": True})
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=False,
                                   settings=FAST) as model:
            with pytest.raises(ProviderError):
                await ReActAgent("t", model).call("Capital of France?")
