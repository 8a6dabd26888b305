"""How a document writes numbers (``conventions``): whether a comma may be
its decimal mark, whether a point may, and where digits joined by a bare
comma may be a list's items (``listed``); with the marks every convention
shares (currency symbols and codes, grouping spaces).
``agentflow.grounding.number_readings`` reads numbers by them.

A comma followed by exactly three digits (``42,000``, ``17,562``) groups
thousands in the overwhelming majority of documents; reading it otherwise
lets a *prefix* of the written number stand for it (42 for "42,000"), and
reading it only otherwise refuses the number written. So a reading is
taken away only on strong evidence, and weak evidence adds one:

* **A comma-decimal document** (a comma is then only a decimal mark and a
  point followed by three digits groups thousands: ``42,000`` is 42,
  ``1.500`` is 1500), when it writes, outside a run of more items:

  - a number grouped by points or grouping spaces with a decimal comma
    (``1.234,56``, ``1 234,56`` with a no-break or thin space);
  - a decimal comma (a comma followed by other than three digits:
    ``3,5``, ``12,50``, ``0,1234``) beside a currency symbol or an ISO 4217
    code (``12,50 €``, ``€3,5``, ``EUR 12,50``, ``12,50 EUR``); or
  - a decimal comma anywhere in a document that writes no number grouped
    by commas (no ``17,562``, ``1,234,567`` nor ``12,34,567``).

  A point-decimal number written anywhere (``1,234.50``, ``3.5``) keeps
  the point convention too: such a document keeps every reading.
* **A decimal comma that may be something else** (``table 3,4``, ``pages
  5,6``, ``(3,4)``: a pair as likely as a decimal) in a document that
  writes numbers grouped by commas adds the comma reading and keeps the
  grouping one: ``17,562`` is 17562 and 17.562 (never 17), ``42,000``
  42000 and 42.
* **Otherwise** a comma groups thousands: ``42,000`` is 42000 only.

Digits joined by commas with no space (``100,250,500``) are a **list's
items** besides any number they write (``listed``) only where the document
joins items that way:

* anywhere, when it writes a run of three or more digit groups no
  convention reads as one number (``3,4,5``, ``100,20,3``): its own
  numbers joined by a bare comma;
* in a run joined by a bare comma to a cell with a letter, right before
  or right after it (``GV2841,100,250``, ``A17,3,4``, ``100,250,EUR``);
* on a line of bare comma-joined cells (``100,250,500``) below a header of
  as many names (``qty,price,total``): a CSV table.

Letters joined by commas elsewhere show nothing about numbers (an e-mail
address ``smith,john@x.org``, ``Smith,J``, sizes ``M,L,XL`` on the line
or not), nor does a list written with a space after the comma (``2309A,
2310A``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

__all__ = ["CURRENCY", "ISO_4217", "SPACES", "Conventions", "conventions", "listed"]

ISO_4217 = frozenset({
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD",
    "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP",
    "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP",
    "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HRK", "HTG", "HUF", "IDR",
    "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW",
    "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA",
    "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD",
    "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG",
    "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE",
    "SLL", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP",
    "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UYW", "UZS", "VED",
    "VES", "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XCD", "XCG", "XDR", "XOF", "XPD", "XPF",
    "XPT", "XSU", "XUA", "YER", "ZAR", "ZMW", "ZWG", "ZWL",
})
"""The alphabetic codes of ISO 4217 (currencies, funds and precious
metals; its test and "no currency" codes ``XTS``/``XXX`` left out): the
only letters that may be glued before a number (``USD1,234``)."""

CURRENCY = ("$\u00a2-\u00a5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9\u0e3f"
            "\u17db\u20a0-\u20c0\ua838\ufdfc\ufe69\uff04\uffe0\uffe1\uffe5\uffe6")
"""The currency symbols of the Basic Multilingual Plane (Unicode category
Sc; tests check it against ``unicodedata``), as the body of a character
class."""

SPACES = "\u00a0\u2009\u202f"
"""The spaces that group digits (no-break, thin, narrow no-break): never a
plain space."""

_SIGNED = rf"(?<![\w.,])[-+\u2212]?[{CURRENCY}]?"
_ALONE = r"(?![\d_]|[.,]\d)"
_GROUPED_DECIMAL_COMMA = re.compile(
    rf"{_SIGNED}\d{{1,3}}(?:[.{SPACES}]\d{{3}})+,\d+{_ALONE}")
"""``1.234,56``, ``1 234,56``: only the comma-decimal convention writes it."""
_AFTER_CODE = r"(?<=(?<!\w)[A-Z]{3})"
"""Right after three capitals that start a word (an ISO 4217 code glued
before an amount, ``USD1,234``, when they are one)."""
_DECIMAL_COMMA = re.compile(
    rf"(?:{_SIGNED}|{_AFTER_CODE})(?P<num>\d+,(?:\d{{1,2}}|\d{{4,}})){_ALONE}")
"""A comma followed by a fraction of other than three digits (``3,5``,
``12,50``, ``EUR12,50``), alone (``3,4,5`` is a list)."""
_COMMA_GROUPED = re.compile(
    rf"(?:{_SIGNED}|{_AFTER_CODE})(?:\d{{1,3}}(?:,\d{{3}})+|\d{{1,2}}(?:,\d\d)+,\d{{3}}){_ALONE}")
"""A number grouped by commas (``17,562``, ``1,234,567``, ``12,34,567``,
``USD1,234``), alone."""
_POINT_SIGN = re.compile(
    rf"{_SIGNED}(?:\d{{1,3}}(?:,\d{{3}})+\.\d+|\d+\.(?:\d{{1,2}}|\d{{4,}})){_ALONE}")
"""What shows a document's decimal point: ``1,234.50``, or a point followed
by a fraction of other than three digits (``3.5``, ``12.50``), alone
(``1.5.2`` is a version, ``05.03.2024`` a date)."""
_MONEY_BEFORE = re.compile(rf"(?:[{CURRENCY}]|(?<!\w)(?P<code>[A-Z]{{3}}))[ {SPACES}]?\Z")
_MONEY_AFTER = re.compile(rf"[ {SPACES}]?(?:[{CURRENCY}]|(?P<code>[A-Z]{{3}})(?!\w))")

_RUN = re.compile(r"(?<![\w.,])\d+(?:,\d+){2,}(?![\d_]|[.,]\d)")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d\d)+,\d{3}")
_NAME = r'"?[^\W\d_](?:[\w .()%/#&-]*[\w)%#])?"?'
_HEADER = re.compile(rf"[ \t]*{_NAME}(?:,{_NAME})+[ \t\r]*")
"""A line of names joined by bare commas (``qty,price,total``): a CSV
table's header."""
_ROW = re.compile(r"[ \t]*[^\s,]*(?:,[^\s,]*)+[ \t\r]*")
"""A line of cells joined by bare commas, with no space in any cell."""
_LINE = re.compile(r"[^\n]+")


