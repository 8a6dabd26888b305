"""How a call's loop ends and what the call returns: applying a middleware
decision to the loop (``stops``), and committing the call to its state
(``commit``: the state's memory and flag, the ``Complete`` event)."""

from __future__ import annotations

import logging

from agentflow.acting import not_executed
from agentflow.errors import ContentFilteredError, ServerError, StructuredOutputError
from agentflow.events import Complete
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ToolUseBlock
from agentflow.middleware.base import Decision, Finish, ReasonAgain

__all__ = ["commit", "debug_enabled", "last_reply", "output_failure", "stops"]

_ROOT_LOGGER = logging.getLogger("agentflow")
_ENDS_TURN = (Finish, ReasonAgain)
"""Decisions that leave the reply's tool calls unrun."""


def debug_enabled() -> bool:
    """Whether agentflow logs at DEBUG (checked before building debug lines)."""
    return _ROOT_LOGGER.isEnabledFor(logging.DEBUG)


_FILTERED = frozenset({"content_filter", "refusal"})


def stops(ex: CallExecution, calls: list[ToolUseBlock], decision: Decision | None) -> bool:
    """Apply a ``Finish`` / ``ReasonAgain`` decision (or a reply without tool
    calls: ``calls``, the reply's) to ``ex``; whether the loop ends here.

    Tool calls a decision leaves unrun are answered ``not_executed``, so the
    memory never holds a call without its result.

    Raises:
        ServerError: the reply that would end the call has finish reason
            ``error``: the vendor said the generation failed (DeepSeek's
            ``insufficient_system_resource``, GLM's ``network_error``, a
            router's ``error``, Gemini's ``MALFORMED_FUNCTION_CALL``); its
            text, empty or cut, is not an answer (never ``completed``).
        ContentFilteredError: that reply has finish reason ``content_filter``
            or ``refusal`` and no text: there is no answer.
    """
    if isinstance(decision, _ENDS_TURN) and calls:  # a tuple made once, not a union per call
        ex.memory.append(not_executed(calls))
    if isinstance(decision, Finish):
        ex.stop_reason = ex.stop_reason or decision.stop_reason
        return True
    if isinstance(decision, ReasonAgain):
        ex.memory.extend(decision.messages)
        return False
    if not calls:
        if ex.last_finish_reason == "error" and not ex.stop_reason:
            raise ServerError(
                "the vendor ended the reply with an error finish reason (the generation "
                "failed on its side); its text is not an answer: send the call again",
                vendor=str(getattr(ex.model, "vendor", "") or ""))
        if (ex.last_finish_reason in _FILTERED and not ex.stop_reason
                and not last_reply(ex).text.strip()):
            raise ContentFilteredError(
                f"the vendor filtered the reply or the model refused (finish reason "
                f"{ex.last_finish_reason!r}{ex.finish_said}) and it holds no text: "
                "there is no answer",
                finish_reason=ex.last_finish_reason,
                vendor=str(getattr(ex.model, "vendor", "") or ""))
        ex.stop_reason = ex.stop_reason or "completed"
        return True
    return False


def commit(ex: CallExecution) -> Complete:
    """Write the call's memory, flag and input ids to its state; the ``Complete`` event
    (its message: the call's reply, or the last assistant message, carrying
    the structured result; the message itself, not a copy, when there is no
    result to attach: a text call)."""
    reply = ex.reply or last_reply(ex)
    result = ex.structured_result()
    if result is not None or reply.result is not None:
        reply = reply.replace(result=result)
    ex.state.memory = ex.memory
    ex.state.so_tool_active = ex.so_tool_active
    if ex.inputs:  # what a later call without a new message grounds on
        ex.state.input_ids = tuple(m.id for m in ex.inputs)
    if _ROOT_LOGGER.isEnabledFor(logging.DEBUG):  # debug_enabled, inline
        ex.log.debug("call.end", stop_reason=ex.stop_reason, requests=ex.usage.requests)
    return Complete(
        message=reply,
        output=ex.output if ex.completed else None,
        usage=ex.usage,
        stop_reason=ex.stop_reason or "completed",
        forced_retries=ex.force_count,
        validation_retries=ex.validation_retries,
        spans=ex.spans if ex.completed else {},
        finish_reason=ex.last_finish_reason,
    )


def last_reply(ex: CallExecution) -> Msg:
    """The call's last assistant message (an empty one when there is none)."""
    m: Msg  # (mypy reads reversed() of a list of a generic class as Any)
    for m in reversed(ex.memory):
        if m.role == "assistant":
            return m
    return Msg.assistant("")


def output_failure(complete: Complete) -> StructuredOutputError:
    """The typed error of a call that asked for an output and got none: the one
    its reply's ``output`` raises (``StructuredOutputError`` or a subclass,
    carrying the model's raw text and the attempts)."""
    result = complete.message.result
    if result is not None and result.error is not None:
        return result.error
    return StructuredOutputError(  # a Complete made without its result (never by commit)
        f"the call ended without its structured output (stop reason {complete.stop_reason!r})",
        raw_text=complete.message.text, attempts=complete.usage.requests)
