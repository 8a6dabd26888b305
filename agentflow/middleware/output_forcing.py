"""The forcing rule of the structured-output engine (DESIGN.md §3,
*forcing*): a final turn that ends without the output tool on the tool
path. Its text is tried as the output first; then the model is asked
again, at most ``max_forcing`` times, with ``tool_choice`` forcing
``generate_response`` where the vendor enforces it (plus a transient user
nudge) or with a transient PROMPT reminder, either saying what was wrong
(``output_hints.failure_detail``) when an output of the call failed its
checks; past the budget the call gives
up with ``StructuredOutputError``, or ``StructuredOutputValidationError``
saying what was wrong when an output of the call (a reply text holding
JSON, or an earlier call's arguments) failed its checks.
"""

from __future__ import annotations

from agentflow.errors import DegenerateOutputError, GroundingError, StructuredOutputError
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Decision, Finish, ReasonAgain
from agentflow.middleware.empty_reply import is_empty
from agentflow.middleware.output_acceptance import REJECTED, accepted
from agentflow.middleware.output_failures import (
    gave_up_invalid,
    mark_attempt,
    truncated,
    warn_give_up,
)
from agentflow.middleware.output_hints import failure_detail
from agentflow.middleware.output_text import accept_text, reject_text
from agentflow.model import ModelProfile
from agentflow.output.config import OutputConfig
from agentflow.output.parsing import NoJSONFound, closed_json, parse_output
from agentflow.output.reminders import TOOL_NAME, force_reminder, nudge
from agentflow.output.strategies import forcing_choice

__all__ = ["missed_output"]


def missed_output(config: OutputConfig, ex: CallExecution, run: OutputRun, reply: Msg,
                  profile: ModelProfile) -> Decision:
    """A final turn without the output tool: accept its text if it is the
    output, else force (on ``profile``, the model's effective one), else give
    up (``Finish("output_failed")`` with ``ex.output_error`` set)."""
    if ex.last_finish_reason == "length" and not closed_json(reply.text):
        # cut text is never accepted, nor repaired (a value that closed before the cut is)
        truncated(ex, run, reply.text)
        return Finish("output_failed")
    if reply.text.strip():
        try:
            value = accepted(config, ex, run, parse_output(reply.text, run.spec))
        except (GroundingError, DegenerateOutputError) as exc:
            return reject_text(config, ex, run, reply, exc)  # an output, but a wrong one
        except REJECTED as exc:  # forced to call the tool, but it said what was wrong
            if not isinstance(exc, NoJSONFound):
                run.last_invalid = exc
        else:
            return accept_text(ex, run, reply, value)
    # after a prose fallback (``prose_fallback``) forcing spends the
    # call's output budget too: the fallback never buys extra requests
    fallback = run.prose_fallback
    if ex.force_count >= config.max_forcing or (
            fallback and ex.validation_retries >= config.output_retries):
        warn_give_up(ex, "forcing")
        before = ("the model answered with no JSON on the native format, then "
                  if fallback else "the model ")
        lead = (f"{before}did not call {TOOL_NAME} after {ex.force_count} forced "
                f"retr{'y' if ex.force_count == 1 else 'ies'}")
        if is_empty(reply):  # as a text call's EmptyReplyError says: nothing, not prose
            lead += "; its last reply was empty (no text, no tool call)"
        ex.output_error = (
            StructuredOutputError(lead, raw_text=reply.text, attempts=ex.usage.requests)
            if run.last_invalid is None else
            gave_up_invalid(ex, run.last_invalid, lead, reply.text))
        return Finish("output_failed")
    ex.force_count += 1
    if fallback:
        ex.validation_retries += 1
    mark_attempt(ex, reply)
    choice = forcing_choice(profile, ex.options, TOOL_NAME, config.reminder)
    how = f"tool_choice={choice.mode}" if choice else "prompt reminder"
    ex.emit(
        OutputRetry(
            "forcing",
            ex.force_count,
            f"the reply did not call {TOOL_NAME}; retrying with {how}",
        )
    )
    # an output of the call failed its checks: the re-ask says what was wrong
    detail = None if run.last_invalid is None else failure_detail(run.last_invalid)
    if choice is not None:
        # the request must not end on the assistant's own turn: vendors read
        # that as a prefill, which newer models refuse
        ex.tool_choice = choice
        return ReasonAgain((nudge(detail),))
    return ReasonAgain((force_reminder(detail),))
