"""Vendor fault: a reasoning model spends the whole output budget thinking.

A reasoning model counts its reasoning against the output limit: with a low
``max_completion_tokens`` GPT-5 and the o-series answer HTTP 200 with empty
content and finish reason ``length`` (64bit/async-openai#424,
Niek/chatgpt-web#522), Gemini 2.5 with ``MAX_TOKENS``, no content and a
``thoughtsTokenCount`` as large as the budget (project-arbr/arbr-control-plane#253).
A structured call ended with "the output was cut off at the token limit ...
ask for less (bound that field, e.g. a list's max_length)": advice about
the output that was never written. The error now says the limit came before
any output, how many reasoning tokens went to it, and to raise the limit or
lower the reasoning effort; an output cut while being written keeps its
message.

Served by the OpenAI and Gemini fakes, whole and streamed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import NativeStrategy, OutputConfig, OutputTruncatedError, ReActAgent
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, sse
from tests.fakes.gemini import GeminiFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class Ticket(BaseModel):
    id: int
    title: str


class ThoughtsOnly(GeminiFake):
    """Gemini 2.5 out of budget: ``MAX_TOKENS``, no content, all thoughts."""

    def _reply(self) -> dict[str, Any]:
        return {"candidates": [{"index": 0, "finishReason": "MAX_TOKENS",
                                "content": {"role": "model"}}],
                "usageMetadata": {"promptTokenCount": 40, "totalTokenCount": 1064,
                                  "thoughtsTokenCount": 1024}}

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return self._reply()

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [sse(self._reply())]


async def _ticket(model: Any) -> OutputTruncatedError:
    agent = ReActAgent("t", model, output=OutputConfig(strategy=NativeStrategy()))
    try:
        reply = await agent.call("the ticket", Ticket)
    finally:
        await model.aclose()
    with pytest.raises(OutputTruncatedError) as info:
        _ = reply.output
    return info.value


@STREAMS
async def test_an_openai_reasoning_model_out_of_budget(stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="", finish_reason="length", usage=(40, 1000),
                           extra={"reasoning_tokens": 1000}))
        error = await _ticket(OpenAIChatModel("gpt-5-mini", base_url=fake.url, api_key="k",
                                              stream=stream, settings=FAST))
    assert "before any output was written" in str(error)
    assert "1000 reasoning tokens" in str(error) and "reasoning effort" in str(error)
    assert len(fake.requests) == 1


@STREAMS
async def test_gemini_out_of_budget(stream: bool) -> None:
    async with ThoughtsOnly() as fake:
        fake.add(FakeReply())
        error = await _ticket(GeminiChatModel("gemini-2.5-flash", base_url=fake.url,
                                              api_key="k", stream=stream, settings=FAST))
    assert "before any output was written" in str(error) and "1024 reasoning" in str(error)


async def test_an_output_cut_while_written_keeps_its_message() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"id": 7, "title": "lo', finish_reason="length"))
        error = await _ticket(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                              settings=FAST))
    assert "cut off at the token limit" in str(error) and error.path == "title"
