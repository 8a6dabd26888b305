"""Vendor fault: LFM2's tool calls left in the reply text.

Liquid AI's LFM2 / LFM2.5 write their calls between ``<|tool_call_start|>``
and ``<|tool_call_end|>``, as a Python list of calls
(``[list_directory(path="desktop")]``) or a JSON list of ``{"name",
"arguments"}`` objects. A server without the model's parser passes the block
on as the answer (https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1979:
"it gives this tool call in the content response and the tool calls are
empty"): the tool never ran. For LFM2 models the adapters now read the block as
the calls it is, streamed and whole; nothing in it is run as code, and a block
that does not parse stays text.

Served by an OpenAI-compatible fake and the Ollama fake, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, ToolResult
from tests.markup_scenarios import (
    STREAMS,
    ollama_weather_results,
    structured_reply,
    text_reply,
    weather_events,
)

LFM = "LiquidAI/LFM2.5-8B-A1B"


class Ticket(BaseModel):
    id: int
    tags: list[str]


@STREAMS
@pytest.mark.parametrize("text", [
    '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
    "Let me check.<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>",
    '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    "<|tool_call_end|>",
], ids=["pythonic", "after-text", "json"])
async def test_an_lfm2_block_runs_the_tool(stream: bool, text: str) -> None:
    events = await weather_events(LFM, text, "Sunny.", stream=stream, chunk_size=5)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny."


@STREAMS
async def test_two_calls_in_one_block_on_ollama(stream: bool) -> None:
    text = ('<|tool_call_start|>[get_weather(city="Paris"), get_weather(city="Rome")]'
            "<|tool_call_end|>")
    assert await ollama_weather_results("lfm2.5:8b", text, stream=stream) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
async def test_structured_output_through_the_block(stream: bool) -> None:
    text = "<|tool_call_start|>[generate_response(id=7, tags=['ui', 'auth'])]<|tool_call_end|>"
    reply, fake = await structured_reply(LFM, text, Ticket, stream=stream)
    assert reply.output == Ticket(id=7, tags=["ui", "auth"])
    assert len(fake.requests) == 1


@STREAMS
@pytest.mark.parametrize("text", [
    "<|tool_call_start|>[__import__('os').system('true')]<|tool_call_end|>",
    "<|tool_call_start|>I would call the weather tool.<|tool_call_end|>",
], ids=["code", "prose"])
async def test_a_block_that_is_no_call_stays_text(stream: bool, text: str) -> None:
    reply, _ = await text_reply(LFM, text, stream=stream)
    assert reply.text == text
