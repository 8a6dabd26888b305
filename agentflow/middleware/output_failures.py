"""What a failed output costs and how a call ends without one (the
structured-output engine, DESIGN.md §3 rules 5-6): the output retry budget
(``spend_retry``; ``mark_attempt`` tags a failed attempt for removal), a cut
reply (``truncated``), a filtered or refused one (``filtered``), one the
vendor failed (``vendor_failed``), the final
errors of a call that gave up (``gave_up_invalid``, ``final_error``,
``error_list``) and the warning it logs (``warn_give_up``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from agentflow._exc_text import exception_text
from agentflow.errors import (
    DegenerateOutputError,
    GroundingError,
    OutputTruncatedError,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import STRUCTURED_OUTPUT_ATTEMPT, Msg
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Decision, Finish, ReasonAgain
from agentflow.middleware.output_hints import failure_detail
from agentflow.output.config import OutputConfig
from agentflow.output.cut_path import cut_path
from agentflow.output.reminders import TOOL_NAME

__all__ = ["error_list", "filtered", "final_error", "gave_up_invalid", "mark_attempt",
           "spend_retry", "truncated", "vendor_failed", "warn_give_up"]


def mark_attempt(ex: CallExecution, reply: Msg) -> None:
    """Tag the latest reply as a failed attempt (removed at call end)."""
    if ex.memory and ex.memory[-1] is reply:
        ex.memory[-1] = reply.replace(metadata={**reply.metadata, STRUCTURED_OUTPUT_ATTEMPT: True})


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


def filtered(ex: CallExecution, run: OutputRun, reply: Msg) -> Finish:
    """The vendor filtered or the model refused: asking again will not help."""
    run.give_up = True
    ex.output_error = StructuredOutputError(
        f"the model refused or the vendor filtered the reply (finish reason "
        f"{ex.last_finish_reason!r}{ex.finish_said}); no output",
        raw_text=reply.text, attempts=ex.usage.requests, reason="refused",
    )
    warn_give_up(ex, ex.last_finish_reason)
    return Finish("output_failed")


def vendor_failed(config: OutputConfig, ex: CallExecution, run: OutputRun,
                  reply: Msg) -> Decision:
    """The vendor failed the generation (finish reason ``error``: DeepSeek's
    ``insufficient_system_resource``, GLM's ``network_error``, Gemini's
    ``MALFORMED_FUNCTION_CALL``) and the reply holds no output: nothing the
    model wrote is judged. The reply leaves the memory and the same request
    is sent again (an output retry); when the retries are spent, the error
    says the vendor failed (it said "no JSON value found in the reply text",
    blaming the model)."""
    if ex.memory and ex.memory[-1] is reply:
        ex.memory.pop()
    detail = ("the vendor ended the reply with an error finish reason (the generation "
              "failed on its side)")
    if not spend_retry(config, ex, run, "validation", detail):
        ex.output_error = StructuredOutputError(
            f"no output after {ex.validation_retries} retries: {detail}; send the call again",
            raw_text=reply.text, attempts=ex.usage.requests, reason="vendor_error")
        return Finish("output_failed")
    return ReasonAgain()


def truncated(ex: CallExecution, run: OutputRun, raw: str) -> None:
    """End the call with ``OutputTruncatedError``: the output was cut at the
    token limit (``raw``, never sent back for repair). An empty ``raw`` says
    the limit came before any output: a reasoning model that spent the budget
    on its reasoning (empty content and finish reason ``length`` from GPT-5
    and o-series models, 64bit/async-openai#424; Gemini 2.5's ``MAX_TOKENS``
    with no content, its ``thoughtsTokenCount`` the whole budget)."""
    run.give_up = True
    path = cut_path(raw)
    where = f" while writing {path!r}" if path else ""
    message = (f"the output was cut off at the token limit (finish reason 'length'){where}; "
               "raise max_tokens or ask for less (bound that field, e.g. a list's max_length)")
    if not raw.strip():  # nothing written: a reasoning model spent the budget thinking
        spent = ex.usage.reasoning_tokens
        used = f": the model's reasoning used it ({spent} reasoning tokens)" if spent else ""
        message = ("the token limit was reached before any output was written (finish reason "
                   f"'length'){used}; raise max_tokens or lower the reasoning effort or "
                   "thinking budget")
    ex.output_error = OutputTruncatedError(
        message,
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
        errors=error_list(exc), raw_text=raw, attempts=ex.usage.requests)


def final_error(exc: Exception, ex: CallExecution, raw: str) -> StructuredOutputError | None:
    """A grounding or degeneracy failure as the call's final error (with the
    raw text and attempt count); ``None`` for other failures."""
    if isinstance(exc, GroundingError | DegenerateOutputError):
        exc.raw_text, exc.attempts = raw, ex.usage.requests
        return exc
    return None


def error_list(exc: Exception) -> list[dict[str, Any]]:
    """``exc`` as the ``errors`` of a ``StructuredOutputValidationError``:
    pydantic's errors of a ``ValidationError``, else one entry with its message."""
    if isinstance(exc, ValidationError):
        return [dict(e) for e in exc.errors(include_url=False)]
    return [{"loc": (), "msg": exception_text(exc), "type": type(exc).__name__}]
