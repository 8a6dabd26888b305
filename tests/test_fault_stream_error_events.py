"""Vendor fault: an error event inside a stream, after the HTTP 200.

Anthropic answers 200 and then ``event: error`` with ``overloaded_error``
("errors can occur after returning a 200 response", docs.anthropic.com,
"Errors"; anthropics/anthropic-sdk-python#1205); OpenAI-style servers and
routers send ``data: {"error": ...}``, Gemini a 503 ``UNAVAILABLE`` object,
Ollama an ``{"error": ...}`` line. The HTTP layer cannot retry these (the
200 was taken), and they were raised as if they had been HTTP errors
(``partial=False``), so ``ReActAgent(stream_retries=n)``, the knob for a
stream that broke, never sent such a request again. They are now
``partial``: typed as before, retried when the caller allows it, before or
after content; the state is untouched either way. An error that is the
stream's first event (nothing of the stream reached the caller) is the
refusal it stands for, retried by the HTTP layer under its retry policy as
an HTTP 429 or 5xx is (``_sending._stream_head``).

Served by the Anthropic, OpenAI, Gemini and Ollama fakes, streamed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from agentflow import (
    AgentState,
    AttemptDiscarded,
    Complete,
    Msg,
    OverloadedError,
    ProviderError,
    ReActAgent,
    ServerError,
)
from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

Vendor = tuple[Callable[[], FakeServer], Callable[..., ChatModel], str, Any,
               type[ProviderError]]
VENDORS: dict[str, Vendor] = {
    "anthropic": (AnthropicFake, lambda url, settings=FAST: AnthropicChatModel(
        "claude-sonnet-4-5", base_url=url, api_key="k", stream=True, settings=settings),
        "error", {"type": "overloaded_error", "message": "Overloaded"}, OverloadedError),
    "openai": (OpenAIFake, lambda url, settings=FAST: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=True, settings=settings),
        "stream_error", {"message": "upstream failed", "type": "server_error"}, ServerError),
    "gemini": (GeminiFake, lambda url, settings=FAST: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=True, settings=settings),
        "error", {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"},
        OverloadedError),
    "ollama": (OllamaFake, lambda url, settings=FAST: OllamaChatModel(
        "llama3.2", base_url=url, stream=True, settings=settings),
        "error", "an error was encountered while running the model: unexpected EOF",
        ServerError),
}
AFTER = pytest.mark.parametrize("after", [0, 3], ids=["first", "mid"])


def broken(vendor: str, after: int) -> FakeReply:
    _, _, key, error, _ = VENDORS[vendor]
    return FakeReply(text="The answer is forty", chunk_size=3,
                     extra={key: error, "error_after": after})


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_an_error_event_after_the_first_is_a_typed_partial_error(vendor: str) -> None:
    make_fake, make_model, _, _, kind = VENDORS[vendor]
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    async with make_fake() as fake:
        fake.add(broken(vendor, 3))
        model = make_model(fake.url)
        try:
            with pytest.raises(kind) as info:
                async for _ in ReActAgent("s", model).stream("hi", state=state):
                    pass
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert info.value.partial and info.value.retryable
    assert state.to_json() == snapshot
    assert len(fake.requests) == 1  # stream_retries=0: never sent again unasked


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_an_error_as_the_first_event_is_retried_as_a_refused_request(vendor: str) -> None:
    """A 429 or an overload the server met after its 200, sent as the
    stream's first event: nothing of the stream had reached the caller, yet
    it was raised ``partial`` and never sent again (``stream_retries=0``),
    where the same refusal as an HTTP status is retried. Now it is the
    refusal (not ``partial``), retried by the HTTP layer's policy."""
    make_fake, make_model, _, _, kind = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(broken(vendor, 0), FakeReply(text="The answer is forty-two."))
        model = make_model(fake.url)
        try:
            events = [e async for e in ReActAgent("s", model).stream("hi")]
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "The answer is forty-two."
    assert len(fake.requests) == 2 and not any(isinstance(e, AttemptDiscarded) for e in events)
    async with make_fake() as fake:  # no retries left: the refusal, typed, not partial
        fake.add(broken(vendor, 0))
        model = make_model(fake.url, replace(FAST, max_retries=0))
        try:
            with pytest.raises(kind) as info:
                async for _ in ReActAgent("s", model).stream("hi"):
                    pass
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert not info.value.partial and info.value.retryable and len(fake.requests) == 1


@AFTER
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_stream_retries_send_it_again(vendor: str, after: int) -> None:
    make_fake, make_model, _, _, _ = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(broken(vendor, after), FakeReply(text="The answer is forty-two."))
        model = make_model(fake.url)
        try:
            events = [e async for e in ReActAgent("s", model, stream_retries=1).stream("hi")]
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "The answer is forty-two."
    assert len(fake.requests) == 2
    discarded = [e for e in events if isinstance(e, AttemptDiscarded)]
    assert len(discarded) == (1 if after else 0)  # void text is announced as void
