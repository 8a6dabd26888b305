"""A plain whole OpenAI-style reply read at once (``plain_reply``): the
common answer to a call nobody reads the deltas of, folded straight into
the reply (``OpenAISending.whole_reply``) without a ``ChunkParser``, chunks
or a ``ReplyGuard``.

"Plain": only the keys of OpenAI's own ``chat.completion`` (so no error,
no vendor extension, no reasoning of any name), one choice, its ``message``
holding text only (no refusal, no tool call), a finish reason that is a
string (or none), and text or a finish reason.
What is read is exactly what ``ChunkParser.feed`` and ``ReplyGuard`` make of
such a payload (the same text, token log-probabilities, usage, normalized
finish reason, answering model and reply id); any other payload, or one
whose fields are of the wrong type, is not plain (``None``) and goes through
the chunk path, which reads it (or raises its typed error) as before.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agentflow.model import FinishReason, TokenLogprob, Usage
from agentflow.providers._openai_finish import finish_reason, parse_usage
from agentflow.providers._openai_logprobs import token_logprobs

__all__ = ["PlainReply", "plain_reply"]

_TOP_KEYS = frozenset(("id", "object", "created", "model", "choices", "usage",
                       "system_fingerprint", "service_tier"))
"""The keys a plain reply may have (OpenAI's ``chat.completion``)."""
_CHOICE_KEYS = frozenset(("index", "message", "finish_reason", "logprobs"))
"""The keys its one choice may have."""
_MESSAGE_KEYS = frozenset(("role", "content", "refusal", "tool_calls", "function_call",
                           "annotations"))
"""The keys its message may have (``refusal``, ``tool_calls`` and
``function_call`` only empty or null)."""

_SHAPE_ERRORS = (LookupError, TypeError, AttributeError, ValueError)


class PlainReply(NamedTuple):
    """What a plain whole reply holds (see the module docstring)."""

    text: str
    """The reply text (``""``: none)."""
    logprobs: Sequence[TokenLogprob]
    """Its tokens' log-probabilities (``()``: none, or no text)."""
    usage: Usage | None
    """Its usage (``None``: none reported, or all zero)."""
    reason: FinishReason | None
    """The normalized finish reason (``None``: the vendor gave none)."""
    model: str | None
    """The answering model, when the reply names it."""
    reply_id: str | None
    """The reply's id, when it has one."""


def plain_reply(data: Any) -> PlainReply | None:
    """``data`` (a whole chat-completion reply, parsed) read at once when it is
    plain, else ``None`` (see the module docstring). Only known keys make a
    plain reply: a key the chunk path may read (an error, a vendor's usage
    elsewhere, reasoning of any name...) sends the reply there."""
    if type(data) is not dict or not _TOP_KEYS.issuperset(data):
        return None
    get = data.get
    choices = get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or not _CHOICE_KEYS.issuperset(choice):
        return None
    message = choice.get("message")
    if (type(message) is not dict or not _MESSAGE_KEYS.issuperset(message)
            or message.get("refusal") or message.get("tool_calls")
            or message.get("function_call")):
        return None
    text = message.get("content")
    if text is None:
        text = ""
    elif type(text) is not str:
        return None
    raw: Any = choice.get("finish_reason")
    answered = type(raw) is str and raw != "null" and raw != ""
    if not answered and (raw is not None or not text):  # not a string, or no answer at all
        return None
    raw_usage = get("usage")
    try:
        logprobs = token_logprobs(choice.get("logprobs")) if text else ()
        usage = parse_usage(raw_usage) if raw_usage is not None else None
    except _SHAPE_ERRORS:  # the chunk path says what is wrong
        return None
    if get("object") == "error":
        return None
    model, reply_id = get("model"), get("id")
    reason: FinishReason | None = None
    if answered:
        reason = finish_reason(raw)
        if reason == "tool_calls":  # a label without a call: a plain end (ChunkParser.finish)
            reason = "stop"
    return PlainReply(
        text, logprobs, usage if usage is not None and usage.total_tokens else None, reason,
        model if type(model) is str and model else None,
        reply_id if type(reply_id) is str and reply_id else None)
