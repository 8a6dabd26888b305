"""Vendor fault: an empty ``tool_calls`` entry beside a finished answer.

LM Studio answers a finished turn with its text and a ``tool_calls`` entry
that holds nothing, ``{"id": "", "type": "function"}``
(https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/830); behind
LiteLLM, entries with ``"name": null`` and arguments ``"{}{}"`` / ``"{}"``
come with finish reason ``stop`` (https://github.com/BerriAI/litellm/issues/9127).
Each entry was run as a call to tool ``""``: the answer was set aside, the
model was asked again after a "Tool '' not found" result, and the history
held a nameless call under an empty-named function, which LM Studio itself
refuses ("Invalid 'messages' in payload"). An entry with neither a name nor
arguments is no call: the answer completes in one request. A named call in
the same reply still runs.

Served by the OpenAI fake, whole and streamed, through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import Complete, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])

ENTRIES: dict[str, list[dict[str, Any]]] = {
    "lmstudio": [{"id": "", "type": "function"}],
    "litellm": [{"id": "8528fb5a", "type": "function",
                 "function": {"name": None, "arguments": "{}{}"}},
                {"id": "0bc1da48", "type": "function",
                 "function": {"name": None, "arguments": "{}"}}],
}

ran: list[str] = []


def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"18C in {city}"


class EmptyEntries(OpenAIFake):
    """Adds ``extra["entries"]`` after the reply's own tool calls (streamed:
    each as one more ``tool_calls`` delta at the next index), keeping the
    reply's finish reason."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        data = super().render_json(reply, body)
        message = data["choices"][0]["message"]
        entries = reply.extra.get("entries", [])
        message["tool_calls"] = [*(message.get("tool_calls") or []), *entries]
        return data

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().delta_frames(reply, body)
        start = len(reply.tool_calls)
        return frames + [self.chunk(body, {"tool_calls": [{**entry, "index": start + n}]})
                         for n, entry in enumerate(reply.extra.get("entries", []))]


@STREAMS
@pytest.mark.parametrize("shape", sorted(ENTRIES))
async def test_an_answer_beside_empty_entries_completes(stream: bool, shape: str) -> None:
    ran.clear()
    async with EmptyEntries() as fake:
        fake.add(FakeReply(text="It printed Hello, World!", finish_reason="stop",
                           extra={"entries": ENTRIES[shape]}),
                 FakeReply(text="unused"))
        async with OpenAIChatModel("qwen3-coder", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            events = [e async for e in ReActAgent("w", model, tools=[get_weather])
                      .stream("Run the program.")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "It printed Hello, World!"
    assert not done.message.tool_uses and ran == [] and len(fake.requests) == 1
    assert done.finish_reason == "stop"


@STREAMS
async def test_a_named_call_beside_an_empty_entry_runs_once(stream: bool) -> None:
    ran.clear()
    async with EmptyEntries() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Oslo"})],
                           extra={"entries": ENTRIES["lmstudio"]}),
                 FakeReply(text="Mild."))
        async with OpenAIChatModel("qwen3-coder", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            events = [e async for e in ReActAgent("w", model, tools=[get_weather])
                      .stream("Weather in Oslo?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Mild."
    assert ran == ["Oslo"] and len(fake.requests) == 2
    calls = [c for m in fake.bodies[1]["messages"] if m["role"] == "assistant"
             for c in m.get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["get_weather"]
