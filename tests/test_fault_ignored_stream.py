"""Vendor fault: a server that ignores ``stream: true`` and answers whole.

Gateways and OpenAI- or Anthropic-compatible servers that cannot stream (or
not with tools) answer a streamed request with one ``application/json``
reply, as if ``stream`` had been false. The OpenAI-style adapters read such
a reply whole; the Anthropic, Gemini and Ollama adapters handed it to their
stream parser, which found no event in it ("empty reply", or "ended before
its terminal marker"). Now every adapter reads it as the one reply it is
(taking the HTTP layer's parse of it), and the HTTP layer's read of it is
bounded as any reply's: the read timeout (a ``ProviderTimeoutError``, retried)
and the request's deadline (``DeadlineExceededError``).

Served by each vendor's fake on 127.0.0.1 answering whole whatever the
request asked for; the stalled body by a raw server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web

from agentflow import (
    Complete,
    DeadlineExceededError,
    ProviderTimeoutError,
    ReActAgent,
    ToolUse,
)
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.provider_scenarios import FAST
from tests.test_http import serve
from tests.vendor_streams_support import VENDORS


def ignoring_stream(fake_type: type[FakeServer]) -> FakeServer:
    """``fake_type`` answering every request whole (``application/json``)."""

    class IgnoresStream(fake_type):  # type: ignore[misc, valid-type]
        def is_stream(self, request: web.Request, body: Any) -> bool:
            return False

    return IgnoresStream()


def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: 18C"


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_whole_reply_to_a_streamed_request_is_read_as_one(vendor: str) -> None:
    fake_type, make = VENDORS[vendor]
    async with ignoring_stream(fake_type) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("weather", {"city": "Paris"})]),
                 FakeReply(text="18C in Paris."))
        async with aclosing(make(fake.url)) as model:  # type: ignore[type-var]
            events = [e async for e in ReActAgent("a", model, tools=[weather]).stream(
                "Weather in Paris?")]
    assert [e.name for e in events if isinstance(e, ToolUse)] == ["weather"]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "18C in Paris."
    assert fake.transports == ["whole", "whole"] and len(fake.requests) == 2
    assert all(b.get("stream") is not False for b in fake.bodies)  # streams were asked for


def stalled(started: list[int], release: asyncio.Event) -> Callable[..., Any]:
    """A handler that answers 200 ``application/json``, sends the start of
    an OpenAI reply, and then nothing until ``release`` is set."""

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        started.append(1)
        response = web.StreamResponse(headers={"content-type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"id": "c1", "object": "chat.completion", "choices": [')
        await release.wait()
        return response

    return handle


async def ask(url: str, **settings: Any) -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url=f"{url}/v1", api_key="k", stream=True,
                            settings=replace(FAST, **settings))
    async with aclosing(model) as model:  # type: ignore[type-var]
        await ReActAgent("a", model).call("hi")


async def test_the_read_timeout_bounds_a_whole_reply_to_a_streamed_request() -> None:
    started: list[int] = []
    release = asyncio.Event()
    async with serve(stalled(started, release)) as url:
        try:
            with pytest.raises(ProviderTimeoutError, match=r"no data for 0\.2s"):
                await ask(url, read_timeout=0.2, deadline=None, max_retries=1)
        finally:
            release.set()
    assert len(started) == 2  # timed out before the reply was taken: retried


async def test_the_deadline_bounds_a_whole_reply_to_a_streamed_request() -> None:
    started: list[int] = []
    release = asyncio.Event()
    async with serve(stalled(started, release)) as url:
        try:
            with pytest.raises(DeadlineExceededError):
                await ask(url, read_timeout=60, deadline=0.3)
        finally:
            release.set()
    assert len(started) == 1
