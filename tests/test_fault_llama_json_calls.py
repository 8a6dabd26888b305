"""Vendor fault: Llama 3.x tool calls left in the reply text as JSON.

A server without a Llama tool parser passes the model's JSON call on as
text: ``{"name": "get_weather", "parameters": {"city": "Paris"}}``, maybe
after ``<|python_tag|>``, in a fence, or as ``{"type": "function", ...}``
(vLLM without ``--tool-call-parser llama3_json``, vllm-project/vllm#11786;
Fireworks' Llama 3.3, BerriAI/litellm#7209; ollama/ollama#13519). The tool
never ran and the call's JSON came back as the answer. For a Llama model on
an OpenAI-compatible server the form is read as the call (against the
offered tools only); a JSON answer whose ``name`` is no tool's stays an answer.

Served by an OpenAI-compatible fake (vLLM-like) and the Ollama fake,
streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, PromptStrategy, ReActAgent, ToolResult
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.markup_scenarios import STREAMS, get_weather
from tests.provider_scenarios import FAST

LLAMA = "meta-llama/Llama-3.3-70B-Instruct"


class Person(BaseModel):
    name: str
    city: str


@STREAMS
@pytest.mark.parametrize("text", [
    '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '{"type": "function", "function": {"name": "get_weather", "parameters": {"city": "Paris"}}}',
], ids=["plain", "python-tag", "fenced", "typed"])
async def test_a_json_call_in_the_text_runs_the_tool(stream: bool, text: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=6), FakeReply(text="It is sunny in Paris."))
        async with OpenAIChatModel(LLAMA, base_url=fake.url, api_key="k", stream=stream,
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, tools=[get_weather])
            events = [e async for e in agent.stream("Weather in Paris?")]
    results = [(e.name, e.output) for e in events if isinstance(e, ToolResult)]
    assert results == [("get_weather", "Paris: sunny")]
    assert isinstance(events[-1], Complete)
    assert events[-1].message.text == "It is sunny in Paris."


async def test_a_json_answer_named_like_no_tool_stays_the_answer() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name": "Ann", "city": "Paris"}', chunk_size=5))
        async with OpenAIChatModel(LLAMA, base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, tools=[get_weather],
                               output=OutputConfig(strategy=PromptStrategy()))
            events = [e async for e in agent.stream("Who?", Person)]
    assert not [e for e in events if isinstance(e, ToolResult)]
    assert isinstance(events[-1], Complete) and events[-1].output == Person(name="Ann",
                                                                            city="Paris")
    assert len(fake.requests) == 1


@STREAMS
async def test_ollama_llama_json_call_in_the_text_runs_the_tool(stream: bool) -> None:
    async with OllamaFake() as fake:
        fake.add(FakeReply(text='```json\n{"name": "get_weather", "parameters": '
                                '{"city": "Paris"}}\n```', chunk_size=6),
                 FakeReply(text="It is sunny in Paris."))
        model = OllamaChatModel("llama3.2:3b", base_url=fake.url, stream=stream, settings=FAST)
        try:
            events = [e async for e in ReActAgent("w", model, tools=[get_weather]).stream(
                "Weather in Paris?")]
        finally:
            await model.aclose()
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    assert isinstance(events[-1], Complete)
    assert events[-1].message.text == "It is sunny in Paris."
