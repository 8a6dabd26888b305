"""Vendor fault: Gemma 4's tool calls left in the reply text.

Gemma 4 writes a tool call as ``<|tool_call>call:get_weather{city:<|"|>Paris
<|"|>}<tool_call|>``: bare keys, strings between ``<|"|>`` quote tokens,
bare numbers and booleans, nested ``{}``/``[]``. A server without Gemma 4's
tool parser passes that text on as the answer: llama.cpp
(ggml-org/llama.cpp#22786, https://github.com/ggml-org/llama.cpp/issues/22786),
llama-cpp-python (abetlen/llama-cpp-python#2227), vLLM with another parser
(Gitlawb/openclaude#380). The tool never ran and the markup was the reply.
For Gemma models the adapter now reads the block as the call it is
(``gemma4`` markup), streamed and whole, with typed values; a block that
does not parse stays text.

Served by an OpenAI-compatible fake and the Ollama fake, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, ReActAgent, ToolResult
from agentflow.providers.ollama import OllamaChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.markup_scenarios import (
    STREAMS,
    get_weather,
    ollama_weather_results,
    structured_reply,
    text_reply,
    weather_events,
)
from tests.provider_scenarios import FAST


class Ticket(BaseModel):
    id: int
    title: str
    tags: list[str]
    urgent: bool


@STREAMS
@pytest.mark.parametrize("text", [
    '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    'Let me check.\n<|tool_call>call:get_weather{ city : <|"|>Paris<|"|> }<tool_call|>',
    '<|tool_call>call:get_weather{city:"Paris"}<tool_call|>',
], ids=["bare", "after-text", "json-string"])
async def test_a_tool_call_block_runs_the_tool(stream: bool, text: str) -> None:
    events = await weather_events("gemma-4-26b-a4b-it", text, "Sunny in Paris.",
                                  stream=stream, chunk_size=4)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Paris."


@STREAMS
async def test_two_blocks_run_two_calls_on_ollama(stream: bool) -> None:
    text = ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>'
            '<|tool_call>call:get_weather{city:<|"|>Rome, IT<|"|>}<tool_call|>')
    assert await ollama_weather_results("gemma4:e4b", text, stream=stream) == [
        "Paris: sunny", "Rome, IT: sunny"]


@STREAMS
async def test_structured_output_through_the_block(stream: bool) -> None:
    text = ('<|tool_call>call:generate_response{id:7,title:<|"|>login, "page"<|"|>,'
            'tags:[<|"|>ui<|"|>,<|"|>auth<|"|>],urgent:true}<tool_call|>')
    reply, fake = await structured_reply("google/gemma-4-31b-it", text, Ticket, stream=stream)
    assert reply.output == Ticket(id=7, title='login, "page"', tags=["ui", "auth"], urgent=True)
    assert len(fake.requests) == 1


@STREAMS
async def test_a_block_that_does_not_parse_stays_text(stream: bool) -> None:
    text = "<|tool_call>I would call the weather tool.<tool_call|>"
    reply, _ = await text_reply("gemma-4-e2b-it", text, stream=stream, tools=[get_weather])
    assert reply.text == text


@STREAMS
async def test_a_hermes_block_with_args_on_a_gemma_tool_model(stream: bool) -> None:
    """Gemma-based tool models whose template asks for ``<tool_call>{"name": ...,
    "args": {...}}</tool_call>`` (ollama/ollama#18357): the ``args`` key is
    the call's arguments, as ``arguments`` and ``parameters`` are."""
    text = '<tool_call>\n{"name": "get_weather", "args": {"city": "Paris"}}\n</tool_call>'
    async with OllamaFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=6), FakeReply(text="Sunny."))
        chat = OllamaChatModel("mashriram/gemma3nTools:e4b", base_url=fake.url,
                               stream=stream, settings=FAST)
        try:
            events = [e async for e in ReActAgent("w", chat, tools=[get_weather])
                      .stream("Weather in Paris?")]
        finally:
            await chat.aclose()
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["Paris: sunny"]
