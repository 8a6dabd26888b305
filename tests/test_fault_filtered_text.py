"""Vendor fault: a text call's reply stopped by the vendor's filter or the
model's refusal.

OpenAI ends such a reply with finish reason ``content_filter`` (the chat
completions reference), Gemini with ``SAFETY`` or ``RECITATION`` and often no
parts at all (googleapis/python-genai issues on empty candidates), Anthropic
with stop reason ``refusal``. A call with an output type already failed with
``StructuredOutputError``; a text call completed as if answered, with empty
text and nothing to say why. Now a filtered reply without text raises the
typed ``ContentFilteredError``; one that holds text ends as usual with
``Complete.finish_reason`` saying it was filtered, and the AI SDK stream says
``content-filter`` in its finish part.

Served by the OpenAI, Gemini and Anthropic fakes, streamed and whole."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentflow import AgentState, Complete, ContentFilteredError, ReActAgent
from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.web.aisdk import UIMessageEncoder
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[Callable[[], FakeServer], Callable[[str, bool], ChatModel], str,
                         str]] = {
    "openai": (OpenAIFake, lambda url, s: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=s, settings=FAST),
        "content_filter", "content_filter"),
    "gemini": (GeminiFake, lambda url, s: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=s, settings=FAST),
        "SAFETY", "content_filter"),
    "anthropic": (AnthropicFake, lambda url, s: AnthropicChatModel(
        "claude-sonnet-4-5", base_url=url, api_key="k", stream=s, settings=FAST),
        "refusal", "refusal"),
}
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


@pytest.mark.parametrize("vendor", list(VENDORS))
@STREAMS
async def test_a_filtered_text_reply_without_text_raises_a_typed_error(
        vendor: str, stream: bool) -> None:
    fake_type, make, raw, finish = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(FakeReply(text="", finish_reason=raw))
        model = make(fake.url, stream)
        state = AgentState()
        try:
            with pytest.raises(ContentFilteredError) as caught:
                await ReActAgent("a", model).call("Tell me.", state=state)
        finally:
            await model.aclose()
    assert caught.value.finish_reason == finish and not caught.value.retryable
    assert finish in str(caught.value)
    assert state.memory == []  # nothing of the failed call is kept


@pytest.mark.parametrize("vendor", list(VENDORS))
async def test_a_filtered_text_reply_with_text_says_so_on_complete(vendor: str) -> None:
    fake_type, make, raw, finish = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(FakeReply(text="The first half of the answer", finish_reason=raw))
        model = make(fake.url, True)
        try:
            events = [e async for e in ReActAgent("a", model).stream("Tell me.")]
        finally:
            await model.aclose()
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.message.text == "The first half of the answer"
    assert complete.finish_reason == finish and complete.stop_reason == "completed"
    frames = b"".join(UIMessageEncoder().encode(e) for e in events)
    if finish == "content_filter":
        assert b'"finishReason":"content-filter"' in frames


async def test_an_unfiltered_reply_says_its_finish_reason() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Paris."))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        try:
            events = [e async for e in ReActAgent("a", model).stream("Capital of France?")]
        finally:
            await model.aclose()
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.finish_reason == "stop"
    frames = b"".join(UIMessageEncoder().encode(e) for e in events)
    assert b'"finishReason":"stop"' in frames


