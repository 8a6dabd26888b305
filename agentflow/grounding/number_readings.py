"""The numbers a text writes, read in every convention the text allows
(``readings``): what ``agentflow.grounding.typed_values`` holds a number
field to.

A number is *grounded* when it equals **any reading the text allows**; a
stretch of digits written in a way two conventions read differently gives
each convention's reading. The conventions:

* **Point decimal, grouped by ``,``** (English): ``1,234.50`` is 1234.50;
  ``_``, a no-break, thin or narrow no-break space group digits too
  (``1 000``, ``12_000``), each group three digits.
* **Comma decimal, grouped by ``.``** (most of Europe): ``1.234,56`` is
  1234.56, ``12,50`` is 12.50, ``1 234,56`` (a no-break or thin space) is
  1234.56.
* **Indian grouping**: ``12,34,567`` is 1234567 (groups of two, then three).
* **The document's convention decides a comma**
  (``agentflow.grounding.number_conventions`` says what shows which): a
  comma followed by exactly three digits (``42,000``, ``17,562``) groups
  thousands, and a reading that lets a *prefix* of the written number
  stand for it (42 for "42,000", 17 for "17,562") is taken only where the
  document shows a decimal comma:

  - in a **comma-decimal document** (``1.234,56``; ``12,50 €``; ``3,5``
    where no number is grouped by commas) ``42,000`` reads 42 (and no
    longer 42000) and ``1.500`` 1500 (no longer 1.5: in that convention a
    point followed by three digits groups thousands);
  - a document showing **both** conventions (``1,234.50`` and ``3,5``),
    or a decimal comma that may be a pair (``table 3,4``) beside numbers
    grouped by commas, keeps every reading: ``17,562`` is 17562 and
    17.562;
  - a number **grouped by commas** (``1,234``, ``12,34,567``) reads as
    grouped unless the document is a comma-decimal one;
  - digits joined by commas are **list items** (``100,250,500``: 100, 250
    and 500 besides 100250500; ``3,4,5``: 3, 4 and 5) only where the
    document joins items that way (``number_conventions.listed``: a run
    such as ``3,4,5`` no convention reads as one number, a cell with a
    letter joined to the run by a bare comma, ``GV2841,100``, or a CSV row
    under a header of as many names). Letters joined by commas elsewhere
    (``smith,john@x.org``, ``M,L,XL``) and a list written with a space
    after the comma (``2309A, 2310A``) show nothing: ``17,562`` there is
    one number. A part of a comma-joined run is never read alone
    otherwise (neither ``12`` of ``12,34,567`` nor ``1,234`` of
    ``1,234,56``).

  ``1.234`` reads 1.234 and 1234 outside comma-decimal documents (no
  prefix stands for it there: 1.234 is what the point convention writes).
  Digits grouped by commas are no list when a decimal part or an exponent
  follows (``1,234.50``) or a currency is written before (``$1,234``,
  ``USD1,234``): an amount.
* **Exponent**: ``1.5e3`` is 1500, ``2E-4`` is 0.0002 (never its mantissa
  alone).
* **Leading point**: ``.5`` is 0.5.
* **Percentages**: ``12%`` (``12 %``, ``12 percent``, ``12 per cent``)
  reads 12, the number written, and 0.12, the fraction it stands for (how
  spreadsheets and Power Query's ``Percentage.From("12.3%")`` = 0.123 read
  one); ``5‰`` reads 5 and 0.005.
* **Currency**: a symbol (Unicode category Sc: ``$ € £ ¥ ₹ ...``) glued
  before the digits is read past (``€12``, ``-$5`` is -5); so is an ISO
  4217 code (``USD``, ``EUR``) in capitals that starts a word, before an
  amount written grouped or with a decimal part (``USD1,234``,
  ``EUR12.50``): a code glued to bare digits is a word (``TOP10``,
  ``CAD3``, ``USD100``: no number; ``USD 100`` is 100). A sign is ``-``,
  ``+`` or ``−`` (U+2212).

What stays apart:

* a plain space never joins digit groups (``80 443 8080`` is three
  numbers, never 80443);
* a number is never read out of a word (``x86``, ``Q1``, ``SHA256``,
  ``TOP10``: only an ISO 4217 code before an amount may precede the
  digits), a hexadecimal token (``#1e3``, ``#12ab``: no number; ``#12``
  is 12) nor a dotted version or address (``1.5.2``, ``192.168.1.1``:
  no number);
* a date's day and month and a time of day are no number; a date's year
  is (``2024-03-05``, ``03/05/2024``, ``05.03.2024``, ``5 March 2024``:
  2024 only; ``10:45``: none; ``agentflow.grounding.date_readings``);
* a number of more than ``MAX_EXPONENT + 1`` whole digits is none;
* units after the digits are fine (``10kg``, ``12€``, ``3x``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from decimal import Decimal

from agentflow.grounding.date_readings import part_spans, year_readings
from agentflow.grounding.number_conventions import (
    CURRENCY,
    ISO_4217,
    SPACES,
    Conventions,
    conventions,
    listed,
)
from agentflow.grounding.spans import merge_spans

__all__ = ["CURRENCY", "ISO_4217", "MAX_EXPONENT", "Conventions", "conventions", "placed_readings",
           "readings"]

_SIGN = "(?P<sign>[-+\u2212])?"
_CUR = f"[{CURRENCY}]?"
_START = rf"(?=[-+\u2212{CURRENCY}.\d])(?:(?<![\w.])|(?<=(?<!\w)[A-Z]{{3}}))"
"""A number starts (with a sign, a currency symbol, a point or a digit:
the lookahead lets the engine skip other characters fast) after no word
character and no point; or right after
three capital letters that start a word (an ISO 4217 code, checked by
``_code_ok``)."""
_START_GROUPED = (rf"(?=[-+\u2212{CURRENCY}\d])(?:(?<![\w.,])|(?<=(?<!\w)[A-Z]{{3}}))"
                  rf"{_SIGN}{_CUR}")
"""Where a comma-decimal or Indian-grouped number starts, with its sign and
currency symbol: as ``_START``, and never right after a comma (a number
there is a list's next item) nor with a leading point."""

_POINT = re.compile(
    rf"{_START}{_SIGN}{_CUR}(?P<num>\d{{1,3}}(?:[,_{SPACES}]\d{{3}})+(?:\.\d+)?"
    r"|\d+(?:\.\d+)?|\.\d+)(?:[eE](?P<exp>[-+\u2212]?\d+)(?!\w))?(?![\d_]|\.\d)")
"""Point decimal, groups of three by ``,``/``_``/a grouping space; an
exponent; a leading point."""
_COMMA = re.compile(
    rf"{_START_GROUPED}(?P<num>\d{{1,3}}(?:[.{SPACES}]\d{{3}})+(?:,\d+)?|\d+,\d+)"
    r"(?![\d_]|[.,]\d)")
"""Comma decimal, groups of three by ``.``/a grouping space."""
_INDIAN = re.compile(
    rf"{_START_GROUPED}(?P<num>\d{{1,2}}(?:,\d\d)+,\d{{3}}(?:\.\d+)?)(?![\d_]|[.,]\d)")
"""Indian grouping: ``12,34,567.89``."""

_PERCENT = re.compile(r"[ \u00a0\u202f]?(?:(?P<pct>[%\uff05\u066a\ufe6a])|(?P<mille>\u2030)"
                      r"|per ?cent(?!\w))", re.IGNORECASE)


def _code_ok(source: str, start: int, num: str) -> bool:
    """Whether the letters glued before ``start`` (if any) are an ISO 4217
    code before an amount: ``num`` grouped or with a decimal part
    (``USD1,234``, ``EUR12.50``; never ``TOP10``, ``CAD3``)."""
    if not source[start - 1:start].isalpha():
        return True
    return source[start - 3:start] in ISO_4217 and ("," in num or "." in num)


def _priced(source: str, match: re.Match[str]) -> bool:
    """Whether a currency symbol or code is written before ``match``'s
    digits (an amount, never a list: ``$1,234.50``, ``USD1,234``)."""
    return (match.start("num") > match.end("sign") if match.group("sign") else
            match.start("num") > match.start()) or source[match.start() - 1:match.start()].isalpha()


MAX_EXPONENT = 100
"""The largest exponent read (``1e100``); a larger one is no number (a
grammar would have to spell all its digits), nor is a number of more than
``MAX_EXPONENT + 1`` whole digits (a run of 5,000 digits) or one smaller
than ``1e-100`` other than 0: no field holds one, and spelling one as JSON
can fail (Python's limit on the digits of an ``int``)."""


def _value(sign: str | None, digits: str, exp: str | None = None) -> Decimal | None:
    try:
        number = Decimal(digits)
        if exp is not None:
            power = int(exp.replace("\u2212", "-"))
            if abs(power) > MAX_EXPONENT:
                return None
            number = number.scaleb(power)
    except (ArithmeticError, ValueError):  # decimal's signals are ArithmeticErrors
        return None
    if not number.is_finite() or abs(number.adjusted()) > MAX_EXPONENT:
        return None
    return -number if sign in ("-", "\u2212") else number


def _scaled(source: str, end: int, number: Decimal) -> Iterator[Decimal]:
    """``number`` and, when a percent (per mille) sign follows at ``end``,
    the fraction it stands for."""
    yield number
    after = _PERCENT.match(source, end)
    if after is not None:
        yield number.scaleb(-3 if after.group("mille") else -2)


_AS_POINT = str.maketrans("", "", f",_{SPACES}")
_AS_COMMA = str.maketrans({**dict.fromkeys(f".{SPACES}"), ",": "."})
_AS_INDIAN = str.maketrans("", "", ",")
"""Each convention's digits as ``Decimal`` reads them (groups joined, the
decimal mark a point)."""


_HEX = re.compile(r"#[0-9A-Fa-f]*[A-Fa-f][0-9A-Fa-f]*(?!\w)")
"""A hexadecimal token (a colour ``#1e3``, ``#ff0000``): no number inside."""


class _Apart:
    """The stretches of a text where no number is read: a date's day and
    month, a time of day (``date_readings.part_spans``), a hexadecimal token."""

    def __init__(self, source: str) -> None:
        spans = part_spans(source) + [m.span() for m in _HEX.finditer(source)]
        merged = merge_spans(sorted(spans))
        self.starts = [start for start, _ in merged]
        self.ends = [end for _, end in merged]

    def hit(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` overlaps a stretch."""
        if not self.starts:
            return False
        i = bisect_left(self.starts, end) - 1
        return i >= 0 and self.ends[i] > start


def _items(source: str, match: re.Match[str],
           apart: _Apart) -> Iterator[tuple[int, int, Decimal]]:
    """``(start, end, number)`` of each item of a comma list (``100,250,500``:
    100, 250 and 500; a sign belongs to the first item, a percent sign
    after the run to the last)."""
    start = match.start("num")
    items = match.group("num").split(",")
    for i, digits in enumerate(items):
        end = start + len(digits)
        if not apart.hit(start, end):
            number = _value(match.group("sign") if i == 0 else None, digits)
            if number is not None:
                yield from ((start, end, n) for n in (
                    _scaled(source, match.end(), number) if i == len(items) - 1 else (number,)))
        start = end + 1


_JOINED_AFTER = re.compile(r",\d")


def _joined(source: str, match: re.Match[str]) -> bool:
    """Whether ``match`` is a part of a longer comma-joined run of digits
    (a comma and a digit right before or right after it)."""
    start = match.start()
    return (_JOINED_AFTER.match(source, match.end()) is not None
            or (start >= 2 and source[start - 1] == "," and source[start - 2].isdigit()))


def _kept(source: str, pattern: re.Pattern[str], match: re.Match[str], way: Conventions) -> bool:
    """Whether the document's conventions (``way``) let ``match`` (of
    ``pattern``) be read as one number."""
    num = match.group("num")
    if pattern is _POINT:
        if _joined(source, match):
            return False  # a part of a run: an item of a list at most (``_items``)
        if "," in num:
            return way.decimal_point  # grouped by commas
        return way.decimal_point or re.fullmatch(r"\d{1,3}\.\d{3}", num) is None
    if pattern is _COMMA:
        return "," not in num or way.decimal_comma
    return way.decimal_point  # _INDIAN


_JOINED_RUN = re.compile(
    rf"{_START}{_SIGN}{_CUR}(?P<num>\d+(?:,\d+)+)(?![\d_]|\.\d|[eE][-+\u2212]?\d)")
"""A run of digits joined by commas with no space (``100,250,500``,
``3,4,5``), whole: what a list written without spaces looks like."""


def _run_items(source: str, apart: _Apart, way: Conventions) -> Iterator[tuple[int, int, Decimal]]:
    """``(start, end, number)`` of each item of every comma-joined run of digits
    that may be a list (``_JOINED_RUN``; no currency written before it;
    ``number_conventions.listed``)."""
    for match in _JOINED_RUN.finditer(source):
        if not _priced(source, match) and listed(source, match.start(), match.end(), way):
            yield from _items(source, match, apart)


def readings(source: str) -> Iterator[tuple[int, Decimal]]:
    """``(offset, number)`` for every reading of every number ``source``
    writes (see the module docstring), by convention, not in document order
    (sort by offset for that); a number may come more than once."""
    for start, _, number in placed_readings(source):
        yield start, number


def placed_readings(source: str) -> Iterator[tuple[int, int, Decimal]]:
    """``(start, end, number)``: ``readings`` with the end of the written
    text each number is read from (``[start, end)``: the digits with their
    grouping and decimal marks and an exponent, ``17,562``; for a list
    item, the item's digits)."""
    apart = _Apart(source)
    way = conventions(source)
    for pattern, table in ((_POINT, _AS_POINT), (_COMMA, _AS_COMMA), (_INDIAN, _AS_INDIAN)):
        for match in pattern.finditer(source):
            groups = match.groupdict()
            if not _code_ok(source, match.start(), groups["num"]):
                continue
            start, end = match.span("num")
            if not apart.hit(start, end) and _kept(source, pattern, match, way):
                number = _value(groups["sign"], groups["num"].translate(table), groups.get("exp"))
                if number is not None:
                    for n in _scaled(source, match.end(), number):
                        yield start, match.end(), n
    yield from _run_items(source, apart, way)
    for start, end, year in year_readings(source):
        if not apart.hit(start, end):
            yield start, end, Decimal(year)
