"""Vendor fault: a streamed tool call whose id or name comes after its arguments.

OpenAI opens a streamed call with its id and name and empty arguments; some
OpenAI-compatible servers send the id and the arguments first and the
``function.name`` in a later delta (https://github.com/vercel/ai/issues/14722),
or the first argument text before the call's id and name, with no ``index``
(https://github.com/Zoo-Code-Org/Zoo-Code/issues/695). The late name was read
as another call's (a nameless call with the arguments, a named one without
them): the agent ran neither tool ("unknown tool ``None``", a missing
argument) and the output tool was never seen as called. The late id or name
now names the open call.

Served by an OpenAI-style fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Forecast(BaseModel):
    city: str
    sky: str


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny"


class LateNames(OpenAIFake):
    """Streams each call as ``{index, id, arguments}`` then ``{index, name}``
    (``extra["late"] == "name"``), or as ``{arguments: <first half>}`` then
    ``{id, name, arguments: <rest>}`` without any ``index`` (``"id"``)."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if not reply.tool_calls:
            return super().render_events(reply, body)
        late = reply.extra["late"]
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        for i, call in enumerate(reply.tool_calls):
            args = orjson.dumps(dict(call.arguments)).decode()
            if late == "name":
                opening = {"index": i, "id": f"call_{i}", "type": "function",
                           "function": {"arguments": args}}
                rest = {"index": i, "function": {"name": call.name}}
            else:
                half = len(args) // 2
                opening = {"function": {"arguments": args[:half]}}
                rest = {"id": f"call_{i}", "type": "function",
                        "function": {"name": call.name, "arguments": args[half:]}}
            frames += [self.chunk(body, {"tool_calls": [opening]}),
                       self.chunk(body, {"tool_calls": [rest]})]
        frames.append(self.chunk(body, {}, "tool_calls"))
        return [b"data: " + orjson.dumps(f) + b"\n\n" for f in frames] + [b"data: [DONE]\n\n"]


async def _weather(late: str) -> list[Any]:
    async with LateNames() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})],
                           extra={"late": late}),
                 FakeReply(text="Sunny in Paris."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, tools=[get_weather])
            return [e async for e in agent.stream("Weather in Paris?")]


async def test_a_name_after_the_arguments_runs_the_tool() -> None:
    events = await _weather("name")
    results = [(e.name, e.output, e.is_error) for e in events if isinstance(e, ToolResult)]
    assert results == [("get_weather", "Paris: sunny", False)]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "Sunny in Paris."


async def test_arguments_before_the_id_without_index_run_the_tool() -> None:
    events = await _weather("id")
    results = [(e.name, e.output, e.is_error) for e in events if isinstance(e, ToolResult)]
    assert results == [("get_weather", "Paris: sunny", False)]


async def test_a_late_output_tool_name_is_the_output() -> None:
    async with LateNames() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response",
                                                {"city": "Paris", "sky": "clear"})],
                           extra={"late": "name"}))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, output=OutputConfig(strategy=ToolStrategy()))
            events = [e async for e in agent.stream("Weather in Paris?", Forecast)]
    assert isinstance(events[-1], Complete)
    assert events[-1].output == Forecast(city="Paris", sky="clear")
    assert len(fake.requests) == 1
