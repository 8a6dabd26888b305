"""Fields that hold the same text at the same place as another field.

Two top-level fields of a record whose values are the same string grounded
at exactly the same spans (``product`` and ``model_number`` both
``NC4512``, from the one place the document writes it) read one piece of
the document for two meanings the schema keeps apart: at most one of them
is usually what the document says there. This is no confidence level of
its own: a field is confident only where its own locator or hand rule
pinned its value (``agentflow.extraction.confidence``), and a field without
such a rule that shares the span is ``GROUNDED``, below the review
threshold already. It is a reason: ``shared_with`` names, for each such
field of a stored record, the fields it shares its place with, and the
review page says so (``agentflow.extraction._report_fields``), so that a
reviewer knows which of the two to look at first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SHARED_NAMES", "shared_reason", "shared_with"]


SHARED_NAMES = 5
"""Most other fields ``shared_reason`` names (the rest are counted): a record
whose thousands of fields share one place would otherwise write, for each
field, every other field's name (a page, and memory, growing with the square
of the number of fields)."""


def shared_with(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Top-level field -> every top-level field of ``record`` (a stored
    JSONL record: ``output``, ``spans``) that holds the same non-empty string
    at the same spans, itself included, in the record's field order (one list
    per place, shared by its fields: linear in the number of fields); fields
    that share with none are left out. A malformed record gives ``{}``."""
    output, spans = record.get("output"), record.get("spans")
    if not isinstance(output, Mapping) or not isinstance(spans, Mapping):
        return {}
    places: dict[tuple[str, str], list[str]] = {}
    for name, value in output.items():
        where = spans.get(name)
        if isinstance(value, str) and value.strip() and isinstance(where, list) and where:
            key = (" ".join(value.split()), repr(where))
            places.setdefault(key, []).append(str(name))
    return {name: group for group in places.values() if len(group) > 1 for name in group}


def shared_reason(name: str, group: list[str]) -> str:
    """The review page's words for field ``name`` that shares its place with
    the other fields of ``group`` (``""`` for none); at most
    ``SHARED_NAMES`` of them named, the rest counted."""
    others = [o for o in group[:SHARED_NAMES + 1] if o != name][:SHARED_NAMES]
    if not others:
        return ""
    rest = len(group) - 1 - len(others)
    names = ", ".join(repr(o) for o in others) + (f" and {rest:,} more" if rest > 0 else "")
    return (f"the same text at the same place as {names}: the schema gives them different "
            "meanings, so at most one is likely meant")
