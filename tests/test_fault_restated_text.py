"""Vendor fault: the streamed text restated whole on a later chunk.

OCI's Cohere models stream a tool-calling turn's text word by word, then
restate the whole sentence in ``delta.content`` of the chunk that carries the
tool calls (https://github.com/BerriAI/litellm/pull/39965: "the text they
concatenate reads 'I will use the tool to find out the weather in Paris.I will
use the tool to find out the weather in Paris.'"). The doubled text was the
turn's text, in the stream and in the history sent back. A delta that is the
whole text so far again (two words or more) now adds nothing.

Served by an OpenAI-style fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

from agentflow import Complete, ReActAgent, ReasoningChunk, ToolResult
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

SAID = "I will use the tool to find out the weather in Paris."


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny"


class Restating(OpenAIFake):
    """Streams the text a word a chunk, then the calls with the whole text again."""

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        if not reply.tool_calls:
            return super().delta_frames(reply, body)
        words = reply.text.split(" ")
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        frames += [self.chunk(body, {"content": w if i == 0 else " " + w})
                   for i, w in enumerate(words)]
        calls = [{**self.tool_json(i, c, reply), "index": i}
                 for i, c in enumerate(reply.tool_calls)]
        frames.append(self.chunk(body, {"content": reply.text, "tool_calls": calls}))
        return frames


async def test_restated_text_is_said_once() -> None:
    async with Restating() as fake:
        fake.add(FakeReply(text=SAID, tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny in Paris."))
        async with OpenAIChatModel("cohere.command-a-03-2025", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            events = [e async for e in ReActAgent("c", model, tools=[get_weather])
                      .stream("Weather in Paris?")]
    first_turn = "".join(e.text for e in events if isinstance(e, ReasoningChunk)
                         and e.iteration == 1)
    assert first_turn == SAID
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["Paris: sunny"]
    turn = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert turn["content"] == SAID
    assert isinstance(events[-1], Complete) and events[-1].message.text == "Sunny in Paris."


async def test_a_one_word_repeat_is_still_text() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="hahaha", chunk_size=3))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("c", model).stream("Laugh")]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "hahaha"
