"""Vendor fault: every streamed argument fragment under an id of its own.

GLM-4's OpenAI-compatible server (``openai_api_server.py``) streams a tool
call whose every delta carries a fresh ``id``: ``call_DfU2...`` with the name,
then ``call_LEN0...`` with ``{"``, ``call_6bA...`` with ``location``...
(zai-org/GLM-4#194). Each new id began a new call: the tool was called with
empty arguments, then nameless calls followed ("Tool '' not found") until
the tool retry budget ended the call with ``ToolRetriesExceededError``. A
fragment without a name, while the call at its index is still open (its
arguments not yet whole JSON), now continues that call whatever its id; a
named fragment, or one after whole arguments, still begins a call.

Served by an OpenAI-compatible fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

import orjson

from agentflow import ReActAgent, ToolResult
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class FreshIds(OpenAIFake):
    """Streams ``extra["calls"]`` ((name, argument pieces) each) with a new id
    on every fragment, all at index 0, as GLM-4's server does."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if "calls" not in reply.extra:
            return super().render_events(reply, body)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return b"data: " + orjson.dumps({
                "id": "chatcmpl-g", "object": "chat.completion.chunk", "created": 1,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"
        frames, n = [], 0
        for name, pieces in reply.extra["calls"]:
            frames.append(chunk({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": f"call_{n}", "type": "function",
                 "function": {"name": name, "arguments": ""}}]}))
            for piece in pieces:
                n += 1
                frames.append(chunk({"tool_calls": [{"index": 0, "id": f"call_{n}",
                                                     "type": "function",
                                                     "function": {"arguments": piece}}]}))
            n += 1
        return [*frames, chunk({}, "tool_calls"), b"data: [DONE]\n\n"]


async def _results(calls: list[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    def get_current_weather(location: str) -> str:
        """The weather of a place.

        Args:
            location: the place.
        """
        return f"{location}: sunny"

    async with FreshIds() as fake:
        fake.add(FakeReply(extra={"calls": calls}), FakeReply(text="Sunny."))
        async with OpenAIChatModel("glm-4-9b-chat", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            events = [e async for e in ReActAgent("g", model, tools=[get_current_weather])
                      .stream("Weather in San Francisco?")]
    return [(e.name, e.output) for e in events if isinstance(e, ToolResult)]


async def test_fragments_with_fresh_ids_are_one_call() -> None:
    pieces = ['{"', "location", '":', ' "', "San Francisco", '"}']
    assert await _results([("get_current_weather", pieces)]) == [
        ("get_current_weather", "San Francisco: sunny")]


async def test_a_named_fragment_still_begins_a_call() -> None:
    calls = [("get_current_weather", ['{"location": ', '"Paris"}']),
             ("get_current_weather", ['{"location": ', '"Rome"}'])]
    assert sorted(await _results(calls)) == [("get_current_weather", "Paris: sunny"),
                                             ("get_current_weather", "Rome: sunny")]
