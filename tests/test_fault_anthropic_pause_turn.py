"""Vendor fault: a turn Anthropic paused (``stop_reason: "pause_turn"``).

Anthropic runs its server tools (web search, web fetch, tool search) in a
loop of its own and pauses a long turn: the reply ends ``pause_turn``, with
no client tool call, sometimes on a server tool call that has not run yet.
The documented handling is to send the paused content back as it is, as the
last assistant turn, with the same tools and no added user message
(platform.claude.com, server tools, "The server-side loop and pause_turn").
Read as an ordinary end, the paused turn was the answer, cut mid-work
(gsd-build/gsd-2#2870: "mapStopReason() mapped Anthropic's pause_turn to
stop, causing the agent loop to treat incomplete server tool responses as
normal completions"; dust-tt/dust#28390: "the answer is silently truncated
mid-work"; anthropics/anthropic-sdk-csharp#230; prism-php/prism#1003).

Served by the Anthropic fake, streamed and whole, through the public API."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolStrategy
from agentflow.model import ModelChunk, TextDelta
from agentflow.providers._anthropic_pause import MAX_CONTINUATIONS, continued
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply, sse
from tests.provider_scenarios import FAST

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
          "input": {"query": "weather Paris"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
          "content": [{"type": "web_search_result", "title": "Paris weather",
                       "url": "https://weather.example/paris", "encrypted_content": "Eq=="}]}
PAUSED = "pause_turn"


class PausingServer(AnthropicFake):
    """Puts the server blocks a reply names (``extra["server"]``) before its
    own; a server tool's input streams as ``input_json_delta``."""

    def _content(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [*reply.extra.get("server", ()), *super()._content(reply, body)]

    def _block_events(self, index: int, block: dict[str, Any], size: int | None,
                      input_in_start: bool = False) -> Iterator[bytes]:
        if block["type"] not in (SEARCH["type"], RESULT["type"]):
            yield from super()._block_events(index, block, size, input_in_start)
            return
        start = {**block, "input": {}} if block["type"] == SEARCH["type"] else block
        yield sse({"type": "content_block_start", "index": index, "content_block": start},
                  "content_block_start")
        if block["type"] == SEARCH["type"]:
            text = orjson.dumps(block["input"]).decode()
            for at in range(0, len(text), 5):
                yield sse({"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": text[at:at + 5]}},
                    "content_block_delta")
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def paused(text: str = "", *server: dict[str, Any]) -> FakeReply:
    return FakeReply(text=text, chunk_size=5, usage=(40, 9),
                     extra={"server": list(server), "stop_reason": PAUSED})


class Forecast(BaseModel):
    city: str
    sky: str


def _model(fake: AnthropicFake, stream: bool) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                              stream=stream, settings=FAST)


async def _complete(agent: ReActAgent, output: Any = None) -> Complete[Any]:
    events = [e async for e in agent.stream("Weather in Paris?", output)]
    assert isinstance(events[-1], Complete)
    return events[-1]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_paused_turn_is_sent_back_until_it_ends(stream: bool) -> None:
    async with PausingServer() as fake:
        fake.add(paused("Searching first.", SEARCH),  # paused before its search ran
                 paused("", RESULT),
                 FakeReply(text="Sunny in Paris today.", usage=(60, 5)))
        async with _model(fake, stream) as model:
            done = await _complete(ReActAgent("w", model))
    assert done.message.text == "Searching first.Sunny in Paris today."
    assert done.finish_reason == "stop"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (140, 23)
    first, second, third = (body["messages"] for body in fake.bodies)
    # each continuation: the paused content as it came, last, and no user nudge after it
    assert second == [*first, {"role": "assistant", "content": [
        SEARCH, {"type": "text", "text": "Searching first."}]}]
    assert third == [*first, {"role": "assistant", "content": [
        SEARCH, {"type": "text", "text": "Searching first."}, RESULT]}]
    assert fake.bodies[1].get("tools") == fake.bodies[0].get("tools")


async def test_the_output_of_a_paused_turn_comes_after_it() -> None:
    data = {"city": "Paris", "sky": "sunny"}
    async with PausingServer() as fake:
        fake.add(paused("", SEARCH, RESULT),
                 FakeReply(tool_calls=[FakeCall("generate_response", data)]))
        async with _model(fake, stream=True) as model:
            agent = ReActAgent("w", model, output=OutputConfig(strategy=ToolStrategy()))
            done = await _complete(agent, Forecast)
    assert done.output == Forecast(**data)
    assert len(fake.requests) == 2


async def test_a_turn_paused_past_the_limit_ends_as_it_is() -> None:
    async with PausingServer() as fake:
        fake.default = paused("More. ", SEARCH, RESULT)
        async with _model(fake, stream=True) as model:
            done = await _complete(ReActAgent("w", model))
    assert len(fake.requests) == MAX_CONTINUATIONS + 1
    assert done.finish_reason == "other"
    assert done.message.text == "More. " * (MAX_CONTINUATIONS + 1)
    last = fake.bodies[-1]["messages"][-1]["content"][-1]
    assert last == {"type": "text", "text": "More."}  # no trailing whitespace sent


async def test_closing_a_paused_turn_closes_the_request_under_way() -> None:
    """A caller that stops reading (``break``, a cancellation) closes the
    request's stream at once, its connection with it: it was left to the
    garbage collector's finalizer."""
    closed: list[int] = []

    async def send(turn: list[dict[str, Any]]) -> AsyncIterator[ModelChunk]:
        try:
            yield TextDelta("Searching.")
            yield TextDelta("Still searching.")
        finally:
            closed.append(len(turn))

    chunks = continued(send)
    assert await anext(chunks) == TextDelta("Searching.")
    await chunks.aclose()  # type: ignore[attr-defined]
    assert closed == [0]
