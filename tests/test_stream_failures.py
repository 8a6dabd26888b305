"""``stream()`` never ends silently without the output it was asked for.

For every way a call can fail to get its output (forcing spent, validation
retries spent, several outputs at once under either policy, a prompt-strategy
reply that never parses, a reply cut at the token limit), the stream yields
every event of the call up to that point and then raises the very
``StructuredOutputError`` that ``call()``'s ``reply.output`` raises (same
class, same raw text, same attempt count), never a ``Complete`` without the
output. The state is committed as ``call()`` commits it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    CallStarted,
    Complete,
    ModelProfile,
    MultipleStructuredOutputsError,
    OutputConfig,
    OutputRetry,
    OutputTruncatedError,
    ReActAgent,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from agentflow.events import Event, OutputPartial, ReasoningChunk
from agentflow.testing import Call, Reply, ScriptedModel

GR = "generate_response"
SPECIFIC = ModelProfile()  # every tool_choice mode (OpenAI-like)


class Contact(BaseModel):
    name: str
    email: str


def output(args: Any) -> Reply:
    return Reply(tool_calls=[Call(GR, args)], chunk_size=7)


TWO = Reply(tool_calls=[Call(GR, {"name": "Ann", "email": "a@x"}),
                        Call(GR, {"name": "Bob", "email": "b@x"})])

Case = tuple[list[Reply | str], OutputConfig, dict[str, Any], type[StructuredOutputError]]

CASES: dict[str, Case] = {
    "forcing exhausted": (
        ["I think it is Ann.", "Ann, really.", "Still Ann.", "Ann!"],
        OutputConfig(max_forcing=3), {}, StructuredOutputError),
    "validation retries exhausted": (
        [output({"name": 1}), output({"name": 2}), output({"email": 3})],
        OutputConfig(output_retries=2), {}, StructuredOutputValidationError),
    "multiple outputs, retry policy": (
        [TWO] * 8, OutputConfig(output_retries=2), {}, StructuredOutputError),
    "multiple outputs, raise policy": (
        [TWO], OutputConfig(on_multiple="raise"), {}, MultipleStructuredOutputsError),
    "prompt strategy, no parse": (
        [Reply(text="Her name is Ann, e-mail unknown.", chunk_size=5),
         Reply(text="Sorry: Ann.", chunk_size=5), Reply(text="{not json", chunk_size=5),
         Reply(text="still nothing", chunk_size=5)],
        OutputConfig(max_forcing=3, output_retries=2), {"strategy": "prompt"},
        StructuredOutputValidationError),
    "cut at the token limit": (
        [Reply(tool_calls=[Call(GR, '{"name": "Ann", "ema')], finish_reason="length")],
        OutputConfig(), {}, OutputTruncatedError),
}


def _agent(case: Case) -> ReActAgent:
    replies, config, _, _ = case
    return ReActAgent("failing", ScriptedModel(replies, profile=SPECIFIC), output=config)


async def _call_error(case: Case) -> StructuredOutputError:
    """The error ``call()`` gives for the case: raised by the call (a
    ``"raise"`` policy) or by ``reply.output``."""
    kw = case[2]
    try:
        reply = await _agent(case).call("Who?", Contact, state=AgentState(), **kw)
        _ = reply.output
    except StructuredOutputError as exc:
        return exc
    raise AssertionError("call() produced an output")


def _shape(event: Event) -> tuple[Any, ...]:
    """What an event says, without its per-call ids."""
    if isinstance(event, CallStarted):
        return ("call_started",)
    if isinstance(event, OutputRetry):
        return (event.type, event.reason, event.attempt)
    if isinstance(event, ReasoningChunk):
        return (event.type, event.text, event.iteration)
    if isinstance(event, OutputPartial):
        return (event.type, repr(event.data))
    return (event.type,)


@pytest.mark.parametrize("name", list(CASES))
async def test_stream_raises_the_calls_typed_error_after_every_event(name: str) -> None:
    case = CASES[name]
    expected = await _call_error(case)
    assert type(expected) is case[3]

    state = AgentState()
    events: list[Event] = []
    with pytest.raises(StructuredOutputError) as info:
        async with aclosing(_agent(case).stream("Who?", Contact, state=state,
                                                **case[2])) as stream:
            async for event in stream:
                events.append(event)
    error = info.value
    assert type(error) is type(expected)
    assert (error.raw_text, error.attempts, error.reason) == (
        expected.raw_text, expected.attempts, expected.reason)
    assert str(error) == str(expected)
    assert not any(isinstance(e, Complete) for e in events)

    # every event before the error was delivered: the same events, in the same
    # order, as the loop yields when it ends with a Complete (as call() runs it)
    agent = _agent(case)
    reference = [e async for e in agent._events(
        "Who?", Contact, AgentState(), case[2].get("strategy"), None, None, strict=False)
    ] if case[1].on_multiple != "raise" else None
    if reference is not None:
        assert isinstance(reference[-1], Complete) and reference[-1].output is None
        assert [_shape(e) for e in events] == [_shape(e) for e in reference[:-1]]
    assert isinstance(events[0], CallStarted)
    retries = [e for e in events if isinstance(e, OutputRetry)]
    if name.startswith("forcing"):
        assert [r.reason for r in retries] == ["forcing"] * 3
    elif name.startswith("validation"):
        assert [r.reason for r in retries] == ["validation"] * 2
    elif name == "multiple outputs, retry policy":
        assert [r.reason for r in retries] == ["multiple"] * 2 and error.reason == "multiple"
    elif name.startswith("prompt"):
        assert retries and any(isinstance(e, ReasoningChunk) for e in events)


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][1].on_multiple != "raise"])
async def test_the_state_is_committed_as_call_commits_it(name: str) -> None:
    case = CASES[name]
    via_call, via_stream = AgentState(), AgentState()
    await _agent(case).call("Who?", Contact, state=via_call, **case[2])
    with pytest.raises(StructuredOutputError):
        async for _ in _agent(case).stream("Who?", Contact, state=via_stream, **case[2]):
            pass
    assert [(m.role, m.text) for m in via_stream.memory] == [
        (m.role, m.text) for m in via_call.memory]
    assert via_stream.so_tool_active == via_call.so_tool_active


async def test_a_call_without_an_output_type_still_ends_with_complete() -> None:
    agent = ReActAgent("plain", ScriptedModel(["just text"]))
    events = [e async for e in agent.stream("hi")]
    assert isinstance(events[-1], Complete)
    assert events[-1].output is None and events[-1].message.text == "just text"


async def test_the_readme_match_pattern_sees_the_error_not_a_none_output() -> None:
    """The pattern of the README: ``case Complete(output=c)`` can no longer see
    ``None`` for a call that asked for a ``Contact``; the failure is an exception
    the caller handles (``except StructuredOutputError as e: e.raw_text``)."""
    seen: list[Any] = []
    raw: list[str] = []
    agent = ReActAgent("readme", ScriptedModel(["prose", "prose", "prose", "prose"],
                                               profile=SPECIFIC))
    handle: Callable[[Any], None] = seen.append
    try:
        async for event in agent.stream("Who?", Contact):
            match event:
                case Complete(output=contact):
                    handle(contact)
    except StructuredOutputError as exc:
        raw.append(exc.raw_text)
    assert seen == [] and raw == ["prose"]
