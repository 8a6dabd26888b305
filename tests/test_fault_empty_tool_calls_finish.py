"""Vendor fault: finish reason ``tool_calls`` on a reply that has no call.

vLLM labels a reply ``tool_calls`` whenever ``tool_choice`` was forced, even
when its parser found no call (vllm-project/vllm#53255), and reasoning models
behind gateways end a turn ``tool_calls`` with the answer in their reasoning
and nothing else (labring/FastGPT#7339). The label was believed: a reply whose
only text was its reasoning came back as an empty answer, although the same
reply labelled ``stop`` is read as the answer it is. The label is now read as
what the reply holds: no call, a plain end.

Served by a vLLM-style OpenAI fake (``reasoning`` field), streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, Msg, OutputConfig, PromptStrategy, ReActAgent
from agentflow.messages import ANSWER_FROM_REASONING
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class City(BaseModel):
    city: str
    temperature_c: float


def vllm() -> OpenAIFake:
    fake = OpenAIFake()
    fake.reasoning_field = "reasoning"
    return fake


async def _reply(agent: ReActAgent, prompt: str, output: object, stream: bool) -> Msg:
    if not stream:
        return await agent.call(prompt, output)
    events = [e async for e in agent.stream(prompt, output)]
    assert isinstance(events[-1], Complete)
    return events[-1].message


@STREAMS
async def test_a_reasoning_answer_labelled_tool_calls_is_the_answer(stream: bool) -> None:
    async with vllm() as fake:
        fake.add(FakeReply(thinking="The capital of France is Paris.", text="",
                           finish_reason="tool_calls", chunk_size=5))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            reply = await _reply(ReActAgent("r", model), "Capital of France?", None, stream)
    assert reply.text == "The capital of France is Paris."
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True
    assert len(fake.requests) == 1


@STREAMS
async def test_a_structured_answer_labelled_tool_calls_is_read(stream: bool) -> None:
    async with vllm() as fake:
        fake.add(FakeReply(thinking='{"city": "Paris", "temperature_c": 18.5}', text="",
                           finish_reason="tool_calls", chunk_size=7))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("r", model, output=OutputConfig(strategy=PromptStrategy()))
            reply = await _reply(agent, "Paris, 18.5 C", City, stream)
    assert reply.output == City(city="Paris", temperature_c=18.5)
    assert len(fake.requests) == 1  # no forced retry
