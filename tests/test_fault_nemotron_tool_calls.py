"""Vendor fault: Nemotron's tool calls left in the reply text.

Llama-Nemotron (Super, Nano, Ultra) and Nemotron-Nano v2 write their calls as
``<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>``
(vLLM reads it with its ``llama_nemotron_json`` / ``nemotron_json`` tool
parsers); Nemotron 3 Nano writes Qwen3-Coder's ``<tool_call><function=...>``
form. A server without the model's parser passes the block on as the answer
(https://github.com/ai-dynamo/dynamo/pull/10115: the ``<TOOLCALL>`` markers and
the call leaked into ``content``, the call was dropped): the tool never ran
and the markup was the reply. For Nemotron models the adapter now reads both
blocks as the calls they are, streamed and whole; a block that does not parse
stays text.

Served by an OpenAI-compatible fake, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, ToolResult
from tests.markup_scenarios import STREAMS, structured_reply, text_reply, weather_events


class Ticket(BaseModel):
    id: int
    title: str


@STREAMS
@pytest.mark.parametrize(("model", "text", "results"), [
    ("nvidia/llama-3.3-nemotron-super-49b-v1.5",
     '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
     ["Paris: sunny"]),
    ("nvidia-nemotron-nano-9b-v2",
     'Checking.\n<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}},\n'
     '{"name": "get_weather", "arguments": {"city": "Rome"}}]</TOOLCALL>',
     ["Paris: sunny", "Rome: sunny"]),
    ("nemotron-3-nano-30b-a3b",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
     "</function>\n</tool_call>", ["Paris: sunny"]),
], ids=["super", "nano-v2-two-calls", "nano-3-xml"])
async def test_a_nemotron_block_runs_the_tools(stream: bool, model: str, text: str,
                                               results: list[str]) -> None:
    events = await weather_events(model, text, "Sunny.", stream=stream, chunk_size=6)
    assert [e.output for e in events if isinstance(e, ToolResult)] == results
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny."


@STREAMS
async def test_structured_output_through_the_block(stream: bool) -> None:
    text = '<TOOLCALL>[{"name": "generate_response", "arguments": {"id": 7, "title": "login"}}]' \
           "</TOOLCALL>"
    reply, fake = await structured_reply("nvidia/llama-3.1-nemotron-nano-8b-v1", text, Ticket,
                                         stream=stream)
    assert reply.output == Ticket(id=7, title="login")
    assert len(fake.requests) == 1


@STREAMS
async def test_a_block_that_does_not_parse_stays_text(stream: bool) -> None:
    text = "<TOOLCALL>I would call the weather tool.</TOOLCALL>"
    reply, _ = await text_reply("nemotron-nano-9b-v2", text, stream=stream)
    assert reply.text == text
