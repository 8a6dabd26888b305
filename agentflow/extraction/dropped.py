"""Fields whose value could not be placed in the document, dropped from an
otherwise placed record (``allow_partial``).

A document (or a long document's chunk) whose output still fails grounding
after the retries (``GroundingError``: a value not in the document, or one
verification refuses, ``ends with ','``) fails whole by default, its other
fields with it.
Under ``allow_partial`` (``--allow-partial``), when every field the error
names is a top-level field the schema lets be null, the record is kept
instead: those fields null, each rated ``DROPPED`` (below
``agentflow.extraction.confidence.REVIEW_BELOW``, so it is named under
``needs_review``) and named under ``dropped`` with why its value was
refused (the record's ``dropped``, the review page's note). The other
fields are grounded again as the engine grounds them (their spans); where
they no longer pass (a degenerate output), the record fails as before. A
chunk's dropped fields are named by the record only where no other chunk
placed a value for them (``agentflow.extraction.chunked``); a document cut
at ``max_chars`` is read again whole instead, as without ``allow_partial``.
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
                     marker: Grounded | bool | None) -> ExtractResult[Any]:
    """``result`` kept with its unplaceable fields null (see the module
    docstring), or ``result`` as it is: not a ``GroundingError``, no
    validated output, a field named that is nested or may not be null, or
    the rest no longer grounded."""
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
