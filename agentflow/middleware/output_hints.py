"""What the structured-output engine tells the model about an output that
failed its checks: one detail, built in one place, for every re-ask
(the output tool's error result, the native and prompt strategies' user
message, the forced retry's nudge or reminder), for the ``OutputRetry``
event and for the call's final error.

    failure_detail(ValidationError(...))
    # '- age: Input should be less than or equal to 150\\n- name: Field required'

One line per failing field path (``path: message``, as
``agentflow.tools.describe_validation_error`` writes them; a grounding or
degeneracy failure's own lines, e.g. ``- name: 'Bob' is not found in the
document; ...``), registered secrets masked
(``agentflow._secrets.mask_secrets``), each line cut at ``MAX_LINE_CHARS``
and the whole at ``MAX_DETAIL_CHARS`` (at a line's end, the rest counted).
The failing value itself is not repeated: the model's own output is in its
context already (Pydantic AI's retry prompt leaves the top-level ``input``
out for the same reason), and a value may be long.
"""

from __future__ import annotations

from pydantic import ValidationError

from agentflow._exc_text import exception_text
from agentflow._secrets import mask_secrets
from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.tools import describe_validation_error

__all__ = ["MAX_DETAIL_CHARS", "MAX_LINE_CHARS", "failure_detail", "raw_detail"]

MAX_DETAIL_CHARS = 2000
"""Longest detail (characters) a re-ask or a final error quotes: cut at a
line's end, the lines left out counted (``... (3 more lines)``)."""

MAX_LINE_CHARS = 300
"""Longest line of a detail (characters; a longer one ends in ``...``)."""


def raw_detail(exc: Exception) -> str:
    """What was wrong with an output, as the check said it: a grounding or
    degeneracy failure's ``detail``, a ``ValidationError``'s lines (one per
    failing field path), else the exception's text. Not masked, not cut:
    ``failure_detail`` is what leaves the engine."""
    if isinstance(exc, GroundingError | DegenerateOutputError):
        return exc.detail
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    return exception_text(exc)  # a validator's own exception: its __str__ may fail


def failure_detail(exc: Exception) -> str:
    """``raw_detail(exc)`` as it may be shown (to the model, in an event, in an
    error): secrets masked, each line at most ``MAX_LINE_CHARS`` characters,
    the whole at most ``MAX_DETAIL_CHARS`` plus the count of lines left out."""
    lines = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS - 3] + "..."
             for line in mask_secrets(raw_detail(exc)).splitlines()]
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + len(line) + 1 > MAX_DETAIL_CHARS:
            rest = len(lines) - len(kept)
            kept.append(f"... ({rest} more line{'s' if rest != 1 else ''})")
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept)
