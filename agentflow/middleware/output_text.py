"""The native and prompt paths of the structured-output engine (DESIGN.md §3
rule 4): the reply text is the output (``text_reply``), parsed tolerantly;
accepted (``accept_text``) or asked again with the errors as a user message
(``reject_text``), bounded by the output retry budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agentflow.errors import ModelRetry, StructuredOutputValidationError
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Decision, Finish, ReasonAgain
from agentflow.middleware.output_acceptance import REJECTED, accepted
from agentflow.middleware.output_failures import (
    error_list,
    final_error,
    mark_attempt,
    spend_retry,
    truncated,
)
from agentflow.middleware.output_hints import failure_detail
from agentflow.output.config import OutputConfig
from agentflow.output.parsing import NoJSONFound, closed_json, parse_output
from agentflow.output.reminders import invalid_reply, transient

__all__ = ["accept_text", "reject_text", "text_reply"]


def text_reply(
    config: OutputConfig,
    ex: CallExecution,
    run: OutputRun,
    reply: Msg,
    on_prose: Callable[[CallExecution, OutputRun, Msg], Decision | None] | None = None,
) -> Decision:
    """Native and prompt paths: the reply text is the output. ``on_prose``
    is asked first about a reply that holds no JSON value at all (its
    decision wins; ``None``: answered like any invalid output). A reply cut
    at the token limit is refused unless its value had closed (``closed_json``:
    only padding or the end token was lost)."""
    if ex.last_finish_reason == "length" and not closed_json(reply.text):
        truncated(ex, run, reply.text)
        return Finish("output_failed")
    try:
        value = accepted(config, ex, run, parse_output(reply.text, run.spec))
    except NoJSONFound as exc:
        decision = on_prose(ex, run, reply) if on_prose is not None else None
        return decision if decision is not None else reject_text(config, ex, run, reply, exc)
    except REJECTED as exc:
        return reject_text(config, ex, run, reply, exc)
    return accept_text(ex, run, reply, value)


def reject_text(
    config: OutputConfig, ex: CallExecution, run: OutputRun, reply: Msg, exc: Exception
) -> Decision:
    """A text output that failed: ask again with the errors (``failure_detail``),
    or give up."""
    detail = failure_detail(exc)
    run.last_invalid = exc
    if config.on_invalid == "raise":
        raise final_error(exc, ex, reply.text) or StructuredOutputValidationError(
            f"the output failed validation (on_invalid='raise'):\n{detail}",
            errors=error_list(exc),
            raw_text=reply.text,
            attempts=ex.usage.requests,
        ) from None
    if not spend_retry(config, ex, run, "validation", detail):
        ex.output_error = final_error(exc, ex, reply.text) or StructuredOutputValidationError(
            f"no valid output after {ex.validation_retries} retries:\n{detail}",
            errors=error_list(exc),
            raw_text=reply.text,
            attempts=ex.usage.requests,
        )
        return Finish("output_failed")
    mark_attempt(ex, reply)
    policy = config.on_invalid
    if callable(policy) and isinstance(exc, ValidationError | ModelRetry):
        return ReasonAgain((transient(policy(exc), role="user"),))
    return ReasonAgain((invalid_reply(detail),))


def accept_text(ex: CallExecution, run: OutputRun, reply: Msg, value: Any) -> Finish:
    """Accept ``value`` from the reply text: the call is complete; the reply
    is removed at call end (compression puts the canonical JSON instead)."""
    if ex.memory and ex.memory[-1] is reply:
        run.accepted = reply  # compression replaces it by the canonical JSON
    ex.output, ex.completed = value, True
    return Finish("structured_output")
