"""Vendor fault: a tool call whose ``id`` is a JSON number.

Some OpenAI-compatible endpoints send a tool call's ``id`` as an integer
(NVIDIA NIM's ``z-ai/glm-5.1``: https://github.com/anomalyco/opencode/issues/25786,
"AI_InvalidResponseDataError: Expected 'id' to be a string — models returning
integer tool_call IDs cause crash"). The whole reply failed as a malformed
stream event (a ``ProviderConnectionError``, the same on every retry), so no
tool ever ran with such a model. The id is read as its decimal text: the tool
runs, and its result goes back under that id, as the server's next turn
expects.

Served by the OpenAI fake (ids rewritten to integers), streamed and whole."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import Complete, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])

ran: list[str] = []


def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"18C in {city}"


class IntegerIds(OpenAIFake):
    """Gives each tool call an integer ``id`` (``7``, ``8``, ...)."""

    def call_id(self, index: int, call: FakeCall) -> Any:
        return 7 + index


@STREAMS
async def test_integer_call_ids_are_read_as_their_text(stream: bool) -> None:
    ran.clear()
    async with IntegerIds() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"}),
                                       FakeCall("get_weather", {"city": "Rome"})]),
                 FakeReply(text="Sunny in both."))
        async with OpenAIChatModel("z-ai/glm-5.1", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            events = [e async for e in ReActAgent("w", model, tools=[get_weather])
                      .stream("Weather in Paris and Rome?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in both."
    assert sorted(ran) == ["Paris", "Rome"] and len(fake.requests) == 2
    history = fake.bodies[1]["messages"]
    sent = [c["id"] for m in history if m["role"] == "assistant" for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert sent == answered == ["7", "8"]
