"""Answering the output a model gave: the checks and answers of the
structured-output engine (``StructuredOutputMiddleware``, DESIGN.md §3 rules
4-6), as functions of the call's ``OutputConfig``.

* **tool path** – ``answer_outputs``: the ``generate_response`` calls of one
  reply: each validated (``check_call``: strict from exact JSON, else lax
  with schema-aware normalisation), user validators run, grounding and
  degeneracy checked (``accepted``); an invalid output answered with an
  error listing each failing field (``reject_call``), bounded by
  ``output_retries`` for the whole call (``spend_retry``); several output
  calls in one reply handled by ``on_multiple``; a valid output that comes
  with other tool calls follows ``end_strategy``, and is held
  (``hold_output``) beside calls that wait for a decision outside the loop.
* **native / prompt paths** – ``text_reply``: the reply text is the output,
  parsed tolerantly; an invalid one is asked again with the errors as a
  user message (``reject_text``), bounded the same way.
* **ending without output** – a cut reply (``truncated``), a filtered or
  refused one (``filtered``), a spent budget (``warn_give_up``): the call's
  ``output_error`` says why, with the raw text and attempt count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from agentflow.errors import (
    DegenerateOutputError,
    GroundingError,
    ModelRetry,
    MultipleStructuredOutputsError,
    OutputTruncatedError,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.grounding.output_checks import call_source, call_taken, check_output
from agentflow.messages import (
    CLOSED_TOOL_CALLS,
    STRUCTURED_OUTPUT_ATTEMPT,
    Msg,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.middleware._output_run import NO_OUTPUT, OutputRun
from agentflow.middleware.base import Act, Decision, Finish, ReasonAgain
from agentflow.middleware.output_hints import MAX_DETAIL_CHARS, failure_detail
from agentflow.output.brackets import cut_inside
from agentflow.output.config import OutputConfig
from agentflow.output.cut_path import cut_path
from agentflow.output.decoding import explain_raw
from agentflow.output.parsing import NoJSONFound, closed_json, parse_output
from agentflow.output.reminders import TOOL_NAME, invalid_call, invalid_reply, transient

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


REJECTED = (ValidationError, ModelRetry, NoJSONFound, GroundingError, DegenerateOutputError)


def mark_attempt(ex: CallExecution, reply: Msg) -> None:
    """Tag the latest reply as a failed attempt (removed at call end)."""
    if ex.memory and ex.memory[-1] is reply:
        ex.memory[-1] = reply.replace(metadata={**reply.metadata, STRUCTURED_OUTPUT_ATTEMPT: True})


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
        truncated(ex, run, orjson.dumps(dict(outputs[-1].input)).decode())
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
    lost, as in GPT-4.1's runaway newlines after the object)."""
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


def accepted(config: OutputConfig, ex: CallExecution, run: OutputRun, value: Any) -> Any:
    """Run the user's validators, then the grounding and degeneracy checks;
    the (possibly replaced) value, its spans recorded in ``ex.spans``.

    Raises:
        ModelRetry: from a validator.
        GroundingError / DegenerateOutputError: the checks failed.
    """
    for validator in config.validators:
        replaced = validator(value)
        if replaced is not None:
            value = replaced
    if run.grounded:
        ex.spans = _trusted(ex, run, value)
    return value


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
    raw = orjson.dumps(dict(call.input)).decode()
    run.last_invalid = exc
    if policy == "raise":
        raise _final(exc, ex, raw) or StructuredOutputValidationError(
            f"the output failed validation (on_invalid='raise'):\n{detail}",
            errors=_errors(exc),
            raw_text=raw,
            attempts=ex.usage.requests,
        )
    if callable(policy) and isinstance(exc, ValidationError | ModelRetry):
        message = policy(exc)
    else:
        message = invalid_call(detail)
    if not spend_retry(config, ex, run, "validation", detail):
        ex.output_error = _final(exc, ex, raw) or StructuredOutputValidationError(
            f"the output failed validation after {ex.validation_retries} retries:\n{detail}",
            errors=_errors(exc),
            raw_text=raw,
            attempts=ex.usage.requests,
        )
    return error_result(call, message)


def spend_retry(
    config: OutputConfig,
    ex: CallExecution,
    run: OutputRun,
    reason: Literal["validation", "multiple", "degradation"],
    detail: str,
) -> bool:
    """Spend one output retry; ``False`` (and give up) when the budget is gone."""
    if ex.validation_retries >= config.output_retries:
        run.give_up = True
        warn_give_up(ex, reason)
        return False
    ex.validation_retries += 1
    ex.emit(OutputRetry(reason, ex.validation_retries, detail))
    run.partial.reset()  # the next attempt's partials start from nothing
    return True


