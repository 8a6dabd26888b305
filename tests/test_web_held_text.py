"""A step's text held open on both UI encoders, event by event (the real
clients read the same in tests/test_web_retried_streams.py): neither
client lets a server flag a text message or part once it has ended, so a
step's text stays open until its attempt can no longer be discarded (its
tool calls, the structured output's call, the next step, the end, a
failure); a thought between two pieces of text goes beside it. A void
attempt (``stream_error``, ``degradation``) ends what it held flagged
``discarded``, names it, and the retry's text takes new ids; a superseded
partial output (a later JSON value replaces it) leaves the text as it is."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentflow.errors import ProviderConnectionError
from agentflow.events import (
    AttemptDiscarded,
    CallStarted,
    Complete,
    Event,
    OutputPartial,
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.messages import Msg
from agentflow.output.reminders import TOOL_NAME
from agentflow.usage import Usage
from agentflow.web.agui import AGUIEncoder
from agentflow.web.aisdk import UIMessageEncoder

FLAG = {"agentflow": {"discarded": "stream_error"}}
START = CallStarted("c", "ui", "a")
DONE = Complete(Msg.assistant("Hello world."), None, Usage(), "completed")
INTERLEAVED = [START, ThinkingChunk("Plan.", 1), ReasoningChunk("Hello", 1),
               ThinkingChunk("More.", 1)]
"""A step that thinks, says "Hello", thinks again (as Anthropic's models stream)."""


def sent(body: bytes) -> list[dict[str, Any]]:
    """The JSON of each ``data:`` frame (``[DONE]`` and pings left out)."""
    return [json.loads(frame.removeprefix(b"data: ")) for frame in body.split(b"\n\n")
            if frame.startswith(b"data: {")]


def agui(events: Iterable[Event], failure: BaseException | None = None) -> list[tuple[Any, ...]]:
    """``(type, messageId or toolCallId, [metadata])`` of each AG-UI event."""
    encoder = AGUIEncoder("t", "r")
    body = b"".join(encoder.encode(e) for e in events)
    if failure is not None:
        body += encoder.failure(failure)
    shown = []
    for event in sent(body):
        key = event.get("messageId") or event.get("toolCallId") or event.get("name")
        shown.append((event["type"], key, *(
            [event["metadata"]] if "metadata" in event else
            [event["value"].get("message_ids")] if event["type"] == "CUSTOM" else [])))
    return shown


def aisdk(events: Iterable[Event], failure: BaseException | None = None) -> list[tuple[Any, ...]]:
    """``(type, id or toolCallId, [providerMetadata or part_ids])`` of each UI message chunk."""
    encoder = UIMessageEncoder()
    body = b"".join(encoder.encode(e) for e in events)
    if failure is not None:
        body += encoder.failure(failure)
    shown = []
    for chunk in sent(body):
        discard = chunk["type"] == "data-attempt-discarded"
        extra = ([chunk["providerMetadata"]] if "providerMetadata" in chunk else
                 [chunk["data"].get("part_ids")] if discard else [])
        shown.append((chunk["type"], chunk.get("id") or chunk.get("toolCallId"), *extra))
    return shown


# --------------------------------------------------------------------------- AG-UI


def test_agui_a_thought_between_two_texts_leaves_the_steps_message_open() -> None:
    assert agui([*INTERLEAVED, ReasoningChunk(" world.", 1), DONE]) == [
        ("RUN_STARTED", None),
        ("REASONING_START", "c-1-reasoning"), ("REASONING_MESSAGE_START", "c-1-reasoning"),
        ("REASONING_MESSAGE_CONTENT", "c-1-reasoning"),
        ("REASONING_MESSAGE_END", "c-1-reasoning"), ("REASONING_END", "c-1-reasoning"),
        ("TEXT_MESSAGE_START", "c-1"), ("TEXT_MESSAGE_CONTENT", "c-1"),
        # the second thought goes beside the open text message, which is not ended...
        ("REASONING_START", "c-1-reasoning"), ("REASONING_MESSAGE_START", "c-1-reasoning"),
        ("REASONING_MESSAGE_CONTENT", "c-1-reasoning"),
        ("REASONING_MESSAGE_END", "c-1-reasoning"), ("REASONING_END", "c-1-reasoning"),
        # ...and the text after it continues the same message, ended at the end
        ("TEXT_MESSAGE_CONTENT", "c-1"), ("TEXT_MESSAGE_END", "c-1"),
        ("RUN_FINISHED", None)]


def test_agui_a_void_attempt_ends_its_held_text_flagged_and_the_retry_is_new() -> None:
    shown = agui([*INTERLEAVED, AttemptDiscarded(1, "stream_error", "cut"),
                  ReasoningChunk("Hello world.", 1), DONE])
    assert shown[11:] == [
        ("TEXT_MESSAGE_END", "c-1", FLAG),  # held open: ended only now, flagged
        ("REASONING_MESSAGE_END", "c-1-reasoning", FLAG), ("REASONING_END", "c-1-reasoning"),
        ("CUSTOM", "agentflow.attempt_discarded", ["c-1-reasoning", "c-1"]),
        ("TEXT_MESSAGE_START", "c-1-retry1"), ("TEXT_MESSAGE_CONTENT", "c-1-retry1"),
        ("TEXT_MESSAGE_END", "c-1-retry1"), ("RUN_FINISHED", None)]
    assert not [e for e in shown[:11] if e[0] == "TEXT_MESSAGE_END"]


def test_agui_the_held_text_ends_before_the_steps_calls_and_the_output_call() -> None:
    shown = agui([START, ReasoningChunk("Checking.", 1), ThinkingChunk("Hm.", 1),
                  ToolUse("t1", "lookup", {"q": "Ada"}), ToolUse("o1", TOOL_NAME, {"a": 1}),
                  ToolResult("t1", "lookup", "found", False), ReasoningChunk("Done.", 2), DONE])
    assert [e for e in shown if e[0] not in ("REASONING_MESSAGE_CONTENT",)] == [
        ("RUN_STARTED", None), ("TEXT_MESSAGE_START", "c-1"), ("TEXT_MESSAGE_CONTENT", "c-1"),
        ("REASONING_START", "c-1-reasoning"), ("REASONING_MESSAGE_START", "c-1-reasoning"),
        # the step's calls: the attempt cannot be discarded now, its text ends unflagged
        ("TEXT_MESSAGE_END", "c-1"),
        ("REASONING_MESSAGE_END", "c-1-reasoning"), ("REASONING_END", "c-1-reasoning"),
        ("TOOL_CALL_START", "t1"), ("TOOL_CALL_ARGS", "t1"), ("TOOL_CALL_END", "t1"),
        ("TOOL_CALL_RESULT", "t1-result"),  # (the output's own call is not shown)
        ("TEXT_MESSAGE_START", "c-2"), ("TEXT_MESSAGE_CONTENT", "c-2"),
        ("TEXT_MESSAGE_END", "c-2"), ("RUN_FINISHED", None)]


def test_agui_a_superseded_output_leaves_the_held_text_open_and_unflagged() -> None:
    shown = agui([START, ReasoningChunk('{"a": 1}', 1), OutputPartial({"a": 1}),
                  AttemptDiscarded(1, "superseded", "a later value"),
                  ReasoningChunk(' {"a": 2}', 1), OutputPartial({"a": 2}), DONE])
    types = [e[0] for e in shown]
    assert types.count("TEXT_MESSAGE_START") == 1 and types.count("TEXT_MESSAGE_END") == 1
    assert ("CUSTOM", "agentflow.attempt_discarded", None) in shown
    assert shown[-2:] == [("TEXT_MESSAGE_END", "c-1"), ("RUN_FINISHED", None)]


def test_agui_a_failure_ends_the_held_text_before_run_error() -> None:
    shown = agui(INTERLEAVED, ProviderConnectionError("gone"))
    assert shown[-4:] == [("TEXT_MESSAGE_END", "c-1"), ("REASONING_MESSAGE_END", "c-1-reasoning"),
                          ("REASONING_END", "c-1-reasoning"), ("RUN_ERROR", None)]


# --------------------------------------------------------------------------- AI SDK


def test_ai_sdk_a_thought_between_two_texts_holds_the_first_part_open() -> None:
    assert aisdk([*INTERLEAVED, ReasoningChunk(" world.", 1), DONE]) == [
        ("start", None), ("start-step", None),
        ("reasoning-start", "c-1-reasoning"), ("reasoning-delta", "c-1-reasoning"),
        ("reasoning-end", "c-1-reasoning"),
        ("text-start", "c-1-text"), ("text-delta", "c-1-text"),
        # the thought: the text part is held, not ended
        ("reasoning-start", "c-1-reasoning-2"), ("reasoning-delta", "c-1-reasoning-2"),
        ("reasoning-end", "c-1-reasoning-2"),
        # the text after it is a new part (a text part keeps no id in the client)
        ("text-start", "c-1-text-2"), ("text-delta", "c-1-text-2"),
        # both end together, when the attempt can no longer be discarded
        ("text-end", "c-1-text"), ("text-end", "c-1-text-2"),
        ("finish-step", None), ("finish", None)]


def test_ai_sdk_a_void_attempt_ends_its_held_parts_flagged_and_the_retry_is_new() -> None:
    shown = aisdk([*INTERLEAVED, AttemptDiscarded(1, "stream_error", "cut"),
                   ReasoningChunk("Hello world.", 1), DONE])
    assert shown[9:] == [
        ("text-end", "c-1-text", FLAG), ("reasoning-end", "c-1-reasoning-2", FLAG),
        ("data-attempt-discarded", None, ["c-1-reasoning", "c-1-text", "c-1-reasoning-2"]),
        ("text-start", "c-1-text-retry1"), ("text-delta", "c-1-text-retry1"),
        ("text-end", "c-1-text-retry1"), ("finish-step", None), ("finish", None)]
    assert not [c for c in shown[:9] if c[0] == "text-end"]


def test_ai_sdk_the_held_text_ends_before_the_steps_calls_and_the_output_call() -> None:
    shown = aisdk([START, ReasoningChunk("Checking.", 1), ThinkingChunk("Hm.", 1),
                   ToolUse("t1", "lookup", {"q": "Ada"}), ToolUse("o1", TOOL_NAME, {"a": 1}),
                   ToolResult("t1", "lookup", "found", False), ReasoningChunk("Done.", 2), DONE])
    assert shown == [
        ("start", None), ("start-step", None),
        ("text-start", "c-1-text"), ("text-delta", "c-1-text"),
        ("reasoning-start", "c-1-reasoning"), ("reasoning-delta", "c-1-reasoning"),
        ("text-end", "c-1-text"), ("reasoning-end", "c-1-reasoning"),  # unflagged
        ("tool-input-start", "t1"), ("tool-input-available", "t1"),
        ("tool-output-available", "t1"),  # (the output's own call is not shown)
        ("finish-step", None), ("start-step", None),
        ("text-start", "c-2-text"), ("text-delta", "c-2-text"), ("text-end", "c-2-text"),
        ("finish-step", None), ("finish", None)]


def test_ai_sdk_a_superseded_output_leaves_the_held_text_open_and_unflagged() -> None:
    shown = aisdk([START, ReasoningChunk('{"a": 1}', 1), OutputPartial({"a": 1}),
                   AttemptDiscarded(1, "superseded", "a later value"),
                   ReasoningChunk(' {"a": 2}', 1), OutputPartial({"a": 2}), DONE])
    assert [c for c in shown if c[0].startswith("text-")] == [
        ("text-start", "c-1-text"), ("text-delta", "c-1-text"), ("text-delta", "c-1-text"),
        ("text-end", "c-1-text")]
    assert ("data-attempt-discarded", None, []) not in shown  # superseded: no part named


def test_ai_sdk_a_failure_ends_the_held_parts_before_the_error() -> None:
    shown = aisdk(INTERLEAVED, ProviderConnectionError("gone"))
    assert shown[-3:] == [("text-end", "c-1-text"), ("reasoning-end", "c-1-reasoning-2"),
                          ("error", None)]


SUPERSEDED_THEN_CUT = [START, ReasoningChunk('{"a": 1}', 1), OutputPartial({"a": 1}),
                       AttemptDiscarded(1, "superseded", "a later value"),
                       ReasoningChunk(' {"a": 2', 1), OutputPartial({"a": 2}),
                       AttemptDiscarded(1, "stream_error", "cut"),
                       ReasoningChunk('{"a": 2}', 1), OutputPartial({"a": 2}), DONE]
"""A reply whose text held a first value, then a second, then was cut and sent again."""


def test_agui_text_held_past_a_superseded_output_is_retracted_by_a_later_cut() -> None:
    shown = agui(SUPERSEDED_THEN_CUT)
    ends = [e for e in shown if e[0] == "TEXT_MESSAGE_END"]
    assert ends == [("TEXT_MESSAGE_END", "c-1", FLAG), ("TEXT_MESSAGE_END", "c-1-retry1")]
    assert ("CUSTOM", "agentflow.attempt_discarded", ["c-1"]) in shown


def test_ai_sdk_text_held_past_a_superseded_output_is_retracted_by_a_later_cut() -> None:
    shown = aisdk(SUPERSEDED_THEN_CUT)
    assert [c for c in shown if c[0] in ("text-start", "text-end")] == [
        ("text-start", "c-1-text"), ("text-end", "c-1-text", FLAG),
        ("text-start", "c-1-text-retry1"), ("text-end", "c-1-text-retry1")]
    assert ("data-attempt-discarded", None, ["c-1-text"]) in shown
