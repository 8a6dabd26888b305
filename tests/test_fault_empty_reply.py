"""Vendor fault: a reply that says nothing right after tool results.

Anthropic documents it (platform.claude.com, *Handling stop reasons*, "Empty
responses with end_turn"): Claude sometimes ends its turn with stop reason
``end_turn`` and no content (2-3 output tokens), particularly after tool
results; sending the same request again does not help, a continuation prompt
in a new user message does. Any model can do the same, to the first message
too. A text call then completed with an empty answer, silently. Now the step
is asked once more with a prompt (continue after tool results, answer
otherwise; in that request only: the stored conversation holds neither the
empty reply nor the prompt), and a second empty reply raises
``EmptyReplyError``. Thinking alone is empty. Served by the Anthropic and
OpenAI fakes on 127.0.0.1, streamed and whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    AttemptDiscarded,
    Complete,
    EmptyReplyError,
    ReActAgent,
    StructuredOutputError,
)
from agentflow.middleware.empty_reply import ANSWER_PROMPT, CONTINUE_PROMPT
from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[Callable[[], FakeServer], Callable[..., ChatModel]]] = {
    "anthropic": (AnthropicFake, lambda url, s, **kw: AnthropicChatModel(
        "claude-sonnet-4-5", base_url=url, api_key="k", stream=s, settings=FAST, **kw)),
    "openai": (OpenAIFake, lambda url, s, **kw: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=s, settings=FAST, **kw)),
}
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
LOOKUP = FakeReply(tool_calls=[FakeCall("weather", {"city": "Paris"})])
EMPTY = FakeReply(text="", usage=(40, 3))


def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: 18C, sunny"


def texts(body: Any) -> list[str]:
    """Every text the request's messages carry (either wire format)."""
    found: list[str] = []
    for m in body["messages"]:
        content = m.get("content")
        if isinstance(content, str):
            found.append(content)
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "text":
                found.append(block["text"])
    return found


@pytest.mark.parametrize("vendor", list(VENDORS))
@STREAMS
async def test_an_empty_reply_after_tool_results_is_asked_to_continue(
        vendor: str, stream: bool) -> None:
    fake_type, make = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(LOOKUP, EMPTY, FakeReply(text="It is 18C and sunny in Paris."))
        model = make(fake.url, stream)
        state = AgentState()
        try:
            reply = await ReActAgent("a", model, tools=[weather]).call(
                "Weather in Paris?", state=state)
        finally:
            await model.aclose()
    assert reply.text == "It is 18C and sunny in Paris."
    assert len(fake.bodies) == 3  # the vendor took the continued request (roles valid)
    assert CONTINUE_PROMPT in texts(fake.bodies[2])
    assert texts(fake.bodies[2])[-1] == CONTINUE_PROMPT
    assert CONTINUE_PROMPT not in texts(fake.bodies[1])
    # the stored conversation: tool results, then the answer; no prompt, no empty turn
    assert [m.role for m in state.memory] == ["user", "assistant", "tool", "assistant"]
    assert all(CONTINUE_PROMPT not in m.text for m in state.memory)
    assert state.memory[-1].text == "It is 18C and sunny in Paris."


@pytest.mark.parametrize("vendor", list(VENDORS))
@STREAMS
async def test_an_empty_reply_again_raises_a_typed_error(vendor: str, stream: bool) -> None:
    fake_type, make = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(LOOKUP, EMPTY, EMPTY)
        model = make(fake.url, stream)
        state = AgentState()
        try:
            with pytest.raises(EmptyReplyError) as caught:
                await ReActAgent("a", model, tools=[weather]).call("Weather?", state=state)
        finally:
            await model.aclose()
    assert len(fake.bodies) == 3 and not caught.value.retryable
    assert "after it was asked to continue" in str(caught.value)
    assert caught.value.usage is not None and caught.value.usage.requests == 3
    assert state.memory == []  # a failed call leaves its state as it was


@STREAMS
async def test_a_thinking_only_reply_is_empty(stream: bool) -> None:
    async with AnthropicFake() as fake:
        fake.add(LOOKUP, FakeReply(thinking="The tool answered; I am done."),
                 FakeReply(text="18C in Paris."))
        model = VENDORS["anthropic"][1](fake.url, stream, thinking_budget=1024)
        state = AgentState()
        try:
            reply = await ReActAgent("a", model, tools=[weather]).call("Weather?", state=state)
        finally:
            await model.aclose()
    assert reply.text == "18C in Paris." and len(fake.bodies) == 3
    assert texts(fake.bodies[2])[-1] == CONTINUE_PROMPT
    assert "The tool answered; I am done." not in str(fake.bodies[2]["messages"])


