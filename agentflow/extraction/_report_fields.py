"""What the review page says about each field of a record: its confidence,
what that level means, whether it needs review, and whether a value without
a span is written in the document at all (``agentflow.extraction.report``).

Confidence. A record's ``confidence`` maps each top-level field to one of the
levels of ``agentflow.extraction.confidence`` (rounded to 3 places); the page
shows the number and what that level means (``LEVELS``). A number that is no
known level is shown bare: the page never guesses a reason.

Placement. A value with a span is in the document where the span says. One
without a span (``placement``) is:

- ``ABSENT_VALUE``, *not in the document*: the record lists it (or the item
  or object holding it) under ``ungrounded``: nothing in the document
  confirms it (an invented value: a year the document never writes);
- ``UNPLACED``, *no span*: the document writes it (the record computed
  confidence and did not list it as ungrounded: the same number, date or
  label was found, or a locator or hand rule held), but no span points at it;
- ``UNKNOWN``, *no span*: an older record without ``confidence`` whose source
  is not available, or past ``CHECK_BUDGET`` look-ups in its document.

For an older record without ``confidence`` the page looks the value up itself
in the text shown (``agentflow.grounding.typed_values.found_in``: the same
number, date or whole words), at most ``CHECK_BUDGET`` times per document, so
the page stays linear in the size of its sources.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentflow.extraction import confidence as levels
from agentflow.extraction._report_records import Record, _leaves, review_fields
from agentflow.extraction.dropped import DROPPED
from agentflow.extraction.list_repeats import REPEATED, repeat_reason
from agentflow.extraction.masked import MASKED, MASKED_REASON
from agentflow.extraction.shared_spans import shared_reason, shared_with
from agentflow.grounding.typed_values import found_in

__all__ = ["ABSENT_VALUE", "CHECK_BUDGET", "LEVELS", "UNKNOWN", "UNPLACED", "FieldNote",
           "Placer", "field_leaves", "field_notes"]

LEVELS: dict[float, str] = {
    levels.HELD: "its locator finds this value",
    levels.ABSENT: "null, and its locator finds nothing either",
    levels.LIST_CUT: "the first items only: the document lists more than the schema's max_length",
    levels.GROUNDED: "copied from the document, but nothing confirms it is the right place",
    levels.UNLOCATED_NULL: "null, but nothing shows the document lacks it",
    levels.CONFLICTED: "parts of the document read differently: its chunks (or passes) gave "
                       "other values, and the merge rule kept this one",
    levels.DOUBTED: f"the model was unsure (it wrote a token less than "
                    f"{levels.DOUBT_BELOW:.0%} likely)",
    levels.UNCHECKED: "not found in the document: nothing checked it",
    levels.DISAGREES: "its locator disagrees (it finds another value, or none)",
    REPEATED: "the list holds an item more times than the document writes it",
    MASKED: MASKED_REASON,
    DROPPED: "null: the value the model gave could not be placed in the document, so it was "
             "dropped (the record's `dropped` says why)",
}
"""What each confidence level of ``agentflow.extraction.confidence`` means, by its value."""

ABSENT_VALUE = "absent"
UNPLACED = "unplaced"
UNKNOWN = "unknown"

CHECK_BUDGET = 64
"""Look-ups of unspanned values per document in an older record (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class FieldNote:
    """A top-level field of a record as the page shows it.

    Attributes:
        confidence: the record's confidence for it in ``[0, 1]``, or ``None``.
        why: what that level means (``LEVELS``), ``""`` when it is no known level.
        flagged: the record's ``needs_review`` names it (an ``ok`` record only).
    """

    confidence: float | None
    why: str
    flagged: bool


def _score(value: object) -> float | None:
    """A confidence as a finite float, or ``None`` (not a number, or too large for one)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        score = float(value)
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


def field_notes(record: Record) -> dict[str, FieldNote]:
    """``top-level field name -> FieldNote`` for every field the record's
    ``confidence`` or ``needs_review`` names (others are left out); a list the
    record's ``cut_lists`` names (kept at its ``max_length``) says how many
    items the document lists and how many were kept; a dict its
    ``cut_dicts`` names, that it holds the most keys it may (the document
    may hold more); a list its ``repeated_items`` names, which item it
    repeats and how often the document writes it; a field its ``dropped``
    names, why its value was refused; a field its ``masked`` names, that a
    credential agentflow was given was masked in it; a field that holds the
    same text at the same place as another (``shared_spans``), which."""
    raw = record.get("confidence")
    scores = {str(k): _score(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
    flagged = set(review_fields(record))
    cut = record.get("cut_lists")
    cuts = {str(k): v for k, v in cut.items()} if isinstance(cut, Mapping) else {}
    full = record.get("cut_dicts")
    capped = {str(k) for k in full} if isinstance(full, Mapping) else set()
    again = record.get("repeated_items")
    repeats = {str(k): v for k, v in again.items()} if isinstance(again, Mapping) else {}
    gone = record.get("dropped")  # agentflow.extraction.dropped
    dropped = {str(k): str(v) for k, v in gone.items()} if isinstance(gone, Mapping) else {}
    hid = record.get("masked")  # agentflow.extraction.masked
    masked = {str(k) for k in hid} if isinstance(hid, Mapping) else set()
    shared = shared_with(record)
    output = record.get("output")
    notes: dict[str, FieldNote] = {}
    for name in [*scores, *(f for f in flagged if f not in scores)]:
        score = scores.get(name)
        why = LEVELS.get(round(score, 3), "") if score is not None else ""
        listed = cuts.get(name)
        kept = output.get(name) if isinstance(output, Mapping) else None
        if isinstance(listed, int) and not isinstance(listed, bool) and isinstance(kept, list):
            why = f"the document lists {listed} items; kept the first {len(kept)}"
        elif name in capped and isinstance(kept, Mapping):
            why = (f"holds {len(kept)} keys, the most its schema allows: "
                   "the document may hold more")
        if repeat_reason(repeats.get(name)):
            why = repeat_reason(repeats.get(name))
        if name in dropped:
            why = f"dropped (null): the model's value could not be placed: {dropped[name]}"
        if name in masked:
            why = MASKED_REASON
        if name in shared:
            why = "; ".join(w for w in (why, shared_reason(name, shared[name])) if w)
        notes[name] = FieldNote(score, why, name in flagged)
    return notes


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


class Placer:
    """Where a record's unspanned values are: ``placement`` for each leaf of
    its output, with the document's text shown (``None``: not available)."""

    def __init__(self, record: Record, text: str | None) -> None:
        raw = record.get("ungrounded")
        self._ungrounded = [str(p) for p in raw] if isinstance(raw, list) else []
        # a record that computed confidence lists every value nothing confirmed
        self._authoritative = isinstance(record.get("confidence"), Mapping) or bool(
            self._ungrounded)
        self._text = text
        self._budget = CHECK_BUDGET

    def _listed(self, path: str) -> bool:
        return any(path == p or path.startswith((f"{p}.", f"{p}["))
                   for p in self._ungrounded)

    def placement(self, path: str, value: Any, spanned: bool) -> str:
        """``""`` (spanned, or null or empty), ``ABSENT_VALUE``, ``UNPLACED``
        or ``UNKNOWN`` for the leaf ``value`` at field path ``path``."""
        if spanned or _is_empty(value):
            return ""
        if self._listed(path):
            return ABSENT_VALUE
        if self._authoritative:
            return UNPLACED
        if self._text is None or self._budget <= 0:
            return UNKNOWN
        self._budget -= 1
        return UNPLACED if found_in(value, self._text) else ABSENT_VALUE


def field_leaves(output: Any) -> list[tuple[str, Any, str]]:
    """``(field path, value, top-level field name)`` for every leaf of an
    output (``_leaves``); the name is ``""`` when the output is no mapping."""
    if not isinstance(output, Mapping) or not output:
        return [(path, value, "") for path, value in _leaves(output)]
    return [(path, value, str(key)) for key, item in output.items()
            for path, value in _leaves(item, str(key))]
