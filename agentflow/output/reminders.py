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

__all__ = ["TOOL_NAME", "force_reminder", "nudge", "persistent_reminder", "prompt_instruction",
           "transient"]

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


def force_reminder() -> Msg:
    """The transient system reminder that asks for the output tool (vendors that
    cannot force a tool choice)."""
    return transient(_FORCE.format(tool=TOOL_NAME))


def nudge() -> Msg:
    """The transient user turn that goes with a forced ``tool_choice``, so the
    request never ends on the assistant's own turn (a prefill, which newer
    Anthropic and Gemini models refuse)."""
    return transient(_NUDGE.format(tool=TOOL_NAME), role="user")


def prompt_instruction(schema_json: str) -> Msg:
    """The prompt strategy's instruction: the schema, and the word JSON (which
    vendors' JSON modes require)."""
    return Msg.system(_PROMPT.format(schema=schema_json))
