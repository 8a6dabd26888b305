"""The metadata keys agentflow sets on a ``Msg`` (``msg.metadata[KEY]``) and
the kinds of structured-output reminders (``ReminderType``); ``agentflow.messages``
re-exports them all."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ANSWER_FROM_REASONING",
    "CACHE_CONTROL",
    "CLOSED_TOOL_CALLS",
    "FIELD_PROBS",
    "STRUCTURED_OUTPUT",
    "STRUCTURED_OUTPUT_ATTEMPT",
    "STRUCTURED_OUTPUT_REMINDER",
    "STRUCTURED_OUTPUT_REMINDER_TYPE",
    "TOKEN_LOGPROBS",
    "ReminderType",
]

STRUCTURED_OUTPUT_REMINDER = "structured_output_reminder"
"""``True`` on a system message the structured-output engine injected."""

STRUCTURED_OUTPUT_REMINDER_TYPE = "structured_output_reminder_type"
"""A ``ReminderType`` value: which reminder the message is."""

CACHE_CONTROL = "cache_control"
"""``False`` forbids providers to put a prompt-cache breakpoint on the message
(set on transient messages, which the next request will not hold)."""

STRUCTURED_OUTPUT = "structured_output"
"""``True`` on the assistant message that holds a call's structured output as JSON."""

STRUCTURED_OUTPUT_ATTEMPT = "structured_output_attempt"
"""``True`` on an intermediate reply that failed to give the output (prose
instead of the output tool, invalid native JSON). Removed at call end."""

CLOSED_TOOL_CALLS = "closed_tool_calls"
"""On a reply cut at the token limit (finish reason ``length``): the ids of its
tool calls whose argument text was one whole JSON object all the same (the cut
took only padding after it: a model running on with newlines). Calls not listed may
be cut."""


TOKEN_LOGPROBS = "token_logprobs"
"""On a reply whose request asked for token log-probabilities and got them
(``GenerateOptions.logprobs``): its text's tokens, a ``TokenLogprobs`` (a
sequence of ``TokenLogprob``; a stored conversation read back holds a tuple),
in order (their texts joined are the reply's text)."""

FIELD_PROBS = "field_probs"
"""On a call's final structured-output message, when the reply it was read
from had ``TOKEN_LOGPROBS``: each top-level field of the output -> the
probability of the least likely token that wrote its value
(``agentflow.output.token_confidence.field_probabilities``)."""


ANSWER_FROM_REASONING = "answer_from_reasoning"
"""``True`` on a reply whose content was empty while its reasoning channel held
text (vLLM ``reasoning_content`` / ``reasoning``, and alike): the reasoning
is given as the reply's text too, since it holds the only answer, and this
says so. A structured output read from it carries the same flag on the
call's final message."""


class ReminderType(StrEnum):
    """Kinds of structured-output reminders.

    ``ENTER``/``EXIT`` mark the persisted transitions into and out of tool
    mode (never removed, so the prompt prefix stays cache-stable); ``PROMPT``
    marks a transient forcing reminder, removed when the call ends.
    """

    ENTER = "enter"
    EXIT = "exit"
    PROMPT = "prompt"
