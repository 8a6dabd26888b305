"""Vendor fault: Qwen, Mistral and Gemma tool calls left in the reply text as bare JSON.

Served without a tool parser, these families write a call as the whole reply:
Qwen2.5-Coder on Ollama's OpenAI-compatible endpoint answers ``{"name":
"read_file", "arguments": {...}}`` with ``finish_reason: "stop"``
(NousResearch/hermes-agent#87900, jundot/omlx#2565); Mistral models answer
a JSON array of such calls (mistralai/mistral-common#73, Devstral on
llama.cpp: ggml-org/llama.cpp#14697). Only Llama names read the form, and
only as single objects: the tool never ran and the call's JSON came back as
the answer. These families read it now, an array as several calls, against
the offered tools only; a JSON answer whose ``name`` is no tool's stays an
answer.

Served by an OpenAI-compatible fake (a vLLM/Ollama-like server) and the
Ollama fake, streamed and whole."""

from __future__ import annotations

import pytest

from agentflow import Complete, ToolResult
from tests.markup_scenarios import (
    STREAMS,
    get_weather,
    ollama_weather_results,
    text_reply,
    weather_events,
)


@STREAMS
@pytest.mark.parametrize(("model", "text"), [
    ("qwen2.5-coder:7b", '{"name": "get_weather", "arguments": {"city": "Paris"}}'),
    ("mistral-large-latest", '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    ("devstral-small-2507", '[{"name": "get_weather", "arguments": {"city": "Paris"}, '
                            '"id": "162875335"}]'),
    ("gemma3:27b", '```json\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```'),
], ids=["qwen", "mistral-array", "devstral-array", "gemma-fenced"])
async def test_a_bare_json_call_runs_the_tool(stream: bool, model: str, text: str) -> None:
    events = await weather_events(model, text, "Sunny in Paris.", stream=stream,
                                  chunk_size=5)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Paris."


@STREAMS
async def test_an_array_of_calls_runs_each(stream: bool) -> None:
    text = ('[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
            '{"name": "get_weather", "arguments": {"city": "Rome"}}]')
    assert await ollama_weather_results("mistral-small3.2", text, stream=stream, chunk_size=7) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
@pytest.mark.parametrize("text", [
    '[{"name": "Paris", "arguments": {"population": 2}}]',
    '{"name": "get_weather", "arguments": {"city": "Paris"}} is what I would call.',
    '[]',
], ids=["no-tool-name", "prose-after", "empty-array"])
async def test_other_json_answers_stay_answers(stream: bool, text: str) -> None:
    reply, fake = await text_reply("qwen2.5-coder:7b", text, stream=stream, tools=[get_weather])
    assert reply.text == text
    assert len(fake.requests) == 1
