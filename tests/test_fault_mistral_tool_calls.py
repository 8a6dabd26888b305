"""Vendor fault: Mistral's ``[TOOL_CALLS]`` calls left in the reply text.

Mistral models open tool calls with the ``[TOOL_CALLS]`` token and no
closing token: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}]``
(tokenizer v3: Mistral 7B v0.3, Mixtral, Nemo) or
``[TOOL_CALLS]get_weather[ARGS]{...}`` (v11+: Mistral Small 3.2, Devstral,
Magistral; ``[CALL_ID]id`` in some). Served without Mistral's tool parser,
the text is passed on (LM Studio, lmstudio-ai/lmstudio-bug-tracker#797;
vLLM, vllm-project/vllm#5649): the tool never ran, the structured output
never came, and the call's text was returned as the answer. It is read now
for Mistral-family model names, streamed and whole, up to the reply's end;
text before the token stays text, and a block that does not parse stays
text.

Served by an OpenAI-compatible fake and the Ollama fake."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, ToolResult
from tests.markup_scenarios import (
    STREAMS,
    get_weather,
    ollama_weather_results,
    structured_reply,
    text_reply,
    weather_events,
)


class Ticket(BaseModel):
    id: int
    title: str


@STREAMS
@pytest.mark.parametrize("text", [
    '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    '[TOOL_CALLS] [{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}", '
    '"id": "a1B2c3D4e"}]</s>',
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}',
], ids=["v3-array", "v3-string-args", "v11", "call-id"])
async def test_a_tool_calls_block_runs_the_tool(stream: bool, text: str) -> None:
    events = await weather_events("mistral-small-3.2-24b-instruct-2506", text,
                                  "Sunny in Paris.", stream=stream, chunk_size=4)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Paris."


@STREAMS
async def test_several_calls_after_a_sentence(stream: bool) -> None:
    text = ('Let me check both.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}')
    assert await ollama_weather_results("devstral", text, stream=stream) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
async def test_structured_output_through_the_token(stream: bool) -> None:
    text = '[TOOL_CALLS]generate_response[ARGS]{"id": 7, "title": "login page"}'
    reply, fake = await structured_reply("magistral-small-2509", text, Ticket, stream=stream)
    assert reply.output == Ticket(id=7, title="login page")
    assert len(fake.requests) == 1


@STREAMS
async def test_a_block_that_does_not_parse_stays_text(stream: bool) -> None:
    text = "[TOOL_CALLS] I would call the weather tool for Paris."
    reply, _ = await text_reply(
        "mistral-7b-instruct-v0.3", text, stream=stream, tools=[get_weather])
    assert reply.text == text
