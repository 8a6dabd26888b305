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
* **Ambiguity is kept, never resolved**: ``1,234`` reads 1234 or 1.234,
  ``1.234`` reads 1.234 or 1234; a comma that does not group three digits
  also separates a list (``12,50`` reads 12.50, and 12 and 50; ``3,4,5``
  reads 3, 4 and 5).
* **Exponent**: ``1.5e3`` is 1500, ``2E-4`` is 0.0002 (never its mantissa
  alone).
* **Leading point**: ``.5`` is 0.5.
* **Percentages**: ``12%`` (``12 %``, ``12 percent``, ``12 per cent``)
  reads 12, the number written, and 0.12, the fraction it stands for (how
  spreadsheets and Power Query's ``Percentage.From("12.3%")`` = 0.123 read
  one); ``5‰`` reads 5 and 0.005.
* **Currency**: a symbol (Unicode category Sc: ``$ € £ ¥ ₹ ...``) or an
  ISO 4217 code (``USD``, ``EUR``) glued before the digits is read past
  (``USD1,234``, ``€12``, ``-$5`` is -5); a sign is ``-``, ``+`` or ``−``
  (U+2212).

What stays apart:

* a plain space never joins digit groups (``80 443 8080`` is three
  numbers, never 80443);
* a number is never read out of a word (``x86``, ``Q1``, ``SHA256``: only
  an ISO 4217 code may precede the digits) nor out of a dotted version or
  address (``1.5.2``, ``192.168.1.1``, ``05.03.2024``: no number);
* units after the digits are fine (``10kg``, ``12€``, ``3x``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

__all__ = ["CURRENCY", "ISO_4217", "MAX_EXPONENT", "readings"]

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

_SIGN = "(?P<sign>[-+\u2212])?"
_CUR = f"[{CURRENCY}]?"
_START = rf"(?=[-+\u2212{CURRENCY}.\d])(?:(?<![\w.])|(?<=(?<!\w)[A-Z]{{3}}))"
"""A number starts (with a sign, a currency symbol, a point or a digit:
the lookahead lets the engine skip other characters fast) after no word
character and no point; or right after
three capital letters that start a word (an ISO 4217 code, checked by
``_code_ok``)."""
_SPACES = "\u00a0\u2009\u202f"
"""The spaces that group digits (no-break, thin, narrow no-break): never a
plain space."""

_POINT = re.compile(
    rf"{_START}{_SIGN}{_CUR}(?P<num>\d{{1,3}}(?:[,_{_SPACES}]\d{{3}})+(?:\.\d+)?"
    r"|\d+(?:\.\d+)?|\.\d+)(?:[eE](?P<exp>[-+\u2212]?\d+)(?!\w))?(?![\d_]|\.\d)")
"""Point decimal, groups of three by ``,``/``_``/a grouping space; an
exponent; a leading point."""
_COMMA = re.compile(
    rf"(?=[-+\u2212{CURRENCY}\d])(?:(?<![\w.,])|(?<=(?<!\w)[A-Z]{{3}})){_SIGN}{_CUR}"
    rf"(?P<num>\d{{1,3}}(?:[.{_SPACES}]\d{{3}})+(?:,\d+)?|\d+,\d+)(?![\d_]|[.,]\d)")
"""Comma decimal, groups of three by ``.``/a grouping space."""
_INDIAN = re.compile(
    rf"(?=[-+\u2212{CURRENCY}\d])(?:(?<![\w.,])|(?<=(?<!\w)[A-Z]{{3}})){_SIGN}{_CUR}"
    r"(?P<num>\d{1,2}(?:,\d\d)+,\d{3}(?:\.\d+)?)(?![\d_]|[.,]\d)")
"""Indian grouping: ``12,34,567.89``."""

_PERCENT = re.compile(r"[ \u00a0\u202f]?(?:(?P<pct>[%\uff05\u066a\ufe6a])|(?P<mille>\u2030)"
                      r"|per ?cent(?!\w))", re.IGNORECASE)


def _code_ok(source: str, start: int) -> bool:
    """Whether the letters glued before ``start`` (if any) are an ISO 4217 code."""
    before = source[start - 1:start]
    return not (before.isalpha() and source[start - 3:start] not in ISO_4217)


MAX_EXPONENT = 100
"""The largest exponent read (``1e100``); a larger one is no number (a
grammar would have to spell all its digits)."""


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
    if not number.is_finite():
        return None
    return -number if sign in ("-", "\u2212") else number


def _scaled(source: str, end: int, number: Decimal) -> Iterator[Decimal]:
    """``number`` and, when a percent (per mille) sign follows at ``end``,
    the fraction it stands for."""
    yield number
    after = _PERCENT.match(source, end)
    if after is not None:
        yield number.scaleb(-3 if after.group("mille") else -2)


_AS_POINT = str.maketrans("", "", f",_{_SPACES}")
_AS_COMMA = str.maketrans({**dict.fromkeys(f".{_SPACES}"), ",": "."})
_AS_INDIAN = str.maketrans("", "", ",")
"""Each convention's digits as ``Decimal`` reads them (groups joined, the
decimal mark a point)."""


def readings(source: str) -> Iterator[tuple[int, Decimal]]:
    """``(offset, number)`` for every reading of every number ``source``
    writes (see the module docstring), by convention, not in document order
    (sort by offset for that); a number may come more than once."""
    for pattern, table in ((_POINT, _AS_POINT), (_COMMA, _AS_COMMA), (_INDIAN, _AS_INDIAN)):
        for match in pattern.finditer(source):
            if not _code_ok(source, match.start()):
                continue
            groups = match.groupdict()
            number = _value(groups["sign"], groups["num"].translate(table), groups.get("exp"))
            if number is not None:
                for n in _scaled(source, match.end(), number):
                    yield match.start("num"), n
