"""The numbers and dates of an output that the ``ground=`` default reads by
value (``TypedValue``): which leaves they are, by type (``is_typed``) or by
JSON Schema node (``schema_typed``). ``agentflow.grounding.values`` walks
the output; ``agentflow.grounding.output_checks`` checks each against the
document (``agentflow.grounding.typed_values.found_in``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any

from agentflow._slots_init import slot_init
from agentflow.grounding.marker import TYPED, TYPED_KEY, typed_kind

__all__ = ["TypedValue", "is_typed", "reads_by_value", "schema_typed"]


@slot_init
@dataclass(frozen=True, slots=True)
class TypedValue:
    """One number or date of an output that the ``ground=`` default reads by
    value (``agentflow.grounding.typed_values.found_in``): its field path,
    value (``int``/``float``/``Decimal``, ``date``/``datetime``) and whether
    ``None`` was allowed where it stands."""

    path: str
    value: Any
    optional: bool = False


_NUMBERS = (int, float, Decimal)
_READ_BY_VALUE = (*_NUMBERS, dt.date)
_NEVER = (bool, Enum)
"""Kept as tuples: ``is_typed`` runs for every leaf of every output."""


def is_typed(v: Any, tp: Any) -> bool:
    """Whether ``v``, declared ``tp``, is a number or a date read by value: a
    number or date type (never a ``bool``, an enum, a ``Literal``)."""
    if not isinstance(v, _READ_BY_VALUE) or isinstance(v, _NEVER):
        return False
    return reads_by_value(tp)


def reads_by_value(tp: Any) -> bool:
    """Whether ``tp`` is a number or date type (never a ``bool``, an enum, a
    ``Literal``): the declared type half of ``is_typed``."""
    return isinstance(tp, type) and issubclass(tp, _READ_BY_VALUE) and not issubclass(
        tp, _NEVER)


def schema_typed(v: Any, node: Mapping[str, Any], where: str, optional: bool,
                 typed: list[TypedValue]) -> bool:
    """A number, or an ISO date string, of a JSON Schema node the ``ground=``
    default reads by value (``marker.typed_kind``): appended to ``typed`` as
    a number or a ``date``/``datetime``; whether it was one."""
    kind = node.get(TYPED_KEY) if node.get(TYPED_KEY) in TYPED else typed_kind(node)
    if kind == "number" and isinstance(v, int | float) and not isinstance(v, bool):
        typed.append(TypedValue(where or "result", v, optional))
        return True
    if kind in ("date", "date-time") and isinstance(v, str):
        try:
            day: dt.date = (dt.date.fromisoformat(v) if kind == "date" else
                            dt.datetime.fromisoformat(v.replace("Z", "+00:00")))
        except ValueError:
            return False  # not a date: the schema's validation speaks for it
        typed.append(TypedValue(where or "result", day, optional))
        return True
    return False
