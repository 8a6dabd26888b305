"""Vendor fault: llama.cpp's server reports a stream failure on an ``error:`` line.

``llama-server`` builds through 2025 wrote a failure after the HTTP 200 with
a field of their own, not ``data:`` nor ``event:``, then ``[DONE]``::

    error: {"code":400,"message":"the request exceeds the available context size,
            try increasing it","type":"exceed_context_size_error",...}

    data: [DONE]

(coddy-project/coddy-agent#106, https://github.com/coddy-project/coddy-agent/pull/106:
"report mid-stream failures as a non-standard SSE field at HTTP 200"; the
server code: ``server_sent_event(sink, "error", error_data)``;
ggml-org/llama.cpp#16486 on the 200 itself). SSE framing ignores a field it
does not know, so the server's message was lost: the reply was "empty" (no
choice, no content) or "ended ([DONE]) without a finish_reason", a
retryable connection error that sent an over-long prompt again and never
said why. The line is now read as ``event: error``: the server's own error,
typed by its code (a context overflow is a ``ContextLengthError``, never
retried; a 500 a ``ServerError`` that ``stream_retries`` may send again).

Served by the OpenAI-compatible fake (``extra["error_field"]``), streamed,
through the public API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    Complete,
    ContextLengthError,
    Event,
    Msg,
    ProviderError,
    ReActAgent,
    ServerError,
    TruncatedStreamError,
)
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

CONTEXT = {"code": 400, "message": "the request exceeds the available context size, try "
           "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5210,
           "n_ctx": 4096}
SERVER = {"code": 500, "message": "Failed to parse input at pos 12", "type": "server_error"}


class City(BaseModel):
    name: str
    country: str


async def _drain(events: AsyncIterator[Event]) -> Event:
    """The last event of a streamed call."""
    last: Event | None = None
    async for event in events:
        last = event
    assert last is not None
    return last


def _model(fake: OpenAIFake) -> OpenAIChatModel:
    return OpenAIChatModel("qwen2.5-7b-instruct", base_url=fake.url, api_key="k",
                           stream=True, settings=FAST)


@pytest.mark.parametrize("after", [0, 3], ids=["before-content", "after-content"])
async def test_an_overflow_is_a_context_length_error(after: int) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name": "Louvre", "country": "FR"}', chunk_size=6,
                           extra={"error_field": CONTEXT, "error_after": after}))
        async with _model(fake) as model:
            with pytest.raises(ContextLengthError) as caught:
                await _drain(ReActAgent("a", model, stream_retries=2).stream(
                    "Where is the Louvre?", City, state=state))
    error = caught.value
    assert "exceeds the available context size" in str(error)
    assert "5210 tokens > 4096" in str(error)
    assert not error.retryable and len(fake.requests) == 1  # never sent again
    assert state.to_json() == before


@pytest.mark.parametrize("after", [0, 3], ids=["before-content", "after-content"])
async def test_a_server_error_is_typed_and_sent_again_when_allowed(after: int) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name": "Lou', chunk_size=4,
                           extra={"error_field": SERVER, "error_after": after}),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        async with _model(fake) as model:
            done = await _drain(ReActAgent("a", model, stream_retries=1).stream(
                "Where is the Louvre?", City))
    assert isinstance(done, Complete) and done.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2


async def test_without_retries_the_servers_message_is_raised() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Paris", extra={"error_field": SERVER, "error_after": 2}))
        async with _model(fake) as model:
            with pytest.raises(ProviderError) as caught:
                await _drain(ReActAgent("a", model).stream("Capital of France?"))
    error: Any = caught.value
    assert isinstance(error, ServerError) and not isinstance(error, TruncatedStreamError)
    assert "Failed to parse input at pos 12" in str(error) and error.partial
