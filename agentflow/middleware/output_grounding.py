"""The grounding set-up of an output call (``agentflow.grounding``): what the
output type's ``Grounded()`` markers and the ``ground=`` default ask, and the
response format that holds grounded strings to the call's source where the
profile's grammar can (``substring_grammar``). The structured-output
middleware reads these in ``prepare``, ``on_call_start`` and
``pre_reasoning``; the check of an output after validation lives in
``agentflow.grounding.output_checks``."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from agentflow.errors import SchemaError
from agentflow.execution import CallExecution
from agentflow.grounding import Grounded, grounding_plan, mark_all_strings
from agentflow.grounding.locators import apply_locators
from agentflow.grounding.output_checks import call_located
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.output_acceptance import source_of, taken_of
from agentflow.model import ResponseFormat

__all__ = ["as_marker", "grounded_format", "has_markers"]


@functools.lru_cache(maxsize=256)
def _cached_plan(output_type: Any) -> bool:
    """``grounding_plan`` cached per type (raises ``SchemaError`` on a bad marker)."""
    return grounding_plan(output_type)


def has_markers(output_type: Any) -> bool:
    """Whether ``output_type`` marks fields ``Grounded()`` (``grounding_plan``,
    cached per type; an unhashable type is checked without the cache).

    Raises:
        SchemaError: a ``Grounded()`` marker on a non-string field.
    """
    try:
        return _cached_plan(output_type)
    except TypeError:  # an unhashable type: check without the cache
        return grounding_plan(output_type)


def as_marker(ground: bool | Grounded | None) -> Grounded | None:
    """The marker the ``ground=`` default applies to every free-text string.

    Raises:
        SchemaError: the marker says ``after`` or ``longest``: those name a
            sibling field or need a field's own pattern, so they belong on a
            field's marker, never on the default for every string.
    """
    if isinstance(ground, Grounded):
        if ground.after is not None or ground.longest:
            rule = f"after={ground.after!r}" if ground.after is not None else "longest=True"
            raise SchemaError(
                "ground", f"Grounded({rule}) cannot be the default for every string: it names "
                "a field's sibling or needs the field's own pattern; put it on the field's "
                "marker (Annotated[str, Grounded(...)])")
        return ground
    return Grounded() if ground else None


def grounded_format(ex: CallExecution, run: OutputRun) -> ResponseFormat:
    """The call's response format; with the source attached (and every
    string marked, under a ``ground`` default) when the profile's grammar
    can hold grounded strings to it."""
    rf = ex.response_format
    assert rf is not None
    if not (run.grounded and rf.schema is not None and ex.model.profile.substring_grammar):
        return rf
    schema = mark_all_strings(rf.schema, run.ground) if run.ground is not None else rf.schema
    source = source_of(ex, run)
    if run.locators:  # learned from the examples: the values each field may take here
        schema = apply_locators(schema, run.locators, source, call_located(ex.inputs))
    return replace(rf, schema=schema, source=source, taken=taken_of(ex, run))
