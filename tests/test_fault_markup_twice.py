"""Vendor fault: one tool call sent twice, as a structured call and as markup.

A server whose tool parser extracted the call, yet left its markup in the
content (vLLM and llama.cpp tool parsers on some templates; a gateway that
copies the call into the text), answers with the call both ways: Qwen's
``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` in ``content`` and
the same call in ``tool_calls``. Markup recovery (for models that write
calls as text) turned the text into a second call, and the tool ran twice
(a booking made twice). A markup call that repeats a structured call of the
same reply (same name, same arguments) is now dropped with its text; a
different one still runs, and markup alone is still read as the call.

Served by the OpenAI fake (an OpenAI-compatible server, Qwen markup),
streamed and whole, through the public API."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import orjson

from agentflow import ReActAgent
from agentflow.model import FinishChunk, TextDelta, ToolCallDelta
from agentflow.providers._markup import MarkupFilter, resolve_markups
from agentflow.providers.registry import get_model
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.markup_scenarios import STREAMS
from tests.provider_scenarios import FAST


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>\n{orjson.dumps({'name': name, 'arguments': args}).decode()}\n</tool_call>"


async def booked(reply: FakeReply, *, stream: bool) -> tuple[list[str], str]:
    """The bookings made when the model answers ``reply`` then "Done.", and
    the final text."""
    made: list[str] = []

    def book(city: str) -> str:
        """Book a hotel.

        Args:
            city: where.
        """
        made.append(city)
        return f"booked {city}"

    async with OpenAIFake() as fake:
        fake.add(reply, FakeReply(text="Done."))
        async with aclosing(get_model("openai:qwen3-8b", api_key="k", base_url=fake.url,
                                      settings=FAST, stream=stream)) as model:
            answer = await ReActAgent("t", model, tools=[book]).call("Book Paris.")
    return made, answer.text


@STREAMS
async def test_a_call_sent_as_a_tool_call_and_as_markup_runs_once(stream: bool) -> None:
    reply = FakeReply(text="I'll book it.\n" + hermes("book", {"city": "Paris"}),
                      tool_calls=[FakeCall("book", {"city": "Paris"})], chunk_size=5)
    made, text = await booked(reply, stream=stream)
    assert made == ["Paris"] and text == "Done."


@STREAMS
async def test_a_different_markup_call_beside_a_tool_call_still_runs(stream: bool) -> None:
    reply = FakeReply(text=hermes("book", {"city": "Oslo"}),
                      tool_calls=[FakeCall("book", {"city": "Paris"})], chunk_size=5)
    made, _ = await booked(reply, stream=stream)
    assert sorted(made) == ["Oslo", "Paris"]


@STREAMS
async def test_markup_alone_is_still_the_call(stream: bool) -> None:
    made, _ = await booked(FakeReply(text=hermes("book", {"city": "Rome"}), chunk_size=5),
                           stream=stream)
    assert made == ["Rome"]


def test_the_filter_drops_the_repeat_and_its_text_keeps_the_rest() -> None:
    """Chunk level: the markup closes before the structured call streams in
    (in fragments); the repeat is left out, the prose around it kept."""
    markup = MarkupFilter(resolve_markups(["hermes"]))
    block = hermes("book", {"city": "Paris"})
    out = markup.feed([TextDelta("Sure. " + block[:10]), TextDelta(block[10:] + " Bye."),
                       ToolCallDelta(0, id="c1", name="book", arguments='{"city": '),
                       ToolCallDelta(0, arguments='"Paris"}'), FinishChunk("tool_calls")])
    out += markup.close()
    assert [(c.index, c.name) for c in out if isinstance(c, ToolCallDelta)] == [
        (0, "book"), (0, None)]
    assert "".join(c.text for c in out if isinstance(c, TextDelta)) == "Sure.  Bye."
