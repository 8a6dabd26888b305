"""Vendor fault: a router's plain ``stop`` over its upstream's own end.

OpenRouter normalizes each reply's ``finish_reason`` and sends the upstream
model's own word next to it as ``native_finish_reason`` ("Standardized
finish reasons", openrouter.ai/announcements/standardized-finish-reasons).
Some models come back ``"finish_reason": "stop"`` while their native reason
says something else entirely (reVrost/go-openrouter#43): a Gemini reply cut
at ``MAX_TOKENS``, blocked for ``SAFETY``, an Anthropic ``refusal``. Read as
``stop``, a reply cut mid-sentence was a complete answer (``finish_reason``
``"stop"`` on ``Complete``) and a refusal's text an ordinary one. Where the
normalized reason says only ``stop`` and the native one names a cut, a
filter, a refusal or a failure, the native one now decides.

Served by an OpenAI fake answering as OpenRouter does, streamed and whole."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    Complete,
    OutputTruncatedError,
    ReActAgent,
    ServerError,
    StructuredOutputError,
)
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class City(BaseModel):
    name: str
    country: str


class OpenRouterFake(OpenAIFake):
    """OpenRouter: ``finish_reason`` normalized (here always ``stop``), the
    upstream's own in ``native_finish_reason`` (``extra["native"]``; ``null``
    on the chunks before the finish chunk), ``provider`` on every payload."""

    def finish_of(self, reply: FakeReply) -> str:
        return "stop"

    def _mark(self, frame: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
        frame["provider"] = "Google"
        for choice in frame.get("choices") or ():
            choice["native_finish_reason"] = (reply.extra.get("native", "STOP")
                                              if choice.get("finish_reason") else None)
        return frame

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [self._mark(f, reply) for f in super().delta_frames(reply, body)]

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [self._mark(f, reply) for f in super().tail_frames(reply, body)]

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return self._mark(super().render_json(reply, body), reply)


def _model(url: str, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("google/gemini-2.5-flash", base_url=url, api_key="k",
                           stream=stream, settings=FAST)


@STREAMS
async def test_a_native_max_tokens_is_a_cut_reply(stream: bool) -> None:
    async with OpenRouterFake() as fake:
        fake.add(FakeReply(text="The history of computing began with",
                           extra={"native": "MAX_TOKENS"}))
        async with _model(fake.url, stream) as model:
            events = [e async for e in ReActAgent("r", model).stream("History?")]
    done = events[-1]
    assert isinstance(done, Complete)
    assert done.finish_reason == "length"  # was "stop": a cut reply read as complete


@STREAMS
async def test_a_cut_output_is_named_truncated_not_retried_as_invalid(stream: bool) -> None:
    async with OpenRouterFake() as fake:
        fake.add(FakeReply(text='{"name": "Par', extra={"native": "MAX_TOKENS"}))
        async with _model(fake.url, stream) as model:
            reply = await ReActAgent("r", model).call("Paris?", City)
    with pytest.raises(OutputTruncatedError):  # was: retried as invalid JSON
        _ = reply.output
    assert len(fake.requests) == 1  # the same request would be cut the same way


@STREAMS
async def test_a_native_safety_block_is_filtered(stream: bool) -> None:
    async with OpenRouterFake() as fake:
        fake.add(FakeReply(text="", extra={"native": "SAFETY"}))
        async with _model(fake.url, stream) as model:
            reply = await ReActAgent("r", model).call("Paris?", City)
    with pytest.raises(StructuredOutputError, match="content_filter"):
        _ = reply.output


@STREAMS
async def test_a_native_error_fails_the_call(stream: bool) -> None:
    async with OpenRouterFake() as fake:
        fake.add(FakeReply(text="Partial", extra={"native": "MALFORMED_FUNCTION_CALL"}))
        async with _model(fake.url, stream) as model:
            with pytest.raises(ServerError, match="error finish reason"):
                await ReActAgent("r", model).call("Hello")


@STREAMS
async def test_a_native_stop_or_tool_end_changes_nothing(stream: bool) -> None:
    async with OpenRouterFake() as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "France"}',
                           extra={"native": "end_turn"}))
        fake.add(FakeReply(text="Hello there.", extra={"native": "STOP"}))
        async with _model(fake.url, stream) as model:
            city = await ReActAgent("r", model).call("Paris?", City)
            events = [e async for e in ReActAgent("r", model).stream("Hello")]
    assert city.output == City(name="Paris", country="France")
    done = events[-1]
    assert isinstance(done, Complete) and done.finish_reason == "stop"
    assert done.message.text == "Hello there."
