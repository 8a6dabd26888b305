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

__all__ = ["shared_reason", "shared_with"]


def shared_with(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Top-level field -> the other top-level fields of ``record`` (a stored
    JSONL record: ``output``, ``spans``) that hold the same non-empty string
    at the same spans, in the record's field order; fields that share with
    none are left out. A malformed record gives ``{}``."""
    output, spans = record.get("output"), record.get("spans")
    if not isinstance(output, Mapping) or not isinstance(spans, Mapping):
        return {}
    placed: dict[str, tuple[str, str]] = {}
    for name, value in output.items():
        where = spans.get(name)
        if isinstance(value, str) and value.strip() and isinstance(where, list) and where:
            placed[str(name)] = (" ".join(value.split()), repr(where))
    out: dict[str, list[str]] = {}
    for name, key in placed.items():
        others = [other for other, k in placed.items() if other != name and k == key]
        if others:
            out[name] = others
    return out


def shared_reason(others: list[str]) -> str:
    """The review page's words for a field that shares its place with
    ``others`` (``""`` for none)."""
    if not others:
        return ""
    names = ", ".join(repr(o) for o in others)
    return (f"the same text at the same place as {names}: the schema gives them different "
            "meanings, so at most one is likely meant")
