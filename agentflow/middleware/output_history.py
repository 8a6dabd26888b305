"""Failed output attempts in the next request: the latest ones whole, older
ones as one line each (``OutputConfig.attempts_in_context``).

Without a bound every failed attempt stays in the request until the call
ends, so each retry resends the document plus every wrong output before it:
a long degenerate reply (a repetition loop up to the token limit) is paid for
again on every later attempt, and on a small context window the retries
themselves overflow it. The latest attempt with its error is what the model
needs to correct; older ones are said in a line each (their errors), so the
model still knows what it already got wrong.

An attempt is a reply the engine refused and its answer:

* native / prompt paths: the reply (``STRUCTURED_OUTPUT_ATTEMPT``) and the
  transient message that follows it (the errors, or a forcing reminder);
* tool path: a reply whose only tool calls are ``generate_response`` calls,
  all answered with error results (the tool message holding just those).

A reply that also called other tools is never an attempt here (its results
must stay paired with its calls). Only the request changes; memory keeps
every attempt until the call's end (compression removes them there).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.messages import (
    STRUCTURED_OUTPUT_ATTEMPT,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    Msg,
    ReminderType,
)
from agentflow.output.reminders import TOOL_NAME, transient

__all__ = ["EARLIER_ATTEMPTS", "bound_attempts"]

EARLIER_ATTEMPTS = "Earlier attempts were invalid too (do not repeat these mistakes):\n{lines}"
"""The one message standing for the attempts dropped from a request."""

_LINE_CHARS = 300
"""Characters of an older attempt's errors kept in its line."""

_PROMPT = ReminderType.PROMPT.value


def bound_attempts(messages: list[Msg], keep: int | None) -> list[Msg]:
    """``messages`` with only the latest ``keep`` failed attempts whole (see
    the module docstring); the older ones are replaced, where the first of
    them was, by one ``EARLIER_ATTEMPTS`` message listing their errors.
    ``messages`` itself when ``keep`` is ``None`` or no more attempts are in
    it (no copy)."""
    if keep is None:
        return messages
    attempts = _attempts(messages)
    if len(attempts) <= keep:
        return messages
    dropped = attempts[: len(attempts) - keep]
    gone = {i for start, end in dropped for i in range(start, end)}
    lines = [f"- attempt {n}: {_errors(messages[start:end])}"
             for n, (start, end) in enumerate(dropped, 1)]
    note = transient(EARLIER_ATTEMPTS.format(lines="\n".join(lines)), role="user")
    out: list[Msg] = []
    for i, m in enumerate(messages):
        if i == dropped[0][0]:
            out.append(note)
        if i not in gone:
            out.append(m)
    return out


def _attempts(messages: Sequence[Msg]) -> list[tuple[int, int]]:
    """``[start, end)`` index ranges of the failed attempts, in order."""
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        end = None
        if m.role == "assistant":
            if m.metadata.get(STRUCTURED_OUTPUT_ATTEMPT):
                end = i + 1
                if end < len(messages) and _transient(messages[end]):
                    end += 1
            else:
                end = _refused_output_call(messages, i)
        if end is None:
            i += 1
            continue
        found.append((i, end))
        i = end
    return found


def _transient(m: Msg) -> bool:
    return m.role != "assistant" and m.metadata.get(STRUCTURED_OUTPUT_REMINDER_TYPE) == _PROMPT


def _refused_output_call(messages: Sequence[Msg], i: int) -> int | None:
    """The end of the attempt at ``i`` when it is a reply of output calls
    only, answered next by error results of exactly those calls; else ``None``."""
    calls = messages[i].tool_uses
    if not calls or any(c.name != TOOL_NAME for c in calls) or i + 1 >= len(messages):
        return None
    answer = messages[i + 1]
    results = answer.tool_results
    if (not results or len(results) != len(answer.content)
            or {r.tool_use_id for r in results} != {c.id for c in calls}
            or not all(r.is_error for r in results)):
        return None
    end = i + 2
    if end < len(messages) and _transient(messages[end]):
        end += 1  # a reminder that came with the answer (one output call, please)
    return end


def _errors(attempt: Sequence[Msg]) -> str:
    """One line of an attempt's errors (its answers' text, squeezed and cut)."""
    texts = [r.output if isinstance(r.output, str) else str(r.output)
             for m in attempt[1:] for r in m.tool_results]
    texts += [m.text for m in attempt[1:] if not m.tool_results]
    line = " ".join(" ".join(texts).split()) or "invalid output"
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 3] + "..."