def error_result(call: ToolUseBlock, message: str) -> ToolResultBlock:
    """An error result of the output tool for ``call``."""
    return ToolResultBlock(call.id, message, is_error=True, name=TOOL_NAME)


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
        raise _final(exc, ex, reply.text) or StructuredOutputValidationError(
            f"the output failed validation (on_invalid='raise'):\n{detail}",
            errors=_errors(exc),
            raw_text=reply.text,
            attempts=ex.usage.requests,
        ) from None
    if not spend_retry(config, ex, run, "validation", detail):
        ex.output_error = _final(exc, ex, reply.text) or StructuredOutputValidationError(
            f"no valid output after {ex.validation_retries} retries:\n{detail}",
            errors=_errors(exc),
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


def filtered(ex: CallExecution, run: OutputRun, reply: Msg) -> Finish:
    """The vendor filtered or the model refused: asking again will not help."""
    run.give_up = True
    ex.output_error = StructuredOutputError(
        f"the model refused or the vendor filtered the reply (finish reason "
        f"{ex.last_finish_reason!r}); no output",
        raw_text=reply.text, attempts=ex.usage.requests, reason="refused",
    )
    warn_give_up(ex, ex.last_finish_reason)
    return Finish("output_failed")


def truncated(ex: CallExecution, run: OutputRun, raw: str) -> None:
    """End the call with ``OutputTruncatedError``: the output was cut at the
    token limit (``raw``, never sent back for repair)."""
    run.give_up = True
    path = cut_path(raw)
    where = f" while writing {path!r}" if path else ""
    ex.output_error = OutputTruncatedError(
        f"the output was cut off at the token limit (finish reason 'length'){where}; raise "
        "max_tokens or ask for less (bound that field, e.g. a list's max_length)",
        raw_text=raw,
        attempts=ex.usage.requests,
        usage=ex.usage,
        path=path,
    )
    ex.log.warning("structured_output.truncated", agent=ex.agent_name, agent_id=ex.agent_id)


def warn_give_up(ex: CallExecution, reason: str) -> None:
    """Log that the engine gave up on the output (``reason``: forcing,
    validation, multiple, a finish reason) with the retries spent."""
    retries = ex.force_count if reason == "forcing" else ex.validation_retries
    ex.log.warning(
        "structured_output.gave_up",
        tool=TOOL_NAME,
        reason=reason,
        retries=retries,
        agent=ex.agent_name,
        agent_id=ex.agent_id,
    )


def gave_up_invalid(ex: CallExecution, exc: Exception, lead: str,
                    raw: str) -> StructuredOutputValidationError:
    """The call's final error when it gave up after outputs that failed their
    checks (``exc``, the last one): ``lead`` (what the engine saw, e.g. the
    model did not call the output tool after its forced retries), then what
    was wrong (``failure_detail``: one line per failing field path,
    registered secrets masked, cut at ``MAX_DETAIL_CHARS``)."""
    return StructuredOutputValidationError(
        f"{lead}; its last output failed validation:\n{failure_detail(exc)}",
        errors=_errors(exc), raw_text=raw, attempts=ex.usage.requests)


def _final(exc: Exception, ex: CallExecution, raw: str) -> StructuredOutputError | None:
    """A grounding or degeneracy failure as the call's final error (with the
    raw text and attempt count); ``None`` for other failures."""
    if isinstance(exc, GroundingError | DegenerateOutputError):
        exc.raw_text, exc.attempts = raw, ex.usage.requests
        return exc
    return None


def source_of(ex: CallExecution, run: OutputRun) -> str:
    """The call's source text (``call_source``), worked out once per call."""
    if run.source is None:
        run.source = call_source(ex.inputs)
    return run.source


def taken_of(ex: CallExecution, run: OutputRun) -> frozenset[tuple[int, int]]:
    """Spans of the call's source an earlier extraction pass took as list
    items (``call_taken``, worked out once per call; empty for any other call)."""
    if run.taken is None:
        run.taken = call_taken(ex.inputs)
    return run.taken


def _trusted(ex: CallExecution, run: OutputRun, value: Any) -> dict[str, list[tuple[int, int]]]:
    """``check_output`` of ``value`` against the call's source."""
    return check_output(value, run.spec.output_type, run.ground, source_of(ex, run),
                        taken_of(ex, run))


def _errors(exc: Exception) -> list[dict[str, Any]]:
    if isinstance(exc, ValidationError):
        return [dict(e) for e in exc.errors(include_url=False)]
    return [{"loc": (), "msg": str(exc), "type": type(exc).__name__}]

