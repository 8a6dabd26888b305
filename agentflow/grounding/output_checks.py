"""The grounding and degeneracy checks of a validated structured output (the
engine's *grounding* rule, DESIGN.md §3; the engine is
``agentflow.middleware.structured_output``): which text of the call grounded
values must come from, and whether they do.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.grounding import Grounded, check_grounding, grounded_values
from agentflow.grounding.degenerate import check_degenerate
from agentflow.grounding.field_keys import key_path
from agentflow.grounding.locator_whole import read_tests
from agentflow.grounding.typed_leaves import TypedValue
from agentflow.grounding.typed_values import found_in, written_at
from agentflow.messages import Msg

if TYPE_CHECKING:
    from agentflow.grounding.locator_rule import Locator

__all__ = ["LOCATED_KEY", "TAKEN_KEY", "call_located", "call_source", "call_taken",
           "check_output"]


TAKEN_KEY = "agentflow.taken"
"""``Msg.metadata`` key of a user message: the ``[start, end)`` spans of its
text that an earlier extraction pass took as list items (an iterable of
pairs; ``agentflow.extraction.recall``). Where the model's profile has a
substring grammar, those items are not offered again."""


_COLLECTIONS = (list, tuple, set, frozenset)
_PAIRS = (list, tuple)
"""Tuples, not ``list | tuple``: no union made per call."""


LOCATED_KEY = "agentflow.located"
"""``Msg.metadata`` key of a user message: field name -> the value a learned
locator reads for it in a larger document this message's text is part of
(a long document's chunk: ``agentflow.extraction.chunk_reads``). Where the
model's profile has a substring grammar, that value is the one offered
(``agentflow.grounding.locator_offer.apply_locators``)."""


def call_located(inputs: Sequence[Msg]) -> dict[str, str]:
    """The ``metadata[LOCATED_KEY]`` of the call's user messages, merged; entries
    that are not ``str -> str`` are ignored (metadata is the caller's)."""
    out: dict[str, str] = {}
    for m in _sources(inputs):
        found = m.metadata.get(LOCATED_KEY)
        if isinstance(found, dict):
            out.update({k: v for k, v in found.items()
                        if isinstance(k, str) and isinstance(v, str)})
    return out


def _sources(inputs: Sequence[Msg]) -> list[Msg]:
    """The messages of ``inputs`` whose text is the source: the user ones."""
    return [m for m in inputs if m.role == "user"]


def call_source(inputs: Sequence[Msg]) -> str:
    """The text grounded values must come from: the user messages of the
    call's input (``CallExecution.inputs``: the caller's, never a message the
    framework added), all of them, in order, joined by a blank line; ``""``
    without one. Spans of a checked output are offsets into this text."""
    return "\n\n".join(m.text for m in _sources(inputs))


def call_taken(inputs: Sequence[Msg]) -> frozenset[tuple[int, int]]:
    """The spans of ``call_source(inputs)`` that an earlier extraction pass took
    as list items: each source message's ``metadata[TAKEN_KEY]``, shifted to
    its place in the joined source; empty when no message carries any. Entries
    that are not ``[start, end]`` pairs of ints are ignored (metadata is the
    caller's: a malformed hint costs recall, never the call)."""
    taken: set[tuple[int, int]] = set()
    offset = 0
    for m in _sources(inputs):
        pairs = m.metadata.get(TAKEN_KEY, ())
        for pair in pairs if isinstance(pairs, _COLLECTIONS) else ():
            if (isinstance(pair, _PAIRS) and len(pair) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)):
                taken.add((offset + pair[0], offset + pair[1]))  # anything else: not a span
        offset += len(m.text) + 2
    return frozenset(taken)


def check_output(
    value: Any, output_type: Any, ground: Grounded | None, source: str,
    taken: frozenset[tuple[int, int]] = frozenset(),
    locators: Mapping[str, Locator] | None = None,
) -> dict[str, list[tuple[int, int]]]:
    """The spans (field path -> ``[start, end)`` offsets into ``source``) of
    ``value``'s grounded values: the fields ``output_type`` marks
    ``Grounded()``, or every free-text string under ``ground``; and of each
    number or date read by value, the first text it is read from
    (``typed_values.written_at``: ``17,562`` for 17562). A value at a
    span of ``taken`` (``call_taken``) moves to another occurrence when it has one.

    Under ``ground`` (the default that grounds every free-text string), a
    number or a date (not ``Derived()``) must also be written in the source,
    read by value (``agentflow.grounding.typed_values.found_in``: ``1,200``
    for ``1200``, ``5 March 2024`` for ``2024-03-05``).

    ``locators``: the fields' learned locators (field name -> ``Locator``):
    a value a field's own locator reads at a place that cuts a token is whole
    there (``agentflow.grounding.locator_whole``: ``2022`` of ``Port=2022``).

    Raises:
        GroundingError: a grounded value is not in the source, or is empty;
            or a number or date the source does not write (its ``unfound``
            names the field with the value as JSON writes it, ``"1994"``).
        DegenerateOutputError: a repetition loop or a repeated list item.

    Each error's ``detail`` (the text the model reads back) names fields by
    the keys of the schema the model was sent (``field_keys.key_path``: its
    aliases); its message, ``unfound`` and ``problems`` by python field
    names, as results do.
    """
    typed: list[TypedValue] = []
    check = check_grounding(grounded_values(value, output_type, ground, typed), source, taken,
                            read_tests(locators, source))
    # (no number or date, the common case: no comprehension, no loop, no copy of the spans)
    unwritten = [t for t in typed if not found_in(t.value, source)] if typed else typed
    if not check.ok or unwritten:
        name = functools.partial(key_path, output_type=output_type)
        detail = "\n".join(filter(None, [check.message(name), _unwritten(unwritten, name)]))
        message = "\n".join(filter(None, [check.message(), _unwritten(unwritten)]))
        raise GroundingError(
            f"grounded values are not in the document:\n{message}",
            output=value,
            unfound=check.unfound + [(t.path, _shown(t.value)) for t in unwritten],
            empty=[p for p, _ in check.empty],
            detail=detail,
            refused=check.refused,
        )
    problems = check_degenerate(value, source)
    if problems:
        detail = "\n".join(f"- {key_path(p, output_type)}: {why}" for p, why in problems)
        raise DegenerateOutputError(
            "the output is degenerate:\n" + "\n".join(f"- {p}: {why}" for p, why in problems),
            output=value, problems=problems,
            detail=detail,
        )
    if not typed:
        return check.spans  # (the check is this call's own: its dict is handed on, not copied)
    spans = dict(check.spans)
    for t in typed:  # a number or a date: the text it is read from (17,562; 08/Jan/24)
        place = written_at(t.value, source)
        if place is not None and t.path not in spans:
            spans[t.path] = [place]
    return spans


def _shown(value: Any) -> str:
    """A number or date as the model wrote it in JSON (``1994``, ``2024-03-05``)."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _unwritten(values: Sequence[TypedValue], name: Any = None) -> str:
    """One line per number or date the document does not write (for the
    model and for errors); ``name`` spells a field path (default: as is)."""
    show = name or (lambda p: p)
    return "\n".join(
        f"- {show(t.path)}: {_shown(t.value)} is not written in the document; use "
        + ("a date" if hasattr(t.value, "isoformat") else "a number")
        + " the document writes" + (", or null if the document does not say" if t.optional
                                    else "") for t in values)
