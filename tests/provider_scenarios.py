"""Shared pieces of the provider end-to-end tests (tests/test_providers_*.py):
a business tool, an output schema, scripted replies, and checks that every
OpenAI-style vendor must pass against its fake server.

Each check takes the fake (already started) and a factory
``make(stream: bool, **kwargs) -> ChatModel`` pointing at it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import aclosing, contextmanager
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow.agent import ReActAgent
from agentflow.errors import ProviderConnectionError, ProviderError, StructuredOutputError
from agentflow.events import Complete, Event, OutputRetry
from agentflow.messages import Msg
from agentflow.model import (
    ChatModel,
    GenerateOptions,
)
from agentflow.providers import HttpSettings
from agentflow.reply import generate
from agentflow.state import AgentState

from .fakes.base import FakeCall, FakeReply, FakeServer

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.05, max_retries=2, read_timeout=5)
"""Transport settings for tests: tiny backoff, few retries."""

Factory = Callable[..., ChatModel]

_OPEN: list[Any] = []


def tracked(model: Any) -> Any:
    """``model``, closed by ``close_models()`` after the test."""
    _OPEN.append(model)
    return model


async def close_models() -> None:
    """Close every model ``tracked`` since the last call."""
    while _OPEN:
        await _OPEN.pop().aclose()


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    temperature_c: float
    condition: str


WEATHER: dict[str, Any] = {"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}
PROSE = "It is sunny in Paris today, about 18.5 degrees."


def get_weather(city: str) -> str:
    """The current weather of a city.

    Args:
        city: the city name.
    """
    return f"{city}: 18.5C, sunny"


def lookup() -> FakeReply:
    """The model calls the business tool."""
    return FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})], chunk_size=5)


def output_call(data: Any = None) -> FakeReply:
    """The model calls the output tool."""
    return FakeReply(tool_calls=[FakeCall("generate_response", data or WEATHER, id="call_out")],
                     chunk_size=7)


def agent_for(model: ChatModel, **kwargs: Any) -> ReActAgent:
    """An agent with the business tool."""
    return ReActAgent("weather", model, tools=[get_weather], **kwargs)


async def run(agent: ReActAgent, output: Any = Weather,
              state: AgentState | None = None) -> tuple[list[Event], Complete]:
    """All events of one call, and its ``Complete``."""
    async with aclosing(agent.stream("Weather in Paris?", output, state=state)) as stream:
        events = [e async for e in stream]
    complete = events[-1]
    assert isinstance(complete, Complete)
    return events, complete


async def run_failing(agent: ReActAgent, output: Any = Weather,
                      state: AgentState | None = None) -> tuple[list[Event], Exception]:
    """The events of one call whose output could not be had, and the typed error
    its stream raised in place of ``Complete`` (a ``StructuredOutputError``)."""
    events: list[Event] = []
    with pytest.raises(StructuredOutputError) as info:
        async with aclosing(agent.stream("Weather in Paris?", output, state=state)) as stream:
            async for event in stream:
                events.append(event)
    assert not any(isinstance(e, Complete) for e in events)
    return events, info.value


def system_texts(body: dict[str, Any]) -> list[str]:
    """The system messages of a recorded request."""
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "system"]


def forced_choices(fake: FakeServer) -> list[Any]:
    """Every ``tool_choice`` other than ``auto`` the fake ever received."""
    return [b["tool_choice"] for b in fake.bodies if b.get("tool_choice", "auto") != "auto"]


# ----------------------------------------------------------------------------- shared checks


async def check_tool_path_with_forcing(fake: FakeServer, make: Factory, stream: bool) -> None:
    """Tool path, output missed once, forced with ``tool_choice`` naming the output tool."""
    fake.add(lookup(), FakeReply(text=PROSE), output_call())
    model = make(stream)
    events, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert len(fake.bodies) == 3
    first = fake.bodies[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "generate_response"]
    assert "response_format" not in first
    assert fake.bodies[2]["tool_choice"] == {"type": "function",
                                             "function": {"name": "generate_response"}}
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["forcing"]


async def check_prompt_reminder_path(fake: FakeServer, make: Factory, stream: bool) -> None:
    """Tool path on a vendor without forced tool_choice: a transient reminder instead,
    and no forced tool_choice ever sent."""
    fake.add(lookup(), FakeReply(text=PROSE), output_call())
    state = AgentState()
    model = make(stream)
    events, complete = await run(agent_for(model), state=state)
    assert complete.output == Weather(**WEATHER)
    assert forced_choices(fake) == []
    assert not any("<system-reminder>" in t for t in system_texts(fake.bodies[1]))
    assert any("<system-reminder>" in t and "generate_response" in t
               for t in system_texts(fake.bodies[2]))
    if "specific" in model.profile.tool_choice_modes:  # emulated: the tool alone (C21)
        assert [t["function"]["name"] for t in fake.bodies[2]["tools"]] == [
            "generate_response"]
    assert not any("<system-reminder>" in m.text for m in state.memory)  # transient
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["forcing"]


async def check_state_unchanged_after_cut(fake: FakeServer, make: Factory) -> None:
    """A stream cut mid-way raises a partial connection error and leaves the state as it was."""
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    fake.add(lookup(), FakeReply(text=PROSE * 3, chunk_size=4, cut_after=4))
    with pytest.raises(ProviderConnectionError) as info:
        await run(agent_for(make(True)), state=state)
    assert info.value.partial
    assert state.to_json() == before
    assert len(fake.bodies) == 2  # no retry once streaming had started


async def check_retry_after(fake: FakeServer, make: Factory, stream: bool,
                            error: tuple[int, Any, dict[str, str]], wait: float = 0.2) -> None:
    """A 429 with Retry-After is retried after the asked wait."""
    status, body, headers = error
    fake.add_error(status, body, headers)
    fake.add(FakeReply(text="hello"))
    model = make(stream)
    start = time.monotonic()
    with retry_waits() as waits:
        reply = await generate(model, [Msg.user("hi")])
    elapsed = time.monotonic() - start
    assert reply.message.text == "hello"
    assert len(fake.bodies) == 2
    assert waits == [wait]  # the asked wait, read exactly (not rounded up, not a default)
    assert elapsed >= wait  # and slept (a loaded machine may take longer: no upper bound)


@contextmanager
def retry_waits() -> Iterator[list[float]]:
    """The waits the HTTP layer chose before its retries (its ``http.retry``
    log lines), in order, while the block runs."""
    waits: list[float] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found = re.search(r"\bwait=([0-9.]+)", record.getMessage())
            if "http.retry" in record.getMessage() and found:
                waits.append(float(found[1]))

    logger = logging.getLogger("agentflow.http")
    handler, level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield waits
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def expect_error(model: ChatModel, kind: type[ProviderError],
                       tools: Sequence[Any] = (), options: GenerateOptions | None = None,
                       messages: Sequence[Msg] | None = None) -> ProviderError:
    """The typed error one request raises."""
    with pytest.raises(kind) as info:
        await generate(model, messages or [Msg.user("hi")], tools, options)
    return info.value
