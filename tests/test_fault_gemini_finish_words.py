"""Vendor fault: Gemini finish reasons the adapter did not know.

The API's ``FinishReason`` has grown past ``SAFETY`` and ``RECITATION``:
``LANGUAGE`` ("the candidate content was flagged for using an unsupported
language"), the image filters (``IMAGE_PROHIBITED_CONTENT``,
``IMAGE_RECITATION``), and failed generations (``MALFORMED_RESPONSE``,
``MISSING_THOUGHT_SIGNATURE``). Unmapped, they fell through to ``other``
(https://github.com/microsoft/agent-framework-go/pull/1100 for ``LANGUAGE``):
a filtered reply with no text completed as an empty answer. A filter's stop
now raises ``ContentFilteredError``, as ``SAFETY`` does, and a failed
generation is a retryable ``ServerError``; an OpenAI-style gateway that
relays the word (``language``) reads it the same way. ``MISSING_THOUGHT_SIGNATURE``
("Request has at least one thought signature missing", google-genai
``FinishReason``) faults the request's history, not the generation: a model
that already signs every call it is sent raises a ``BadRequestError`` naming
what to do, not retried (test_fault_gemini_missing_signature.py: the remedy).

Served by the Gemini and OpenAI fakes, whole and streamed, through the
public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import BadRequestError, ContentFilteredError, ReActAgent, ServerError
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, sse
from tests.fakes.gemini import GeminiFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def _ended(word: str) -> dict[str, Any]:
    """A candidate with no content, ended by ``word`` (as the API sends a filtered one)."""
    return {"candidates": [{"finishReason": word, "index": 0}],
            "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
            "modelVersion": "gemini-2.5-flash"}


class Ended(GeminiFake):
    """Answers ``extra["body"]`` whole, or as the stream's one event."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["body"]

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [sse(reply.extra["body"])]


async def _ask(word: str, stream: bool) -> None:
    async with Ended() as fake:
        fake.add(FakeReply(extra={"body": _ended(word)}))
        async with GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            await ReActAgent("g", model).call("Traduis: bonjour")


@STREAMS
@pytest.mark.parametrize("word", ["LANGUAGE", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"])
async def test_a_filter_word_is_a_content_filter(word: str, stream: bool) -> None:
    with pytest.raises(ContentFilteredError) as info:
        await _ask(word, stream)
    assert info.value.finish_reason == "content_filter"


@STREAMS
async def test_a_failed_generation_is_a_server_error(stream: bool) -> None:
    with pytest.raises(ServerError) as info:
        await _ask("MALFORMED_RESPONSE", stream)
    assert info.value.retryable


@STREAMS
async def test_a_missing_signature_on_a_signing_model_is_not_retried(stream: bool) -> None:
    async with Ended() as fake:
        fake.add(FakeReply(extra={"body": _ended("MISSING_THOUGHT_SIGNATURE")}),
                 FakeReply(text="never asked for"))
        async with GeminiChatModel("gemini-3-flash-preview", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            with pytest.raises(BadRequestError) as info:
                await ReActAgent("g", model).call("Traduis: bonjour")
    assert len(fake.requests) == 1
    assert info.value.code == "MISSING_THOUGHT_SIGNATURE" and not info.value.retryable
    assert "provider_data" in info.value.message  # names what to do


async def test_a_relayed_language_word_is_a_content_filter() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="", finish_reason="language"))
        async with OpenAIChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(ContentFilteredError):
                await ReActAgent("g", model).call("Traduis: bonjour")
