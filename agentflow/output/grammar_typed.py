"""The values a number or a date field of a grounded grammar may take: the
numbers (the dates) the source writes, read by value as verification reads
them (``agentflow.grounding.typed_values``), spelled as JSON. Pure functions
of the node and the source; ``agentflow.output.grammar_rules`` spells them
into a rule."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from agentflow.grounding.typed_values import written_dates, written_numbers
from agentflow.output.grammar_values import MAX_CANDIDATES

__all__ = ["TIME", "TYPED_ADVICE", "date_literals", "number_literals", "typed_reason"]

TIME = "/[0-2][0-9]:[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?(Z|[+-][0-2][0-9]:[0-5][0-9])?/"
"""The time of day after a listed date's ``T`` in a ``date-time`` value (ISO
8601 as JSON Schema's ``format`` and pydantic read it): the day is the
document's, the time is not checked (verification reads a date-time by its
date)."""


def _bound(node: Mapping[str, Any], key: str) -> Decimal | None:
    """The node's ``key`` bound as a ``Decimal``; ``None`` when it has none
    or a NaN (which bounds nothing, and which a comparison refuses)."""
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:  # an int as itself: str() of a very long one raises
        bound = Decimal(value) if isinstance(value, int) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return None if bound.is_nan() else bound


_BOUNDS = (("minimum", "minimum"), ("exclusiveMinimum", "more than"),
           ("maximum", "maximum"), ("exclusiveMaximum", "less than"),
           ("multipleOf", "a multiple of"))
"""The bound keywords ``_allowed`` reads, and how an error names each."""


def _integer(node: Mapping[str, Any]) -> bool:
    """Whether a number node takes only whole numbers (``type`` names
    ``integer`` and not ``number``)."""
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    return "number" not in kinds


TYPED_ADVICE = (
    "if the document writes the value in a form agentflow does not read (or not at all), "
    "make the field optional (`X | None = None`), mark it `Annotated[X, Derived()]` (not "
    "held to the document), or type it `str` (copied as written)")
"""What a refusal of a number or date field (``typed_reason``) tells the user
to do."""


def typed_reason(node: Mapping[str, Any], kind: str, source: str) -> str:
    """Why a number or date node (``kind``: ``"number"``, ``"date"``,
    ``"date-time"``) has no value in ``source``: no number (date) the
    document writes could be read (``agentflow.grounding.number_readings``,
    ``date_readings``: a document may write one in a form they do not read,
    a date as ``le 8 janvier``, a number as ``twelve``), or none it writes
    satisfies the node's constraints, named (``integer, minimum 1990,
    maximum 2000``). ``TYPED_ADVICE`` says what to do."""
    if kind != "number":
        return ("no date the document writes could be read (forms read: 2024-03-05, "
                "5 March 2024, March 5, 2024, 05-Mar-2024, 05/Mar/24, 05.03.2024, 03/05/2024)")
    if not written_numbers(source):
        return "no number the document writes could be read (in digits: 1,234.50, 1.234,56, 12%)"
    named = ["a whole number"] if _integer(node) else []
    named += [f"{word} {_named(value)}"
              for key, word in _BOUNDS if (value := _bound(node, key)) is not None]
    return ("no number the document writes satisfies the field's constraints ("
            + ", ".join(named) + ")") if named else "no number the document writes fits the field"


def _named(value: Decimal) -> str:
    """A bound as an error names it: as JSON spells it, or past 30
    characters in short scientific form (``1.000e+4400``)."""
    text = _spelled(value, value == value.to_integral_value())
    return text if len(text) <= 30 else format(value, ".3e")


def _allowed(number: Decimal, node: Mapping[str, Any]) -> bool:
    """Whether ``number`` keeps the node's JSON Schema bounds (``minimum``,
    ``maximum``, their exclusive forms, ``multipleOf``)."""
    low, high = _bound(node, "minimum"), _bound(node, "maximum")
    xlow, xhigh = _bound(node, "exclusiveMinimum"), _bound(node, "exclusiveMaximum")
    step = _bound(node, "multipleOf")
    return ((low is None or number >= low) and (high is None or number <= high)
            and (xlow is None or number > xlow) and (xhigh is None or number < xhigh)
            and (step is None or step == 0 or number % step == 0))


def _spelled(number: Decimal, integer: bool) -> str:
    """``number`` as a JSON number: an integer without a fraction, else its
    digits as written (``1234.50``), never an exponent, a ``+`` or a leading
    zero; never through ``int``, whose ``str`` refuses more than 4,300
    digits)."""
    text = format(number.to_integral_value() if integer else number, "f")
    return "0" if text in ("-0", "-0.0") else text


def number_literals(node: Mapping[str, Any], source: str) -> list[str] | None:
    """The JSON numbers a number node may take in ``source``: each number
    the source writes (``written_numbers``, document order), an
    ``integer`` node only the whole ones, within the node's bounds. ``[]``:
    none; ``None``: more than ``MAX_CANDIDATES`` (verification decides)."""
    integer = _integer(node)
    found = [n for n in written_numbers(source)
             if (not integer or n == n.to_integral_value()) and _allowed(n, node)]
    if len(found) > MAX_CANDIDATES:
        return None
    return list(dict.fromkeys(_spelled(n, integer) for n in found))


def date_literals(kind: str, source: str) -> list[str] | None:
    """The JSON string bodies a ``date`` node may take in ``source`` (each
    day the source writes, ISO ``YYYY-MM-DD``, document order); for a
    ``date-time`` node the ``YYYY-MM-DDT`` each value begins with (``TIME``
    follows). ``None``: more than ``MAX_CANDIDATES``."""
    days = written_dates(source)
    if len(days) > MAX_CANDIDATES:
        return None
    return [json.dumps(d.isoformat())[1:-1] + ("T" if kind == "date-time" else "")
            for d in days]
