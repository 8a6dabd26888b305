"""Vendor fault: TGI 2.x streams a tool call as one object holding its grammar text.

Text Generation Inference before 3.0 streams a tool call with
``delta.tool_calls`` as one object, not a list (its router's ``ToolCallDelta
{ tool_calls: DeltaToolCall }``), ``"id": ""``, ``"name": null`` on every
chunk, and as ``arguments`` the tool grammar's whole output token by token:
``{"function": {"_name": "get_weather", "location": "Paris"}}``
(https://github.com/huggingface/text-generation-inference/issues/2794). The
object was iterated as a list of calls and the reply failed as malformed;
read as one call it still had no name. The object is now the one call, and a
nameless call whose arguments are that envelope is the call it names.

Served by an OpenAI-style fake speaking TGI 2.4's stream, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply, fake_tokens
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Forecast(BaseModel):
    city: str
    sky: str


def get_weather(location: str) -> str:
    """The weather of a place.

    Args:
        location: the city.
    """
    return f"{location}: sunny"


class TGI24(OpenAIFake):
    """Streams a tool call as TGI 2.4 does: for each token of the grammar's output
    ``{"function": {"_name": ..., <arguments>}}``, a chunk whose ``tool_calls`` is
    one object with ``"id": ""`` and ``"name": null``."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if not reply.tool_calls:
            return super().render_events(reply, body)
        call = reply.tool_calls[0]
        grammar = orjson.dumps({"function": {"_name": call.name, **dict(call.arguments)}})
        frames = []
        for token in fake_tokens(grammar.decode()):
            frames.append({"object": "chat.completion.chunk", "id": "", "created": 1,
                           "model": "tgi", "system_fingerprint": "2.4.1-sha-d2ed52f",
                           "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": {
                               "index": 0, "id": "", "type": "function",
                               "function": {"name": None, "arguments": token}}},
                               "logprobs": None, "finish_reason": None}], "usage": None})
        frames[-1]["choices"][0]["finish_reason"] = "eos_token"
        return [b"data: " + orjson.dumps(f) + b"\n\n" for f in frames] + [b"data: [DONE]\n\n"]


def _model(fake: OpenAIFake) -> OpenAIChatModel:
    return OpenAIChatModel("tgi", base_url=fake.url, api_key="k", stream=True, settings=FAST)


async def test_a_tgi_tool_call_runs_the_tool() -> None:
    async with TGI24() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"location": "Paris"})]),
                 FakeReply(text="Sunny in Paris."))
        async with _model(fake) as model:
            events = [e async for e in ReActAgent("t", model, tools=[get_weather]).stream(
                "Weather in Paris?")]
    results = [(e.name, e.output, e.is_error) for e in events if isinstance(e, ToolResult)]
    assert results == [("get_weather", "Paris: sunny", False)]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "Sunny in Paris."


async def test_a_tgi_output_call_is_the_output() -> None:
    async with TGI24() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response",
                                             {"city": "Paris", "sky": "clear"})]))
        async with _model(fake) as model:
            agent = ReActAgent("t", model, output=OutputConfig(strategy=ToolStrategy()))
            events = [e async for e in agent.stream("Weather in Paris?", Forecast)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Forecast(city="Paris", sky="clear")
    assert len(fake.requests) == 1
