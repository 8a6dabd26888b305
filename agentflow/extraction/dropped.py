"""Fields whose value could not be placed in the document, dropped from an
otherwise placed record.

A document (or a long document's chunk) whose output still fails grounding
after the retries (``GroundingError``) would fail whole, its other fields
with it. When every field the error names is a top-level field the schema
lets be null, the record is kept instead: those fields null, each rated
``DROPPED`` (below ``agentflow.extraction.confidence.REVIEW_BELOW``, so it
is named under ``needs_review``) and named under ``dropped`` with why its
value was refused (the record's ``dropped``, the review page's note):

* by default, only where each refused value is text the document writes,
  refused by a check of its place or edges (``GroundingError.refused``:
  ``begins with the label 'agent:' of its line``, a cut token, a value
  before the field it must follow): the model copied the document, the
  check could not take its copy, and one field's form is no reason to lose
  the record's other fields;
* under ``allow_partial`` (``--allow-partial``), also where a value is not
  in the document at all (an invented one).

The other fields are grounded again as the engine grounds them (their
spans); where they no longer pass (a degenerate output), the record fails
as before. A chunk's dropped fields are named by the record only where no
other chunk placed a value for them (``agentflow.extraction.chunked``); a
document cut at ``max_chars`` is read again whole instead.
Never a silent ``ok``: the record says which fields were dropped and why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import NoneType
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.batch_types import ExtractResult
from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.grounding import Grounded
from agentflow.grounding.output_checks import check_output

__all__ = ["DROPPED", "with_dropped", "without_unplaceable"]

DROPPED = 0.3
"""A field nulled because the model's value for it could not be placed."""


def _top(path: str) -> str:
    """The top-level field of a field path (``a`` of ``a.b[0]``)."""
    return path.split(".", 1)[0].split("[", 1)[0]


def _reasons(error: GroundingError) -> dict[str, str]:
    """Field path -> why its value was refused, from the error's message
    (its advice to the model, ``; copy ...``, left out)."""
    out: dict[str, str] = {}
    paths = [p for p, _ in error.unfound] + list(error.empty)
    for line in str(error).splitlines():
        for path in paths:
            if line.startswith(f"- {path}: ") and path not in out:
                out[path] = line[len(path) + 4:].split("; copy ", 1)[0]
    return out


def without_unplaceable(result: ExtractResult[Any], output: Any, text: str,
                        marker: Grounded | bool | None, *,
                        unwritten: bool = True) -> ExtractResult[Any]:
    """``result`` kept with its unplaceable fields null (see the module
    docstring), or ``result`` as it is: not a ``GroundingError``, no
    validated output, a field named that is nested or may not be null, the
    rest no longer grounded, or (``unwritten=False``, the default of a run
    without ``allow_partial``) a value named that the document does not write."""
    error = result.error
    value = error.output if isinstance(error, GroundingError) else None
    if not isinstance(error, GroundingError) or not isinstance(value, BaseModel) or (
            type(value) is not output):
        return result
    paths = [p for p, _ in error.unfound] + list(error.empty)
    fields = type(value).model_fields
    if not paths or any(p != _top(p) or p not in fields or NoneType not in get_args(
            fields[p].annotation) for p in paths):
        return result
    if not unwritten and not set(paths) <= set(error.refused):
        return result  # a value the document does not write: only allow_partial drops it
    kept = value.model_copy(update=dict.fromkeys(paths))
    ground = marker if isinstance(marker, Grounded) else None
    try:
        spans = check_output(kept, output, ground, text)
    except (GroundingError, DegenerateOutputError):
        return result
    why = _reasons(error)
    dropped = {p: why.get(p, "not found in the document") for p in dict.fromkeys(paths)}
    return dataclasses.replace(result, output=kept, error=None, spans=spans, dropped=dropped)


def with_dropped(confidence: Mapping[str, float],
                 dropped: Mapping[str, str]) -> dict[str, float]:
    """``confidence`` with each ``dropped`` field at most ``DROPPED``."""
    return {name: min(score, DROPPED) if name in dropped else score
            for name, score in confidence.items()}
