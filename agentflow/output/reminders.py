"""The messages the structured-output engine adds to a conversation.

ENTER/EXIT reminders persist (they mark transitions in and out of tool mode
and keep the prompt prefix stable for provider caches); PROMPT reminders are
transient: tagged ``CACHE_CONTROL=False`` and removed when the call ends.
"""

from __future__ import annotations

from typing import Literal

from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    Msg,
    ReminderType,
)

__all__ = ["TOOL_NAME", "force_reminder", "invalid_call", "invalid_reply", "nudge",
           "persistent_reminder", "prompt_instruction", "transient"]

TOOL_NAME = "generate_response"
"""The per-call output tool."""

_ENTER = (
    "Structured output mode is active. When you have the final answer, call the "
    "`{tool}` tool exactly once with it. Do not give the final answer as free text."
)
_EXIT = (
    "Structured output mode has ended: the `{tool}` tool is no longer available. "
    "Answer in plain text."
)
_FORCE = (
    "<system-reminder>You have not called the `{tool}` tool. Call `{tool}` now, exactly "
    "once, with your complete final answer as its arguments. Do not reply with free "
    "text.</system-reminder>"
)
_NUDGE = "Now call the `{tool}` tool with your final answer."
# after an output that failed its checks: what was wrong, then what to do
_WRONG = "Your last output is not valid:\n{detail}\n"
_FORCE_FIX = (
    "<system-reminder>You have not called the `{tool}` tool, and your last output is not "
    "valid:\n{detail}\nCall `{tool}` now, exactly once, with the corrected output as its "
    "arguments (every listed field fixed). Do not reply with free text.</system-reminder>"
)
_NUDGE_FIX = "Now call the `{tool}` tool with the corrected output (every listed field fixed)."
_INVALID_CALL = ("Invalid output for {tool}:\n{detail}\n"
                 "Call {tool} again with every listed field fixed.")
_INVALID_REPLY = ("Your reply is not a valid output:\n{detail}\n"
                  "Reply again with only the corrected JSON (every listed field fixed).")
_PROMPT = (
    "Reply with a single JSON value that validates against this JSON Schema, and "
    "nothing else (no prose, no code fences):\n{schema}"
)


def transient(text: str, role: Literal["system", "user"] = "system") -> Msg:
    """A message for the next request only (PROMPT type, never cached)."""
    return Msg(
        role,
        text,
        metadata={
            STRUCTURED_OUTPUT_REMINDER: True,
            STRUCTURED_OUTPUT_REMINDER_TYPE: ReminderType.PROMPT.value,
            CACHE_CONTROL: False,
        },
    )


# (text, reminder type) of the persistent reminders: formatted once, not per call
_PERSISTENT = {
    ReminderType.ENTER: (_ENTER.format(tool=TOOL_NAME), ReminderType.ENTER.value),
    ReminderType.EXIT: (_EXIT.format(tool=TOOL_NAME), ReminderType.EXIT.value),
}


def persistent_reminder(kind: Literal[ReminderType.ENTER, ReminderType.EXIT]) -> Msg:
    """The ENTER or EXIT system reminder (kept in memory for good)."""
    text, value = _PERSISTENT[kind]
    return Msg("system", text, None,
               {STRUCTURED_OUTPUT_REMINDER: True, STRUCTURED_OUTPUT_REMINDER_TYPE: value})


def force_reminder(detail: str | None = None) -> Msg:
    """The transient system reminder that asks for the output tool (vendors that
    cannot force a tool choice); with ``detail`` (what was wrong with the
    call's last output, one line per failing field path) when that output
    failed its checks, so the model fixes it rather than repeats it."""
    if detail:
        return transient(_FORCE_FIX.format(tool=TOOL_NAME, detail=detail))
    return transient(_FORCE.format(tool=TOOL_NAME))


def nudge(detail: str | None = None) -> Msg:
    """The transient user turn that goes with a forced ``tool_choice``, so the
    request never ends on the assistant's own turn (a prefill, which newer
    Anthropic and Gemini models refuse); with ``detail`` as ``force_reminder``."""
    if detail:
        return transient(_WRONG.format(detail=detail) + _NUDGE_FIX.format(tool=TOOL_NAME),
                         role="user")
    return transient(_NUDGE.format(tool=TOOL_NAME), role="user")


def invalid_call(detail: str) -> str:
    """The output tool's error result for arguments that failed their checks
    (``detail``: one line per failing field path)."""
    return _INVALID_CALL.format(tool=TOOL_NAME, detail=detail)


def invalid_reply(detail: str) -> Msg:
    """The transient user turn that answers a reply text (native response
    format, prompt strategy) whose output failed its checks (``detail``)."""
    return transient(_INVALID_REPLY.format(detail=detail), role="user")


def prompt_instruction(schema_json: str) -> Msg:
    """The prompt strategy's instruction: the schema, and the word JSON (which
    vendors' JSON modes require)."""
    return Msg.system(_PROMPT.format(schema=schema_json))
