"""Vendor fault: a self-hosted server's engine aborted the generation.

vLLM (and SGLang) end a request their engine aborted (shutdown, an elastic
scale-down or sleep pause, an abort request) with finish reason ``abort``
over HTTP 200, then ``data: [DONE]`` as after any answer
(vllm-project/vllm#57082). ``abort`` is no OpenAI value: it was read as
``other``, so a text call completed with the text cut mid-sentence, and an
output call blamed the model's JSON. It is now a failed generation: a text
call ends with a typed, retryable ``ServerError``; an output call asks again.

Served by the OpenAI fake answering as vLLM does, streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import AgentState, Complete, Msg, ReActAgent, ServerError, generate
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class City(BaseModel):
    name: str
    country: str


def _model(url: str, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("Qwen/Qwen3-8B", base_url=url, api_key="k", stream=stream,
                           settings=FAST)


@STREAMS
async def test_an_aborted_text_reply_is_a_typed_error_not_an_answer(stream: bool) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="The Louvre is in Pa", finish_reason="abort"),
                 FakeReply(text="", finish_reason="abort"))
        async with _model(fake.url, stream) as model:
            agent = ReActAgent("v", model)
            with pytest.raises(ServerError) as info:
                if stream:
                    _ = [e async for e in agent.stream("Where is the Louvre?", state=state)]
                else:
                    await agent.call("Where is the Louvre?", state=state)
            reply = await generate(model, [Msg.user("hi")])
    assert info.value.retryable
    assert state.to_json() == before
    assert reply.finish_reason == "error"


@STREAMS
async def test_an_output_call_asks_again_after_an_aborted_reply(stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name": "Louvre", "coun', finish_reason="abort"),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        async with _model(fake.url, stream) as model:
            events = [e async for e in ReActAgent("v", model).stream("Where?", City)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2
