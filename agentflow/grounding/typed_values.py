"""Whether a value that is not a copied string is written in the document:
the same number, the same date, the same label (``found_in``).

Grounding proper (``agentflow.grounding``) places copied strings;
numbers, dates and choices are normalised by the model (``1,200`` read as
``1200``, ``5 March 2024`` as ``2024-03-05``), so they are checked by value:

* a number (``int``, ``float``, ``Decimal``; never a ``bool``) is found when
  it equals any reading of a number the document writes
  (``agentflow.grounding.number_readings``: ``1,234.50``, ``1.234,56``,
  ``1 234,56`` with a no-break space, ``1.5e3``, ``.5``, ``USD1,234``,
  ``€12``; ``12%`` reads 12 and 0.12; ``1,234`` reads 1234, and 1.234
  only in a document that shows a decimal comma: no prefix of a grouped
  number, ``42`` of ``42,000``, stands for it);
  a plain space never joins digit groups (``80 443 8080`` is three numbers,
  never 80443); a number is never read out of a word or a dotted version
  (``x86``, ``1.5.2``: no number; ``1995-2005``: 1995 and 2005), nor out
  of a date's day or month or a time of day (``2024-03-05``: 2024 only;
  ``10:45``: no number);
* a date (``date``; a ``datetime`` by its date) when the document writes the
  same day as ``2024-03-05``, ``5 March 2024``, ``March 5, 2024``, ``5 Mar
  2024``, ``05-Mar-2024``, ``05/Mar/24``, ``2024-Mar-05``, ``05.03.2024``,
  ``03/05/2024`` or ``05-03-2024`` (either order of
  day and month; ``agentflow.grounding.date_readings``), never inside a
  longer run of digits, a word or a dotted version (``12024-03-05``,
  ``v1.2.2024``, ``1.2.2024.5``: no date);
* a choice (a ``str`` enum member, or a string) when its label occurs as a
  whole word, letter case ignored;
* anything else (a boolean, an object) is never found: nothing in the text
  can confirm it, and the record lists it as *ungrounded*.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from enum import Enum
from functools import lru_cache
from typing import Any

from agentflow.grounding.date_readings import placed_dates
from agentflow.grounding.number_readings import placed_readings

__all__ = ["found_in", "written_at", "written_dates", "written_numbers"]

def found_in(value: Any, source: str) -> bool:
    """Whether ``value`` is written in ``source`` (see the module docstring)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, int | float | Decimal):
        return _number_in(value, source)
    if isinstance(value, dt.datetime):
        return value.date() in _dates(source)
    if isinstance(value, dt.date):
        return value in _dates(source)
    if isinstance(value, str):
        text = value.strip()
        return bool(text) and re.search(
            rf"(?<!\w){re.escape(text)}(?!\w)", source, re.IGNORECASE) is not None
    return False


def _number_in(value: int | float | Decimal, source: str) -> bool:
    target = _finite(value)
    return target is not None and target in _numbers(source)  # 1200 == 1.2E+3, same hash


def _finite(value: int | float | Decimal) -> Decimal | None:
    """``value`` as a ``Decimal``, or ``None`` when it is no finite number
    (a NaN, signalling or quiet, or an infinity: no document writes one, and
    a signalling NaN cannot even be hashed or compared)."""
    try:  # an int as itself: str() of a very long one raises
        target = Decimal(value) if isinstance(value, int) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return target if target.is_finite() else None


def written_numbers(source: str) -> list[Decimal]:
    """Every number ``source`` writes (see the module docstring), in order of
    first occurrence, each once by value (``1,200`` and ``1200`` are one)."""
    return list(_numbers(source))


@lru_cache(maxsize=16)  # a record's values are checked against one text: read it once
def _numbers(source: str) -> Mapping[Decimal, None]:
    """The numbers ``source`` writes (every reading), in document order,
    each once by value."""
    placed = sorted(_placed_numbers(source), key=lambda r: r[0])  # stable: a convention's order
    return dict.fromkeys(number for _, _, number in placed)


def written_dates(source: str) -> list[dt.date]:
    """Every day ``source`` writes as a date (see the module docstring), in
    order of first occurrence, each once (``05.03.2024``: both readings)."""
    return list(_dates(source))


@lru_cache(maxsize=16)
def _dates(source: str) -> Mapping[dt.date, None]:
    """The days ``source`` writes, in document order, each once."""
    placed = sorted(_placed_dates(source), key=lambda p: p[0])  # stable: day.month first
    return dict.fromkeys(day for _, _, day in placed)


def written_at(value: Any, source: str) -> tuple[int, int] | None:
    """The ``[start, end)`` offsets of the first text of ``source`` a number
    or a date ``value`` is read from (``17,562`` for 17562, ``08/Jan/24``
    for 2024-01-08: what a review page highlights), or ``None`` when it is
    not written there (``found_in``) or is no number or date."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        target = _finite(value)
        return None if target is None else _number_places(source).get(target)
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return _date_places(source).get(value)
    return None


@lru_cache(maxsize=16)
def _number_places(source: str) -> Mapping[Decimal, tuple[int, int]]:
    """Each number ``source`` writes -> where it is first written (the
    longest text read at that place)."""
    places: dict[Decimal, tuple[int, int]] = {}
    for start, end, number in sorted(_placed_numbers(source), key=lambda r: (r[0], -r[1])):
        places.setdefault(number, (start, end))
    return places


@lru_cache(maxsize=16)
def _date_places(source: str) -> Mapping[dt.date, tuple[int, int]]:
    """Each day ``source`` writes -> where it is first written."""
    places: dict[dt.date, tuple[int, int]] = {}
    for start, end, day in sorted(_placed_dates(source), key=lambda r: (r[0], -r[1])):
        places.setdefault(day, (start, end))
    return places


@lru_cache(maxsize=16)
def _placed_numbers(source: str) -> tuple[tuple[int, int, Decimal], ...]:
    """``number_readings.placed_readings(source)``, read once per text for
    both what it writes (``_numbers``) and where (``_number_places``)."""
    return tuple(placed_readings(source))


@lru_cache(maxsize=16)
def _placed_dates(source: str) -> tuple[tuple[int, int, dt.date], ...]:
    """``date_readings.placed_dates(source)``, read once per text (as
    ``_placed_numbers``)."""
    return tuple(placed_dates(source))
