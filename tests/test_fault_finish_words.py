"""Vendor fault: a finish reason in another server's words read as ``other``.

OpenAI-compatible servers and gateways end replies with words of their own:
Mistral ``model_length`` when the model's context window ran out
(camel-ai/camel#4266, https://github.com/camel-ai/camel/issues/4266: "a
truncated generation was reaching callers as a string no OpenAI-compatible
consumer looks for"), TGI before 2.2 ``eos_token``
(huggingface/text-generation-inference#2344), gateways ``end``
(earendil-works/pi#2107), and relays pass on Anthropic's, Bedrock's,
Gemini's and Cohere's own (``tool_use``, ``guardrail_intervened``,
``SAFETY``, ``COMPLETE``). Each read as ``other``: an output cut by
``model_length`` was reported as "no JSON on the native format" and asked
for again and again instead of being a typed truncation, and a filtered
reply looked like an answer. They are read as what they say now, in any
case.

Served by the OpenAI-compatible fake, streamed and whole, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputTruncatedError, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class City(BaseModel):
    name: str
    country: str


def _model(fake: OpenAIFake, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("mistral-large-latest", base_url=fake.url, api_key="k",
                           stream=stream, settings=FAST)


@STREAMS
@pytest.mark.parametrize(("raw", "reason"), [
    ("model_length", "length"), ("eos_token", "stop"), ("end", "stop"),
    ("COMPLETE", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"),
    ("guardrail_intervened", "content_filter"), ("content_filtered", "content_filter"),
    ("something_new", "other"),
])
async def test_the_words_are_read_as_what_they_say(stream: bool, raw: str, reason: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="The Louvre is in Paris.", finish_reason=raw))
        async with _model(fake, stream) as model:
            events = [e async for e in ReActAgent("a", model).stream("Where is the Louvre?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.finish_reason == reason


@STREAMS
async def test_an_output_cut_at_the_context_window_is_a_truncation(stream: bool) -> None:
    cut = '{"name": "Louvre", "coun'
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=cut, finish_reason="model_length"))
        async with _model(fake, stream) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
    with pytest.raises(OutputTruncatedError) as caught:
        _ = reply.output
    assert caught.value.raw_text == cut and len(fake.requests) == 1