class Conventions(NamedTuple):
    """How a document writes numbers (``conventions``).

    Attributes:
        decimal_comma: a comma may be a decimal mark (``3,5``, ``1.234,56``
            written somewhere).
        decimal_point: a point may be a decimal mark and a comma groups
            thousands (``False`` only in a comma-decimal document that
            writes no decimal point).
        comma_lists: digits joined by a comma with no space may be a
            list's items anywhere (the document writes ``3,4,5``).
        rows: ``[start, end)`` of each line that is a CSV row (bare cells
            below a header of as many names), in document order.
    """

    decimal_comma: bool
    decimal_point: bool
    comma_lists: bool
    rows: tuple[tuple[int, int], ...]


def _money(source: str, match: re.Match[str]) -> bool:
    """Whether a currency symbol or an ISO 4217 code is written right before
    or after ``match``'s digits (``€12,50``, ``EUR 12,50``, ``12,50 €``)."""
    start, end = match.span("num")
    for found in (_MONEY_BEFORE.search(source, max(0, start - 4), start),
                  _MONEY_AFTER.match(source, end)):
        if found is not None and (found.group("code") is None
                                  or found.group("code") in ISO_4217):
            return True  # a symbol, or a code that is a currency's
    return False


def _decimal_comma(source: str) -> tuple[bool, bool]:
    """``(written, strong)``: whether ``source`` writes a decimal comma, and
    whether it writes one only the comma-decimal convention explains
    (``1.234,56``, a decimal comma beside a currency; see the module
    docstring)."""
    written = strong = _GROUPED_DECIMAL_COMMA.search(source) is not None
    for match in _DECIMAL_COMMA.finditer(source):
        start = match.start()
        if source[start - 1:start].isalpha() and source[start - 3:start] not in ISO_4217:
            continue  # a word's digits (``ABC3,5``)
        written = True
        if _money(source, match):
            return True, True
    return written, strong or (written and _COMMA_GROUPED.search(source) is None)


def _rows(source: str) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` of each line of ``source`` written as a CSV row: bare
    comma-joined cells (``100,250,500``) below a header line of as many
    names (``qty,price,total``)."""
    widths: set[int] = set()
    rows: list[tuple[int, int]] = []
    for line in _LINE.finditer(source):
        text = line.group()
        if "," not in text:
            continue
        if _HEADER.fullmatch(text) is not None:
            widths.add(text.count(",") + 1)
        elif widths and text.count(",") + 1 in widths and _ROW.fullmatch(text) is not None:
            rows.append(line.span())
    return tuple(rows)


def conventions(source: str) -> Conventions:
    """The number conventions ``source`` shows (see the module docstring)."""
    if "," not in source:
        return Conventions(False, True, False, ())
    comma, strong = _decimal_comma(source)
    point = _POINT_SIGN.search(source) is not None or not strong
    lists = any(_GROUPED.fullmatch(m.group()) is None for m in _RUN.finditer(source))
    return Conventions(comma, point, lists, _rows(source))


def _cell_with_a_letter(source: str, start: int, step: int) -> bool:
    """Whether the cell read from ``start`` towards ``step`` (-1: the cell
    ending there, 1: the one starting there; up to a comma or a space)
    holds a letter."""
    i = start
    while 0 <= i < len(source) and source[i] != "," and not source[i].isspace():
        if source[i].isalpha():
            return True
        i += step
    return False


def listed(source: str, start: int, end: int, way: Conventions) -> bool:
    """Whether the digits joined by commas at ``[start, end)`` may be a
    list's items in a document written the ``way`` it is (see the module
    docstring)."""
    if way.comma_lists:
        return True
    if ((source[start - 1:start] == "," and _cell_with_a_letter(source, start - 2, -1))
            or (source[end:end + 1] == "," and _cell_with_a_letter(source, end + 1, 1))):
        return True  # joined to a cell with a letter: ``GV2841,100,250``
    i = bisect_right(way.rows, (start, len(source))) - 1
    return i >= 0 and way.rows[i][1] >= end
