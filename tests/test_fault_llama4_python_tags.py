"""Vendor fault: Llama 4's JSON tool call between ``<|python_start|>`` and ``<|python_end|>``.

Llama 4 (Scout, Maverick) served with a Llama 3.x JSON parser, or none,
writes its call as ``<|python_start|>{"name": "brave_web_search",
"parameters": {"query": "latest news"}}<|python_end|>``
(https://github.com/vllm-project/vllm/issues/16214: "sometimes I'll just get
a text content response like this"). The Llama JSON form was read after
Llama 3's ``<|python_tag|>`` only: the tool never ran and the tagged text was
the answer. Llama 4's tags around the object are read too, streamed and whole;
a JSON answer whose ``name`` is no tool's stays the answer.

Served by an OpenAI-compatible fake, through the public API."""

from __future__ import annotations

import pytest

from agentflow import Complete, ToolResult
from tests.markup_scenarios import STREAMS, weather_events

LLAMA4 = "meta-llama/Llama-4-Scout-17B-16E-Instruct"


@STREAMS
@pytest.mark.parametrize("text", [
    '<|python_start|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|python_end|>',
    '<|python_start|>{"type": "function", "name": "get_weather", '
    '"parameters": {"city": "Paris"}}<|python_end|>',
    '<|python_start|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n',
], ids=["tagged", "typed", "unclosed"])
async def test_a_tagged_json_call_runs_the_tool(stream: bool, text: str) -> None:
    events = await weather_events(LLAMA4, text, "Sunny.", stream=stream, chunk_size=5)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny."


@STREAMS
async def test_a_tagged_answer_named_like_no_tool_stays_text(stream: bool) -> None:
    text = '<|python_start|>{"name": "Paris", "parameters": {}}<|python_end|>'
    events = await weather_events(LLAMA4, text, "unused", stream=stream, chunk_size=5)
    assert not [e for e in events if isinstance(e, ToolResult)]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == text
