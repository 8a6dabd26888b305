"""Vendor fault: pythonic tool calls left in the reply text.

Llama 3.2 and Llama 4 call tools by writing Python calls as the whole reply,
``[get_weather(city="Paris")]`` (Llama 4 between ``<|python_start|>`` and
``<|python_end|>``); Gemma 3 writes them in a ```tool_code fence; Granite 3.3
and 4.0-H write bare calls, one a line (vllm-project/vllm#43116). A server
without a pythonic tool parser, or with one that gives up when prose comes
first, passes that text on as the answer (vllm-project/vllm#22917,
https://github.com/vllm-project/vllm/issues/22917; Gemma 3 on vLLM,
vllm-project/vllm#14734). The tool never ran. For Llama and Gemma models the
adapter (and Granite's) now reads such a reply as the calls it is (``pythonic`` markup: read
only against the offered tools, parsed by ``ast``, nothing run), streamed and
whole; prose, a call of no offered tool, or anything but literal keyword
arguments stays text.

Served by an OpenAI-compatible fake and the Ollama fake, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import Complete, ReActAgent, ToolResult
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
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
@pytest.mark.parametrize(("model", "text"), [
    ("llama-3.2-3b-instruct", '[get_weather(city="Paris")]'),
    ("Llama-4-Scout-17B-16E-Instruct",
     "<|python_start|>[get_weather(city='Paris')]<|python_end|>"),
    ("gemma-3-27b-it", "```tool_code\n[get_weather(city=\"Paris\")]\n```"),
], ids=["llama-3.2", "llama-4", "gemma-3"])
async def test_a_pythonic_reply_runs_the_tool(stream: bool, model: str, text: str) -> None:
    events = await weather_events(model, text, "Sunny in Paris.", stream=stream, chunk_size=4)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Paris."


@STREAMS
async def test_two_calls_on_ollama(stream: bool) -> None:
    text = '[get_weather(city="Paris"), get_weather(city="Rome")]'
    assert await ollama_weather_results("llama3.2:3b", text, stream=stream) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
async def test_bare_calls_one_a_line_granite(stream: bool) -> None:
    """Granite 3.3 and 4.0-H write bare calls, one a line (vllm-project/vllm#43116)."""
    text = 'get_weather(city="Paris")\nget_weather(city="Rome")'
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=6), FakeReply(text="Both sunny."))
        async with OpenAIChatModel("ibm-granite/granite-3.3-8b-instruct", base_url=fake.url,
                                   api_key="k", stream=stream, settings=FAST) as chat:
            events = [e async for e in ReActAgent("w", chat, tools=[get_weather])
                      .stream("Weather in Paris and Rome?")]
    assert sorted(e.output for e in events if isinstance(e, ToolResult)) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
async def test_structured_output_through_the_form(stream: bool) -> None:
    text = ('[generate_response(id=7, title="login page", tags=["ui", "auth"], '
            'urgent=true)]')
    reply, fake = await structured_reply("meta-llama/Llama-3.2-3B-Instruct", text, Ticket,
                                         stream=stream)
    assert reply.output == Ticket(id=7, title="login page", tags=["ui", "auth"], urgent=True)
    assert len(fake.requests) == 1


@STREAMS
@pytest.mark.parametrize("text", [
    "get_weather(city) tells the weather; it is sunny.",
    '[os.system(city="Paris")]',
    "[get_weather(city=open('x').read())]",
    "[1] Paris is sunny.",
    'get_weather(city="Paris")\nprint("done")',
], ids=["prose", "not-a-tool", "not-literal", "bracket-prose", "other-statement"])
async def test_anything_else_stays_text(stream: bool, text: str) -> None:
    reply, _ = await text_reply("llama-3.2-3b-instruct", text, stream=stream, tools=[get_weather])
    assert reply.text == text


@pytest.mark.parametrize("args", ["a={1, 2}", 'a=b"x"', "a=1j", "a={1: 'x'}", "a=[{2}]"])
def test_a_literal_json_cannot_carry_leaves_the_reply_text(args: str) -> None:
    """A set, bytes, a complex number or a dict with a non-string key is a
    Python literal but no JSON value: read as a call's arguments, the next
    request could not be written (an untyped ``TypeError``)."""
    from agentflow.providers._pythonic_markup import parse_pythonic_calls

    with pytest.raises(ValueError):
        parse_pythonic_calls(f"[f({args})]", frozenset({"f"}))
    kept = parse_pythonic_calls("[f(a=[1, 'x', None, True], b={'k': 2.5})]", frozenset({"f"}))
    assert kept is not None and kept[0].arguments == {"a": [1, "x", None, True], "b": {"k": 2.5}}
