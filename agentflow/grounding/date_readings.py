"""The dates and times of day a text writes (``date_readings``), and the
stretches of it that are therefore no number (``part_spans``): what
``agentflow.grounding.typed_values`` holds a date field to, and what
``agentflow.grounding.number_readings`` leaves out.

A date is written as ``2024-03-05`` (also ``2024/03/05``, ``2024.03.05``),
``5 March 2024`` (``5th March, 2024``, ``5th of March 2024``),
``March 5, 2024`` (``MAR 5 2024``), ``5 Mar 2024``, ``05-Mar-2024``,
``05/Mar/2024``, ``05-Mar-24`` and ``05/Mar/24`` (a Jira or a web server's
log), ``2024-Mar-05``, ``Mar-05-2024``, ``05.03.2024``, ``03/05/2024`` or
``05-03-2024`` (either order of day and month: both readings are kept; the
two separators alike), never inside a longer run of digits, a word or a
dotted version (``12024-03-05``, ``v1.2.2024``, ``1.2.2024.5``: no date).
A month's name is English, in any letter case, whole or cut to at least
three letters (``Sept``). A two-digit year is read only after a month's
name and a ``-`` or ``/`` (``08/Jan/24``), as POSIX ``strptime``'s ``%y``
reads it: 69-99 are 1969-1999, 00-68 are 2000-2068; all-digit dates with a
two-digit year (``01/08/24``) are not read (day, month and year could each
be any of the three). A time of day is ``10:45``, ``10:45:30`` or
``10:45:30.250`` (hours 0-23, minutes and seconds 0-59; also after a date's
``T``, and a ``+01:00`` offset).

Other forms (a month's name in another language, ``20240305``, a day of
the year) are not read: a document that writes its date only so has no
date for grounding (``agentflow.output.grammar_typed.typed_reason`` says
what to do).

A date's day and month and every part of a time of day are **no number**:
``2024-03-05`` grounds no quantity 3 or 5, ``10:45`` no 10 or 45 (a ratio
written ``1:10`` is read as a time too: a value taken from it is flagged,
never passed). A date's **year is a number** (``2024``, in every form,
``05.03.2024`` included): a ``year`` field is often taken from a date.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["date_readings", "part_spans", "placed_dates", "year_readings"]

_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december"]
_MONTH = r"(?P<mon>[A-Za-z]{3,9})\.?"
_DATES = [
    re.compile(r"(?<![\w.])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"
               r"(?!\d|\.\d)"),
    re.compile(rf"(?<![\w.])(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_MONTH}(?![A-Za-z]),? "
               r"(?P<y>\d{4})(?!\d)"),
    re.compile(rf"(?<![A-Za-z]){_MONTH}(?![A-Za-z]) (?P<d>\d{{1,2}})(?:st|nd|rd|th)?,? "
               r"(?P<y>\d{4})(?!\d)"),
    re.compile(r"(?<![\w.])(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})"
               r"(?!\.?\d)"),
    re.compile(r"(?<![\w.])(?P<d>\d{1,2})(?P<sep>[-/])(?P<mon>[A-Za-z]{3,9})(?P=sep)"
               r"(?P<y>\d{4}|\d{2})(?![\d.]\d|\d)"),
    re.compile(r"(?<![\w.])(?P<y>\d{4})(?P<sep>[-/])(?P<mon>[A-Za-z]{3,9})(?P=sep)"
               r"(?P<d>\d{1,2})(?!\d|\.\d)"),
    re.compile(r"(?<![A-Za-z])(?P<mon>[A-Za-z]{3,9})(?P<sep>[-/])(?P<d>\d{1,2})(?P=sep)"
               r"(?P<y>\d{4})(?!\d)"),
]
"""ISO order; day then month's name; month's name then day; day and month
as digits, either order; day, month's name and year joined by ``-`` or
``/`` (a two-digit year too); year, month's name and day so joined; month's
name, day and year so joined."""


def _year(digits: str) -> int:
    """A date's year as written: four digits as they are, two as POSIX
    ``strptime``'s ``%y`` reads them (69-99: 1969-1999; 00-68: 2000-2068)."""
    year = int(digits)
    return year if len(digits) == 4 else year + (1900 if year >= 69 else 2000)

_TIME = re.compile(r"(?:(?<![\w.:])|(?<=\dT))(?:[01]?\d|2[0-3]):[0-5]\d"
                   r"(?::[0-5]\d(?:[.,]\d+)?)?(?![\d:]|[.,]\d)")
"""A time of day (hours 0-23, minutes, seconds, a fraction of a second)."""


def _month(word: str) -> int | None:
    """1-12 for a month's name or its abbreviation of at least three letters
    (``Mar``, ``Sept``, ``March``), else ``None`` (``Marchxyz``, ``Mart``)."""
    word = word.lower()
    return next((i for i, name in enumerate(_MONTH_NAMES, 1) if name.startswith(word)), None)


@lru_cache(maxsize=16)
def _matches(source: str) -> tuple[tuple[re.Match[str], tuple[dt.date, ...]], ...]:
    """Each date written in ``source`` (pattern order) with its valid days
    (day.month before month/day); a match no reading of which is a day is
    left out (``13/13/2024``)."""
    found = []
    for pattern in _DATES:
        for match in pattern.finditer(source):
            parts = match.groupdict()
            year = _year(parts["y"])
            pairs: list[tuple[int, int]] = []
            if parts.get("mon"):
                month = _month(parts["mon"])
                if month is None:
                    continue
                pairs.append((month, int(parts["d"])))
            elif parts.get("m"):
                pairs.append((int(parts["m"]), int(parts["d"])))
            else:
                a, b = int(parts["a"]), int(parts["b"])
                pairs += [(b, a), (a, b)]  # day.month or month/day: both are candidates
            days = []
            for month, day in pairs:
                try:
                    days.append(dt.date(year, month, day))
                except ValueError:
                    continue
            if days:
                found.append((match, tuple(days)))
    return tuple(found)


def date_readings(source: str) -> Iterator[tuple[int, dt.date]]:
    """``(offset, day)`` for every reading of every date ``source`` writes
    (see the module docstring), by form, not in document order."""
    for match, days in _matches(source):
        for day in days:
            yield match.start(), day


def placed_dates(source: str) -> Iterator[tuple[int, int, dt.date]]:
    """``(start, end, day)``: ``date_readings`` with the end of the text
    each day is read from (``08/Jan/24``)."""
    for match, days in _matches(source):
        for day in days:
            yield match.start(), match.end(), day


def year_readings(source: str) -> Iterator[tuple[int, int, int]]:
    """``(start, end, year)`` of the year of every date ``source`` writes
    with four digits (a two-digit year is the number it writes: ``24``)."""
    for match, _ in _matches(source):
        if len(match.group("y")) == 4:
            yield match.start("y"), match.end("y"), int(match.group("y"))


def part_spans(source: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of every stretch of ``source`` that is
    a date's day or month or a time of day: no number is read there.
    Sorted by start, possibly overlapping."""
    spans: list[tuple[int, int]] = []
    for match, _ in _matches(source):
        for name in ("d", "m", "a", "b"):
            if match.groupdict().get(name) is not None:
                spans.append(match.span(name))
    spans += (m.span() for m in _TIME.finditer(source))
    return sorted(spans)
