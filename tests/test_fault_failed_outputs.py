"""Vendor fault: the server could not read the tool call (or JSON) the model generated.

Groq parses the model's tool call on its side; when the model writes one it
cannot parse or match to the tools, the request fails with HTTP 400
``tool_use_failed`` ("Failed to call a function. Please adjust your prompt.
See 'failed_generation' for more details.", the model's text in
``failed_generation``; groq/groq-typescript#28, huggingface/smolagents#1119,
langchain-ai/langchain#31440), or, streamed, with an ``event: error`` after
the 200 (anomalyco/opencode#1018). The request was sound: the same request,
sampled again, usually succeeds. It was a ``BadRequestError`` raised at once,
so one bad sample failed an output call. It is now a failed generation, as
Gemini's ``MALFORMED_FUNCTION_CALL`` is: an output call asks again; a text
call ends with a typed, retryable ``ServerError`` and its state unchanged.
Groq's JSON mode fails the same way, with ``json_validate_failed`` ("Failed
to generate JSON. Please adjust your prompt."; build-with-groq/g1#23).

Served by an OpenAI fake answering as Groq does, streamed and whole."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    BadRequestError,
    Complete,
    Msg,
    NativeStrategy,
    OutputConfig,
    OutputRetry,
    ReActAgent,
    ServerError,
    ToolStrategy,
)
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
FAILED = {"message": "Failed to call a function. Please adjust your prompt. See "
          "'failed_generation' for more details.", "type": "invalid_request_error",
          "code": "tool_use_failed",
          "failed_generation": '<function=get_weather{"city": "Paris"}</function>'}


class GroqFake(OpenAIFake):
    """Groq: a failed tool call is a 400, or, streamed, an ``event: error``."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if reply.extra.get("tool_use_failed"):
            error = {"error": {**FAILED, "status_code": 400}}
            return [b"event: error\ndata: " + orjson.dumps(error) + b"\n\n"]
        return super().render_events(reply, body)


def failed_call(body: Any) -> FakeReply | FakeError:
    """The failed tool call, as Groq answers it to ``body``."""
    if body.get("stream"):
        return FakeReply(extra={"tool_use_failed": True})
    return FakeError(400, {"error": FAILED})


class Weather(BaseModel):
    city: str
    temperature_c: float


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


def _model(url: str, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("llama-3.3-70b-versatile", base_url=url, api_key="k",
                           stream=stream, settings=FAST)


@STREAMS
async def test_an_output_call_asks_again_after_a_failed_tool_call(stream: bool) -> None:
    async with GroqFake() as fake:
        fake.add(failed_call, FakeReply(tool_calls=[FakeCall(
            "generate_response", {"city": "Paris", "temperature_c": 18})]))
        async with _model(fake.url, stream) as model:
            agent = ReActAgent("g", model, tools=[get_weather],
                               output=OutputConfig(strategy=ToolStrategy()))
            events = [e async for e in agent.stream("Weather in Paris?", Weather)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Weather(city="Paris", temperature_c=18)
    assert any(isinstance(e, OutputRetry) for e in events)
    assert len(fake.requests) == 2
    assert fake.bodies[1]["messages"] == fake.bodies[0]["messages"]  # nothing of it kept


@STREAMS
async def test_a_text_call_ends_with_a_retryable_typed_error(stream: bool) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    async with GroqFake() as fake:
        fake.add(failed_call)
        async with _model(fake.url, stream) as model:
            agent = ReActAgent("g", model, tools=[get_weather])
            with pytest.raises(ServerError) as info:
                _ = [e async for e in agent.stream("Weather in Paris?", state=state)]
    assert info.value.retryable
    assert not isinstance(info.value, BadRequestError)
    assert state.to_json() == before


async def test_another_bad_request_is_still_raised_at_once() -> None:
    async with GroqFake() as fake:
        fake.add(FakeError(400, {"error": {"message": "'messages.1' : role must be one of "
                                           "system, user, assistant, tool",
                                           "type": "invalid_request_error"}}))
        async with _model(fake.url, False) as model:
            with pytest.raises(BadRequestError):
                await ReActAgent("g", model).call("Hi", Weather)
    assert len(fake.requests) == 1


async def test_json_mode_asks_again_after_json_validate_failed() -> None:
    bad_json = {"message": "Failed to generate JSON. Please adjust your prompt. See "
                "'failed_generation' for more details.", "type": "invalid_request_error",
                "code": "json_validate_failed",
                "failed_generation": '```json\n{\n   "city": "Paris",\n   "temperature_c": 1'}
    async with GroqFake() as fake:
        fake.add(FakeError(400, {"error": bad_json}),
                 FakeReply(text='{"city": "Paris", "temperature_c": 18}'))
        async with _model(fake.url, False) as model:
            agent = ReActAgent("g", model, output=OutputConfig(strategy=NativeStrategy()))
            reply = await agent.call("Weather in Paris?", Weather)
    assert reply.output == Weather(city="Paris", temperature_c=18)
    assert len(fake.requests) == 2
