"""Vendor fault: a refusal whose reason was only in ``stop_details``.

Claude models that refuse end with ``stop_reason: "refusal"``, often with no
content at all, and say why only in ``stop_details`` (``{"type": "refusal",
"category": "cyber" | "bio" | ..., "explanation": ...}``, both nullable:
anthropic-sdk-python ``types/refusal_stop_details.py``; on the whole message
and on the stream's ``message_delta.delta``, ``types/raw_message_delta_event.py``).
It was never read (Oaklight/llm-rosetta#432, earendil-works/pi#5666): the
typed error said "finish reason 'refusal'" and nothing of why. The category
and explanation now ride on the finish chunk (``FinishChunk.detail``) and
the refusal's error quotes them.

Served by the Anthropic fake, streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ContentFilteredError, ReActAgent, StructuredOutputError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
DETAILS = {"type": "refusal", "category": "cyber",
           "explanation": "This request asks for help attacking systems you do not own."}


class City(BaseModel):
    name: str
    country: str


def _refusal(details: object = DETAILS) -> FakeReply:
    return FakeReply(text="", extra={"stop_reason": "refusal", "stop_details": details})


def _model(url: str, stream: bool) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=url, api_key="k",
                              stream=stream, settings=FAST)


@STREAMS
async def test_a_refused_text_call_names_the_category_and_explanation(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(_refusal())
        async with _model(fake.url, stream) as model:
            with pytest.raises(ContentFilteredError) as caught:
                await ReActAgent("a", model).call("How do I break into that server?")
    text = str(caught.value)
    assert "category 'cyber'" in text and "attacking systems you do not own" in text
    assert caught.value.finish_reason == "refusal"


@STREAMS
async def test_a_refused_output_names_them_too(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(_refusal())
        async with _model(fake.url, stream) as model:
            reply = await ReActAgent("a", model).call("Where?", City)
    with pytest.raises(StructuredOutputError, match="attacking systems") as caught:
        _ = reply.output
    assert caught.value.reason == "refused" and len(fake.requests) == 1


@STREAMS
async def test_the_finish_chunk_carries_the_detail(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(_refusal({"type": "refusal", "category": None, "explanation": "Not this."}))
        fake.add(_refusal({"type": "refusal", "category": "bio", "explanation": None}))
        fake.add(FakeReply(text="Fine."))
        async with _model(fake.url, stream) as model:
            seen = []
            for _ in range(3):
                seen.append([c for c in [c async for c in model.stream(
                    [Msg.user("q")], [], GenerateOptions())] if c.type == "finish"][-1])
    assert [(c.reason, c.detail) for c in seen] == [
        ("refusal", "Not this."), ("refusal", "category 'bio'"), ("stop", "")]
