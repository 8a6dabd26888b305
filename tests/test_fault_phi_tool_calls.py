"""Vendor fault: Phi-4's tool calls left in the reply text.

Phi-4-mini writes its calls as one JSON array after the plain word
``functools``, with no closing token (``functools[{"name": "get_weather",
"arguments": {"city": "Paris"}}]``: vLLM's ``phi4_mini_json`` parser);
Phi-4's template wraps them in ``<|tool_call|>...<|/tool_call|>``. A server
without the model's parser passes that text on as the answer
(https://github.com/vllm-project/vllm/issues/14682 with another parser,
https://github.com/ollama/ollama/issues/9437 on Ollama's ``phi4-mini``): the
tool never ran and the markup was the reply. For Phi-4 models the adapters
now read both forms as the calls they are, streamed and whole; prose that
says "functools" stays text.

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

MINI = 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
WRAPPED = ('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
           '{"name": "get_weather", "arguments": {"city": "Rome"}}]<|/tool_call|>')


class Ticket(BaseModel):
    id: int
    title: str


@STREAMS
@pytest.mark.parametrize(("model", "text", "results"), [
    ("microsoft/Phi-4-mini-instruct", MINI, ["Paris: sunny"]),
    ("phi-4-mini-instruct", "Let me check.\n" + MINI, ["Paris: sunny"]),
    ("phi-4", WRAPPED, ["Paris: sunny", "Rome: sunny"]),
], ids=["functools", "after-text", "wrapped-two-calls"])
async def test_a_phi_block_runs_the_tools(stream: bool, model: str, text: str,
                                          results: list[str]) -> None:
    events = await weather_events(model, text, "Sunny.", stream=stream, chunk_size=4)
    assert [e.output for e in events if isinstance(e, ToolResult)] == results
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny."


@STREAMS
async def test_phi4_mini_on_ollama(stream: bool) -> None:
    assert await ollama_weather_results("phi4-mini:3.8b", MINI, stream=stream) == [
        "Paris: sunny"]


@STREAMS
async def test_structured_output_through_the_block(stream: bool) -> None:
    text = 'functools[{"name": "generate_response", "arguments": {"id": 7, "title": "login"}}]'
    reply, fake = await structured_reply("phi-4-mini-instruct", text, Ticket, stream=stream)
    assert reply.output == Ticket(id=7, title="login")
    assert len(fake.requests) == 1


@STREAMS
@pytest.mark.parametrize("text", ["Use functools.partial for that.",
                                  "The functools module [see the docs] helps."])
async def test_prose_about_functools_stays_text(stream: bool, text: str) -> None:
    reply, _ = await text_reply(
        "phi-4-mini-instruct", text, stream=stream, prompt="How do I curry in Python?")
    assert reply.text == text
