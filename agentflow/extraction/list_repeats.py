"""Lists that hold an item more times than the document writes it.

A list field that holds one item twice (whitespace and letter case folded,
as the document is read) while the document writes it once
(``["2311B", "2311B"]`` for a lot line that names ``2311B`` once; a code
line copied twice) is not the document's list, however right each item is:
the model repeated itself. ``repeated_items`` names such fields with each
repeated item, how many times the list holds it and how many times the
document writes it, at any count from two up; ``with_repeats`` rates them
``REPEATED`` (below ``agentflow.extraction.confidence.REVIEW_BELOW``), so
that the record names them under ``needs_review`` and ``repeated_items``,
and its review page says which item the list repeats.

Times written: the item's whole-token occurrences in the document
(``agentflow.grounding.locate.occurrences``: whitespace folded, letter case
ignored; where the item cuts a token, every occurrence), so an item the
document really lists twice (``Fix typo.`` in two entries) is no repeat.

A list that repeats one item ``agentflow.grounding.degenerate.
MIN_REPEATED_ITEMS`` times or more (a runaway model) is refused as
degenerate before it gets here; fewer repeats keep the record and every
other field, with this flag on the list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from agentflow.extraction.confidence import top_fields
from agentflow.grounding.locate import occurrences

__all__ = ["REPEATED", "repeat_reason", "repeated_items", "with_repeats"]

REPEATED = 0.55
"""A list that holds an item more times than the document writes it."""


_LISTS = (list, tuple)
"""A tuple, not ``list | tuple``: no union made per field."""


def _written(item: str, source: str) -> int:
    """How many times ``source`` writes ``item`` (see the module docstring)."""
    return len(occurrences(item, source, case_sensitive=False, whole_tokens=True) or (
        occurrences(item, source, case_sensitive=False)))


def _key(item: str) -> str:
    """``item`` as ``_written`` finds it: whitespace and letter case folded
    (``AB1`` and ``ab1`` are one item; ``lower``, as ``re.IGNORECASE``
    reads letters: ``ß`` is not ``ss``)."""
    return " ".join(item.split()).lower()


def repeated_items(output: Any, source: str, fields: Mapping[str, Any] | None = None
                   ) -> dict[str, list[dict[str, Any]]]:
    """Top-level list field of ``output`` (a pydantic model or a mapping) ->
    ``[{"item": text, "listed": n, "written": m}, ...]`` for each string
    item it holds ``n >= 2`` times (whitespace and letter case folded, as
    the document is read: ``_written``) while ``source``
    writes it ``m < n`` times, in the order the items first appear; fields
    without such an item are left out (``{}``: none). ``fields``: the
    output's ``top_fields`` when the caller has them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, value in (top_fields(output) if fields is None else fields).items():
        if not isinstance(value, _LISTS):
            continue
        texts = {_key(v): v for v in reversed(value) if isinstance(v, str)}
        counts = Counter(_key(v) for v in value if isinstance(v, str) and v.strip())
        found = []
        for key, n in counts.items():
            if n < 2:
                continue
            written = _written(texts[key], source)
            if n > written:
                found.append({"item": texts[key], "listed": n, "written": written})
        if found:
            out[name] = found
    return out


def with_repeats(confidence: Mapping[str, float],
                 repeats: Mapping[str, Any]) -> dict[str, float]:
    """``confidence`` with each field ``repeats`` names at most ``REPEATED``."""
    return {name: min(score, REPEATED) if name in repeats else score
            for name, score in confidence.items()}


def repeat_reason(found: Any) -> str:
    """What a record's ``repeated_items`` entry for one field says, in words
    (``"lists '2311B' 2 times; the document writes it once"``); ``""`` for
    an entry of another shape."""
    if not isinstance(found, list):
        return ""
    parts = []
    for entry in found:
        if not isinstance(entry, Mapping):
            continue
        item, listed, written = entry.get("item"), entry.get("listed"), entry.get("written")
        if not isinstance(item, str) or not isinstance(listed, int) or not isinstance(
                written, int):
            continue
        shown = item if len(item) <= 40 else item[:37] + "..."
        times = {0: "nowhere", 1: "once", 2: "twice"}.get(written, f"{written} times")
        parts.append(f"lists {shown!r} {listed} times; the document writes it {times}")
    return "; ".join(parts)
