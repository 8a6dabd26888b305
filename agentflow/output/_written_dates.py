"""A date written in another form than ISO 8601 for a ``date`` field
(``iso_date``): ``"March 5, 2024"``, ``"5th of March 2024"``,
``"2024/03/05"``, ``"13/03/2024"``.

Models copy a date as the document writes it. pydantic reads ISO 8601
only ("invalid character in year"), so a retry was spent on a value with
one reading, and a model that copied it again failed the call. A string
that is one date as a whole, with one reading (the forms
``agentflow.grounding.date_readings`` reads: English month names, either
separator), is read as that date. ``"05/03/2024"`` (the 5th of March or the
3rd of May), a month name in another language, and text around the date
are left to validation, which asks the model again; so is a datetime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.grounding.date_readings import placed_dates
from agentflow.output.dialects import resolve_ref, schema_types

__all__ = ["iso_date"]


def iso_date(data: Any, node: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """``data``'s one date reading as ``YYYY-MM-DD`` when ``node`` takes a
    string only as a ``date`` (its ``anyOf``/``oneOf`` branches too); else
    ``data``."""
    if not isinstance(data, str) or not _date_only(node, root):
        return data
    text = data.strip()
    days = {day for start, end, day in placed_dates(text) if start == 0 and end == len(text)}
    return days.pop().isoformat() if len(days) == 1 else data


def _date_only(node: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    """Whether ``node`` has a ``date`` string and no other string."""
    strings = [branch for branch in _branches(resolve_ref(node, root), root, 0)
               if "string" in schema_types(branch) or not schema_types(branch)]
    return bool(strings) and all(b.get("format") == "date" and "string" in schema_types(b)
                                 and "enum" not in b for b in strings)


def _branches(node: Mapping[str, Any], root: Mapping[str, Any],
              depth: int) -> list[Mapping[str, Any]]:
    """``node``'s leaf ``anyOf``/``oneOf`` branches (``$ref`` followed), or ``[node]``."""
    branches = [b for key in ("anyOf", "oneOf") for b in node.get(key) or ()
                if isinstance(b, Mapping)]
    if not branches or depth > 16:
        return [node]
    return [leaf for b in branches for leaf in _branches(resolve_ref(b, root), root, depth + 1)]
