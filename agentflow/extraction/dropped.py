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
* by default too, where a refused value is not in the document but is,
  whole, a value one of the run's examples holds (``example_values``): the
  model copied the prompt instead of the document (a small model's commonest
  miss), which says nothing against the record's other fields; the field's
  ``dropped`` says so (``an example's value``);
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
from collections.abc import Iterable, Mapping
from types import NoneType
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agentflow.batch_types import ExtractResult
from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.grounding import Grounded
from agentflow.grounding.output_checks import check_output

if TYPE_CHECKING:
    from agentflow.grounding.locator_rule import Locator

__all__ = ["DROPPED", "example_values", "with_dropped", "without_unplaceable"]

DROPPED = 0.3
"""A field nulled because the model's value for it could not be placed."""


def _top(path: str) -> str:
    """The top-level field of a field path (``a`` of ``a.b[0]``)."""
    return path.split(".", 1)[0].split("[", 1)[0]


def _leaves(value: Any) -> Iterable[str]:
    """Each string, number or date under a JSON-able ``value``, as JSON writes it."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def example_values(outputs: Iterable[Any]) -> frozenset[str]:
    """Every string, number or date the examples' ``outputs`` hold (any field,
    as JSON writes it: ``2024-03-05``), blank ones left out."""
    return frozenset(leaf for out in outputs for leaf in _leaves(to_jsonable_python(out))
                     if leaf.strip())


def _echoed(value: BaseModel, paths: Iterable[str], echoes: frozenset[str]) -> set[str]:
    """The ``paths`` (top-level fields) whose value in ``value`` is, whole, one of ``echoes``."""
    out = set()
    for path in paths:
        leaves = set(_leaves(to_jsonable_python(getattr(value, path))))
        if leaves and leaves <= echoes:
            out.add(path)
    return out


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
                        unwritten: bool = True,
                        echoes: frozenset[str] = frozenset(),
                        locators: Mapping[str, Locator] | None = None) -> ExtractResult[Any]:
    """``result`` kept with its unplaceable fields null (see the module
    docstring), or ``result`` as it is: not a ``GroundingError``, no
    validated output, a field named that is nested or may not be null, the
    rest no longer grounded, or (``unwritten=False``, the default of a run
    without ``allow_partial``) a value named that the document does not write
    and that is not one of ``echoes`` (``example_values`` of the run's examples).
    ``locators``: the run's learned locators (``check_output``'s)."""
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
    echoed = _echoed(value, [p for p, _ in error.unfound if p not in error.refused], echoes)
    if not unwritten and not set(paths) <= set(error.refused) | echoed:
        return result  # an invented value the document does not write: only allow_partial drops it
    kept = value.model_copy(update=dict.fromkeys(paths))
    ground = marker if isinstance(marker, Grounded) else None
    try:
        spans = check_output(kept, output, ground, text, locators=locators)
    except (GroundingError, DegenerateOutputError):
        return result
    why = _reasons(error)
    dropped = {p: why.get(p, "not found in the document")
               + ("; an example's value (the model copied the prompt)" if p in echoed else "")
               for p in dict.fromkeys(paths)}
    return dataclasses.replace(result, output=kept, error=None, spans=spans, dropped=dropped)


def with_dropped(confidence: Mapping[str, float],
                 dropped: Mapping[str, str]) -> dict[str, float]:
    """``confidence`` with each ``dropped`` field at most ``DROPPED``."""
    return {name: min(score, DROPPED) if name in dropped else score
            for name, score in confidence.items()}
