"""Vendor fault: an HTTP 200 event stream that ends with no event.

A proxy or gateway that drops the upstream connection, or a server that
fails after its status line, can answer a streamed request with a 200
``text/event-stream`` (Ollama: ``application/x-ndjson``) whose chunked body
ends at once, or after keep-alive comments only. Nothing of a reply has
reached the caller, yet the stream counted as started: the reader's "empty
reply" / "ended before its terminal marker" was ``partial``, sent again only
under ``ReActAgent(stream_retries=n)``, where the same hiccup as an empty 200
body is an ``UnexpectedReplyError`` the HTTP layer retries. Now the HTTP layer
reads a stream up to its first event before it hands it on: a stream with
none is that same typed, retried fault (its message says it had no event).

Served by each vendor's fake on 127.0.0.1, its stream's frames replaced by
nothing or by keep-alives (``Eventless``), through the public API."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import pytest

from agentflow import Complete, ReActAgent, UnexpectedReplyError
from agentflow.model import ChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.provider_scenarios import FAST
from tests.vendor_streams_support import VENDORS

FRAMES = {
    "nothing": [],
    "keep-alives": [b": keep-alive\n\n", b"\n", b": ping\n\n"],  # Ollama: blank lines only
    "a byte-order mark": [b"\xef\xbb\xbf", b"\n\n"],
}


def eventless(fake_type: type[FakeServer]) -> FakeServer:
    """``fake_type`` whose stream, for a reply with ``extra["frames"]``, is
    those frames only (the stream's status, headers and chunked framing are
    the vendor's own)."""

    class Eventless(fake_type):  # type: ignore[misc, valid-type]
        def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
            if "frames" in reply.extra:
                frames: list[bytes] = reply.extra["frames"]
                return [f for f in frames if self.stream_content_type() != "application/x-ndjson"
                        or not f.startswith(b":")]
            return super().render_events(reply, body)  # type: ignore[no-any-return]

    return Eventless()


async def answer(model: ChatModel) -> str:
    async with aclosing(model) as model:  # type: ignore[type-var]
        events = [e async for e in ReActAgent("r", model).stream("Capital of France?")]
    assert isinstance(events[-1], Complete)
    return events[-1].message.text


@pytest.mark.parametrize("frames", sorted(FRAMES))
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_stream_with_no_event_is_retried_without_stream_retries(
        vendor: str, frames: str) -> None:
    fake_type, make = VENDORS[vendor]
    async with eventless(fake_type) as fake:
        fake.add(FakeReply(extra={"frames": FRAMES[frames]}), FakeReply(text="Paris."))
        assert await answer(make(fake.url)) == "Paris."
    assert fake.transports == ["stream", "stream"]


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_retries_spent_raise_the_typed_fault_that_says_so(vendor: str) -> None:
    fake_type, make = VENDORS[vendor]
    async with eventless(fake_type) as fake:
        fake.default = FakeReply(extra={"frames": FRAMES["keep-alives"]})
        with pytest.raises(UnexpectedReplyError) as info:
            await answer(make(fake.url))
    error = info.value
    assert len(fake.requests) == FAST.max_retries + 1
    assert error.retryable and not error.partial and error.status == 200
    assert "ended with no event" in str(error)
    assert error.content_type.startswith(fake.stream_content_type())
    if vendor != "ollama":  # (its keep-alives are blank lines: nothing to show)
        assert "keep-alive" in error.excerpt and "comments" in str(error)


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_keep_alives_before_the_first_event_are_no_fault(vendor: str) -> None:
    """The first event read to tell such a stream is read again by the
    adapter: nothing of the reply is lost, keep-alives before it or not."""
    fake_type, make = VENDORS[vendor]

    class KeepAlives(fake_type):  # type: ignore[misc, valid-type]
        def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
            alive = b"\n" if self.stream_content_type() == "application/x-ndjson" else b": .\n\n"
            return [alive, alive, *super().render_events(reply, body)]

    async with KeepAlives() as fake:
        fake.add(FakeReply(text="The capital of France is Paris.", chunk_size=3))
        assert await answer(make(fake.url)) == "The capital of France is Paris."
    assert len(fake.requests) == 1
