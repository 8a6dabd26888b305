"""Answering the output a model gave: the checks and answers of the
structured-output engine (``StructuredOutputMiddleware``, DESIGN.md §3 rules
4-6), as functions of the call's ``OutputConfig``. This module is the tool
path; the other parts live beside it and their names are importable from
here too.

* **tool path** – ``answer_outputs``: the ``generate_response`` calls of one
  reply: each validated (``check_call``: strict from exact JSON, else lax
  with schema-aware normalisation), user validators run, grounding and
  degeneracy checked (``accepted``, ``output_acceptance``); an invalid output
  answered with an error listing each failing field (``reject_call``), bounded by
  ``output_retries`` for the whole call (``spend_retry``); several output
  calls in one reply handled by ``on_multiple``; a valid output that comes
  with other tool calls follows ``end_strategy``, and is held
  (``hold_output``) beside calls that wait for a decision outside the loop.
* **native / prompt paths** – ``text_reply`` (``output_text``): the reply
  text is the output, parsed tolerantly; an invalid one is asked again with
  the errors as a user message (``reject_text``), bounded the same way.
* **ending without output** (``output_failures``) – a cut reply
  (``truncated``), a filtered or refused one (``filtered``), a spent budget
  (``warn_give_up``): the call's ``output_error`` says why, with the raw text
  and attempt count.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentflow._clean_text import json_bytes
from agentflow.errors import (
    ModelRetry,
    MultipleStructuredOutputsError,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from agentflow.execution import CallExecution
from agentflow.messages import CLOSED_TOOL_CALLS, Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware._output_run import NO_OUTPUT, OutputRun
from agentflow.middleware.base import Act
from agentflow.middleware.output_acceptance import REJECTED, accepted, source_of, taken_of
from agentflow.middleware.output_failures import (
    error_list,
    filtered,
    final_error,
    gave_up_invalid,
    mark_attempt,
    spend_retry,
    truncated,
    warn_give_up,
)
from agentflow.middleware.output_hints import MAX_DETAIL_CHARS, failure_detail
from agentflow.middleware.output_text import accept_text, reject_text, text_reply
from agentflow.output.brackets import cut_inside
from agentflow.output.config import OutputConfig
from agentflow.output.decoding import explain_raw
from agentflow.output.parsing import NoJSONFound, parse_output
from agentflow.output.reminders import TOOL_NAME, invalid_call

__all__ = [
    "MAX_DETAIL_CHARS",
    "REJECTED",
    "accept_text",
    "accepted",
    "answer_outputs",
    "check_call",
    "end_strategy",
    "error_result",
    "filtered",
    "gave_up_invalid",
    "hold_output",
    "mark_attempt",
    "reject_call",
    "reject_text",
    "source_of",
    "spend_retry",
    "taken_of",
    "text_reply",
    "truncated",
    "warn_give_up",
]

def answer_outputs(
    config: OutputConfig,
    ex: CallExecution,
    run: OutputRun,
    reply: Msg,
    outputs: list[ToolUseBlock],
) -> Act:
    """Answer the ``generate_response`` calls of one reply (``outputs``): a
    cut reply's calls refused, one call checked, several per ``on_multiple``
    (``"raise"`` raises ``MultipleStructuredOutputsError``; a callable picks
    one; ``"retry"`` asks for exactly one, within the retry budget)."""
    if ex.last_finish_reason == "length" and not _all_closed(reply, outputs):
        truncated(ex, run, json_bytes(dict(outputs[-1].input)).decode())
        return Act(
            {
                c.id: error_result(c, "The output was cut off at the token limit.")
                for c in outputs
            }
        )
    if len(outputs) == 1:
        checked = check_call(config, ex, run, outputs[0])
        return end_strategy(config, ex, run, reply, {outputs[0].id: checked})
    policy = config.on_multiple
    if policy == "raise":
        raise MultipleStructuredOutputsError(
            f"the model called {TOOL_NAME} {len(outputs)} times in one reply "
            "(on_multiple='raise')",
            count=len(outputs),
            attempts=ex.usage.requests,
        )
    chosen = policy(outputs) if callable(policy) else None
    if chosen is not None:
        results = {c.id: error_result(c, "Ignored: only one output is used.") for c in outputs}
        results[chosen.id] = check_call(config, ex, run, chosen)
        return end_strategy(config, ex, run, reply, results)
    message = (
        f"You called {TOOL_NAME} {len(outputs)} times in one reply. Call it exactly once, "
        "with the complete output (all items in one call)."
    )
    if not spend_retry(config, ex, run, "multiple", message):
        ex.output_error = StructuredOutputError(
            f"the model kept calling {TOOL_NAME} several times at once",
            raw_text=reply.text,
            attempts=ex.usage.requests,
            reason="multiple",
        )
    return Act({c.id: error_result(c, message) for c in outputs})


def _all_closed(reply: Msg, outputs: list[ToolUseBlock]) -> bool:
    """Whether every output call of a reply cut at the token limit had its
    arguments closed before the cut (``CLOSED_TOOL_CALLS``: only padding was
    lost, as when a model runs on with newlines after the object)."""
    closed = reply.metadata.get(CLOSED_TOOL_CALLS)
    return isinstance(closed, list) and all(c.id in closed for c in outputs)


def end_strategy(
    config: OutputConfig,
    ex: CallExecution,
    run: OutputRun,
    reply: Msg,
    results: dict[str, ToolResultBlock],
) -> Act:
    """The end strategy (``OutputConfig.end_strategy``) for a reply whose
    output call was just checked, when it also calls other tools."""
    others = [c for c in reply.tool_uses if c.name != TOOL_NAME]
    if not others or not ex.completed:
        return Act(results)
    strategy = config.end_strategy
    if strategy == "early":
        for c in others:
            results[c.id] = ToolResultBlock(
                c.id, "Not executed: the final output was accepted first.",
                is_error=True, name=c.name)
    elif strategy == "safe":
        run.pending = ex.output  # accepted after acting, if no other call failed
        ex.output, ex.completed = None, False
        for call_id, block in results.items():
            if block.name == TOOL_NAME and not block.is_error:
                results[call_id] = ToolResultBlock(
                    call_id,
                    "The output is valid. It is accepted only if every other tool call of "
                    f"this reply succeeded; if one failed, fix it and call {TOOL_NAME} "
                    "again.",
                    name=TOOL_NAME,
                )
    return Act(results)


def hold_output(ex: CallExecution, run: OutputRun) -> None:
    """Hold back an output given beside calls that wait for a decision
    outside the loop (``ex.waiting``: a person's approval, a client's
    result), whatever the end strategy: the call pauses without its output,
    since the outcome of those calls may change it (a refused payment is not
    a paid one), and the model gives it again when the call is resumed. Not
    a failed attempt: no retry is spent and no ``OutputRetry`` is emitted
    (the paused call's ``Complete`` says why it has no output)."""
    run.pending = NO_OUTPUT
    ex.output, ex.completed, ex.spans = None, False, {}
    run.partial.reset()
    ex.log.debug("structured_output.held", waiting=len(ex.waiting))


def check_call(
    config: OutputConfig, ex: CallExecution, run: OutputRun, call: ToolUseBlock
) -> ToolResultBlock:
    """Validate one output call (strict from its argument text first: the
    model's own, ``ToolUseBlock.arguments``, when kept); accept it or answer
    with the errors."""
    try:
        if call.arguments is not None:  # one plain JSON object, as the model sent it
            value = run.spec.validate(call.input, call.arguments)
        else:
            data: Any = dict(call.input)
            if set(data) == {"__raw_arguments__"}:
                raw = data["__raw_arguments__"]
                if cut_inside(raw):  # never closed into a shorter value: asked again
                    raise NoJSONFound(explain_raw(raw))
                value = parse_output(raw, run.spec)
            else:
                value = run.spec.validate_object(data)  # strict from its JSON text first
        value = accepted(config, ex, run, value)
    except REJECTED as exc:
        return reject_call(config, ex, run, call, exc)
    ex.output, ex.completed = value, True
    return ToolResultBlock(call.id, "Structured output accepted.", name=TOOL_NAME)


def reject_call(
    config: OutputConfig,
    ex: CallExecution,
    run: OutputRun,
    call: ToolUseBlock,
    exc: Exception,
) -> ToolResultBlock:
    """Answer an output call that failed its checks with the errors (or
    raise under ``on_invalid="raise"``); give up when the budget is spent.

    Raises:
        StructuredOutputValidationError / GroundingError /
            DegenerateOutputError: only under ``on_invalid="raise"``.
    """
    detail = failure_detail(exc)
    policy = config.on_invalid
    try:
        raw = json_bytes(dict(call.input)).decode()
    except TypeError:  # nested too deeply to write (a too_deep output): said, not written
        raw = "(the arguments nest too deeply to write)"
    run.last_invalid = exc
    if policy == "raise":
        raise final_error(exc, ex, raw) or StructuredOutputValidationError(
            f"the output failed validation (on_invalid='raise'):\n{detail}",
            errors=error_list(exc),
            raw_text=raw,
            attempts=ex.usage.requests,
        )
    if callable(policy) and isinstance(exc, ValidationError | ModelRetry):
        message = policy(exc)
    else:
        message = invalid_call(detail)
    if not spend_retry(config, ex, run, "validation", detail):
        ex.output_error = final_error(exc, ex, raw) or StructuredOutputValidationError(
            f"the output failed validation after {ex.validation_retries} retries:\n{detail}",
            errors=error_list(exc),
            raw_text=raw,
            attempts=ex.usage.requests,
        )
    return error_result(call, message)

def error_result(call: ToolUseBlock, message: str) -> ToolResultBlock:
    """An error result of the output tool for ``call``."""
    return ToolResultBlock(call.id, message, is_error=True, name=TOOL_NAME)
