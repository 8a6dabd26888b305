"""Vendor fault: gpt-oss's Harmony tool calls left in the reply text.

gpt-oss addresses a tool call as a message: ``<|start|>assistant<|channel|>
commentary to=functions.get_weather <|constrain|>json<|message|>{"city":
"Berlin"}`` (``<|call|>``, a stop token, usually cut). A server without a
Harmony parser passes it on as content with ``finish_reason: "stop"``: the
agent got neither a call nor an answer, and the turn looked complete
(kekzl/imp#1719, lablup/mlxcel#654; calls on the analysis channel,
jundot/omlx#2216). For gpt-oss model names the addressed message is read as
the call now, with or without the special tokens, streamed and whole; a
block that does not parse stays text.

Served by an OpenAI-compatible fake and the Ollama fake."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.ollama import OllamaChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.markup_scenarios import STREAMS, get_weather, text_reply, weather_events
from tests.provider_scenarios import FAST

ANALYSIS = ('<|channel|>analysis<|message|>We need to use the get_weather function. '
            'Provide city "Berlin".<|end|>')


class Ticket(BaseModel):
    id: int
    title: str


@STREAMS
@pytest.mark.parametrize("text", [
    ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_weather '
               '<|constrain|>json<|message|>{"city":"Berlin"}',
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
    '{"city": "Berlin"}<|call|>',
    '<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>'
    '{"city": "Berlin"}',
    'analysisWe need the weather.assistantcommentary to=functions.get_weather json'
    '{"city": "Berlin"}',
], ids=["after-analysis", "with-call-token", "analysis-channel", "tokens-stripped"])
async def test_an_addressed_message_runs_the_tool(stream: bool, text: str) -> None:
    events = await weather_events("openai/gpt-oss-20b", text, "Sunny in Berlin.", stream=stream,
                                  chunk_size=6, prompt="Weather in Berlin?")
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Berlin: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Berlin."


@STREAMS
async def test_two_calls_and_structured_output(stream: bool) -> None:
    two = ('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
           '{"city": "Berlin"}<|call|><|start|>assistant<|channel|>commentary '
           'to=functions.get_weather <|constrain|>json<|message|>{"city": "Rome"}<|call|>')
    final = ('<|channel|>commentary to=functions.generate_response <|constrain|>json'
             '<|message|>{"id": 7, "title": "login page"}')
    async with OllamaFake() as fake:
        fake.add(FakeReply(text=two, chunk_size=9), FakeReply(text=final, chunk_size=9))
        chat = OllamaChatModel("gpt-oss:20b", base_url=fake.url, stream=stream, settings=FAST)
        try:
            agent = ReActAgent("w", chat, tools=[get_weather],
                               output=OutputConfig(strategy=ToolStrategy()))
            events = [e async for e in agent.stream("the ticket", Ticket)]
        finally:
            await chat.aclose()
    assert sorted(e.output for e in events if isinstance(e, ToolResult)
                  if e.name == "get_weather") == ["Berlin: sunny", "Rome: sunny"]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Ticket(id=7, title="login page")


@STREAMS
async def test_a_block_that_does_not_parse_stays_text(stream: bool) -> None:
    text = "I would send a message to=functions.get_weather for Berlin, but I will not."
    reply, _ = await text_reply("gpt-oss-120b", text, stream=stream, tools=[get_weather])
    assert reply.text == text
