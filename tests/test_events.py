"""Tests for agentflow.events: the typed event union."""

import dataclasses
import typing

import pytest

import agentflow.events as events_module
from agentflow.events import (
    ApprovalRequested,
    AttemptDiscarded,
    CallStarted,
    Complete,
    Event,
    OutputPartial,
    OutputRetry,
    ReasoningChunk,
    StopReason,
    ThinkingChunk,
    ToolProgress,
    ToolResult,
    ToolUse,
)
from agentflow.messages import Msg
from agentflow.model import Usage

ALL = [CallStarted, ReasoningChunk, ThinkingChunk, ToolUse, ToolProgress, ToolResult,
       OutputPartial,
       OutputRetry, AttemptDiscarded, ApprovalRequested, Complete]


def _examples():
    return [
        CallStarted("c1", "agent", "a1"),
        ReasoningChunk("txt", 1),
        ThinkingChunk("hmm", 2),
        ToolUse("t1", "add", {"a": 1}),
        ToolProgress("t1", "add", 1, 2, "half way"),
        ToolResult("t1", "add", "2", False),
        OutputPartial({"name": "A"}),
        OutputRetry("forcing", 1, "no output"),
        AttemptDiscarded(1, "stream_error", "the stream broke"),
        ApprovalRequested((ToolUse("t2", "pay", {"amount": 5}),)),
        Complete(Msg.assistant("done"), None, Usage(1, 2, requests=1), "completed"),
    ]


def test_public_names_exist():
    for name in events_module.__all__:
        assert hasattr(events_module, name), name


def test_union_holds_exactly_the_design_events():
    assert set(typing.get_args(Event)) == set(ALL)


def test_type_discriminators_are_unique_literals():
    types = [e.type for e in _examples()]
    assert types == ["call_started", "reasoning_chunk", "thinking_chunk", "tool_use",
                     "tool_progress", "tool_result", "output_partial", "output_retry",
                     "attempt_discarded", "approval_requested", "complete"]
    for cls in ALL:
        hint = typing.get_type_hints(cls)["type"]
        assert typing.get_origin(hint) is typing.Literal


@pytest.mark.parametrize("event", _examples(), ids=lambda e: type(e).__name__)
def test_events_are_frozen_dataclasses(event):
    assert dataclasses.is_dataclass(event)
    first_field = dataclasses.fields(event)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, first_field, "changed")


def test_complete_defaults():
    c = Complete(Msg.assistant("x"), {"a": 1}, Usage(), "max_iters")
    assert (c.forced_retries, c.validation_retries) == (0, 0)
    assert c.stop_reason == "max_iters"
    assert c.output == {"a": 1}


def test_stop_reasons():
    assert set(typing.get_args(StopReason)) == {
        "completed", "structured_output", "max_iters", "stopped", "output_failed",
        "approval_required", "client_tool_calls",
    }


def test_events_support_match_by_class():
    seen = []
    for event in _examples():
        match event:
            case CallStarted(call_id=cid):
                seen.append(("start", cid))
            case ReasoningChunk(text=t, iteration=i):
                seen.append(("text", t, i))
            case ToolUse(name=n):
                seen.append(("use", n))
            case Complete(message=m, stop_reason=r):
                seen.append(("done", m.text, r))
            case _:
                pass
    assert seen == [("start", "c1"), ("text", "txt", 1), ("use", "add"),
                    ("done", "done", "completed")]


def test_events_compare_by_value():
    assert ReasoningChunk("a", 1) == ReasoningChunk("a", 1)
    assert ReasoningChunk("a", 1) != ReasoningChunk("a", 2)
    assert ReasoningChunk("a", 1) != ThinkingChunk("a", 1)