async def test_stream_readers_see_the_empty_attempt_discarded() -> None:
    async with AnthropicFake() as fake:
        fake.add(LOOKUP, EMPTY, FakeReply(text="18C."))
        model = VENDORS["anthropic"][1](fake.url, True)
        try:
            events = [e async for e in ReActAgent("a", model, tools=[weather]).stream("W?")]
        finally:
            await model.aclose()
    discarded = [e for e in events if isinstance(e, AttemptDiscarded)]
    assert [(e.reason, e.iteration) for e in discarded] == [("empty_reply", 2)]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "18C."


@pytest.mark.parametrize("vendor", list(VENDORS))
@STREAMS
async def test_an_empty_first_reply_is_asked_to_answer(vendor: str, stream: bool) -> None:
    """No tool results before it: the first reply empty was a silent empty
    success (a call that "completed" with no answer). Now it is asked again,
    as after tool results, with a prompt to answer."""
    fake_type, make = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(EMPTY, FakeReply(text="Hello!"))
        model = make(fake.url, stream)
        state = AgentState()
        try:
            events = [e async for e in ReActAgent("a", model, tools=[weather]).stream(
                "Hi", state=state)]
        finally:
            await model.aclose()
    assert isinstance(events[-1], Complete) and events[-1].message.text == "Hello!"
    assert [e.reason for e in events if isinstance(e, AttemptDiscarded)] == ["empty_reply"]
    assert len(fake.bodies) == 2  # the vendor took the request with the prompt (roles valid)
    assert texts(fake.bodies[1])[-1] == ANSWER_PROMPT
    assert ANSWER_PROMPT not in texts(fake.bodies[0])
    assert [m.role for m in state.memory] == ["user", "assistant"]  # no prompt, no empty turn
    assert state.memory[-1].text == "Hello!"


@pytest.mark.parametrize("vendor", list(VENDORS))
@STREAMS
async def test_an_empty_first_reply_again_raises_a_typed_error(vendor: str, stream: bool) -> None:
    fake_type, make = VENDORS[vendor]
    async with fake_type() as fake:
        fake.add(EMPTY, EMPTY)
        model = make(fake.url, stream)
        state = AgentState()
        try:
            with pytest.raises(EmptyReplyError) as caught:
                await ReActAgent("a", model).call("Hi", state=state)
        finally:
            await model.aclose()
    assert len(fake.bodies) == 2 and "after it was asked to answer" in str(caught.value)
    assert caught.value.usage is not None and caught.value.usage.requests == 2
    assert state.memory == []


async def test_each_step_is_asked_at_most_once_and_a_step_that_answered_clears_it() -> None:
    """The prompt fits where the empty reply came (answer, or continue after
    tool results); a step that did answer clears it for later steps."""
    async with AnthropicFake() as fake:
        fake.add(EMPTY, LOOKUP, EMPTY, LOOKUP, EMPTY, FakeReply(text="Done."))
        model = VENDORS["anthropic"][1](fake.url, False)
        try:
            reply = await ReActAgent("a", model, tools=[weather]).call("W?")
        finally:
            await model.aclose()
    assert reply.text == "Done." and len(fake.bodies) == 6
    assert [texts(b)[-1] for b in fake.bodies][1::2] == [
        ANSWER_PROMPT, CONTINUE_PROMPT, CONTINUE_PROMPT]
    assert all(texts(b)[-1] not in (ANSWER_PROMPT, CONTINUE_PROMPT) for b in fake.bodies[::2])


class Weather(BaseModel):
    temp: int


@STREAMS
async def test_a_structured_call_that_keeps_replying_nothing_says_so(stream: bool) -> None:
    """The output engine's answer to empty replies agrees: re-asked by a
    transient user turn (the empty turn never sent back), then a typed error
    that says the reply was empty, not that the model wrote prose."""
    async with AnthropicFake() as fake:
        fake.add(LOOKUP, *[EMPTY] * 4)
        model = VENDORS["anthropic"][1](fake.url, stream)
        try:
            reply = await ReActAgent("a", model, tools=[weather]).call("W?", Weather)
        finally:
            await model.aclose()
    with pytest.raises(StructuredOutputError, match="last reply was empty"):
        _ = reply.output
    assert len(fake.bodies) == 4  # each taken: no empty assistant turn was sent back
