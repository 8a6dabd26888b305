"""The kind of quantity a value writes: a decimal amount, with a unit or bare.

A learned locator (``agentflow.grounding.locators``) reads whatever its
label is followed by. Where every worked example's value writes a decimal
number (``£117.60``, ``37.01 EUR``, ``2.5 kg``), a value that writes only whole
numbers (``3 items``: a count under the same label) is another kind of
thing (a value that writes a number with several separators, ``>=3.9.0``
where the examples wrote ``>=3.8``, may be the same kind); where
each of them also writes a unit beside it (a currency sign or code, a unit
word), a bare number (``2,400.00`` under ``Total:`` where the document pays
``Amount due: £2,880.00``) may be another figure than the examples' one. The
rule then does not pin the value (``Locator.pins``: it is scored as if the
field had no rule, so it needs review); the grammar still offers it.

A **decimal number** (``decimal_number``) is a run of digits whose last
separator is ``.`` or ``,`` followed by one or two digits, every earlier
separator another character (a thousands separator: ``2,400.00``,
``1.480,00``, ``1 480,00``): ``4.16.0``, ``14.02.2024``, ``2,400`` and
``8:00`` are none, and so is a number inside a word (``Apache-2.0``,
``GPL-3.0-only``: a version); a value writes **whole numbers** only
(``whole_numbers``) when it writes numbers (not inside a word:
``BSD-3-Clause`` writes none) and none with a separator inside. A value is
a **bare number** (``bare_number``) when it holds a digit and nothing but
digits, number separators and a leading sign. The kinds are learned only
from at least two example values (``quantity_kind``): one is no evidence
of what every value writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["bare_number", "decimal_number", "figure", "quantity_kind", "whole_numbers"]

_SEPARATORS = ".,'\u00a0\u202f "
_NUMBER = re.compile(r"\d+(?:[.,'\u00a0\u202f ]\d+)*")
_BARE = re.compile(r"[+-]?[\d.,'\u00a0\u202f ]*\d[\d.,'\u00a0\u202f ]*")


def _numbers(value: str) -> list[str]:
    """The numbers ``value`` writes, less those inside a word (after a letter,
    or after a letter and a joiner: ``Apache-2.0``, ``GPL-3.0-only``, ``v1.2``,
    ``BSD-3-Clause`` name versions, not quantities)."""
    out = []
    for match in _NUMBER.finditer(value):
        before = value[max(0, match.start() - 2):match.start()]
        if before[-1:].isalpha() or (before[-1:] in "-_." and before[:1].isalnum()
                                     and len(before) == 2):
            continue
        out.append(match.group(0))
    return out


def decimal_number(value: str) -> bool:
    """Whether ``value`` writes a decimal number (see the module docstring)."""
    for number in _numbers(value):
        marks = [i for i, c in enumerate(number) if c in _SEPARATORS]
        if not marks:
            continue
        last = marks[-1]
        if number[last] in ".," and len(number) - last - 1 <= 2 and all(
                number[i] != number[last] for i in marks[:-1]):
            return True
    return False


def whole_numbers(value: str) -> bool:
    """Whether ``value`` writes numbers, each a run of digits alone (``3 items``)."""
    numbers = _numbers(value)
    return bool(numbers) and all(n.isdigit() for n in numbers)


def bare_number(value: str) -> bool:
    """Whether ``value`` is a number alone: no unit, sign or word beside it."""
    return _BARE.fullmatch(value.strip()) is not None


def quantity_kind(values: Sequence[str]) -> tuple[bool, bool]:
    """What every one of ``values`` (a field's example values) writes:
    ``(decimal, unit)``: a decimal number, and (only with one) something
    beside it; ``(False, False)`` with fewer than two values."""
    decimal = len(values) >= 2 and all(decimal_number(v) for v in values)
    return decimal, decimal and not any(bare_number(v) for v in values)


def figure(value: str) -> bool:
    """Whether ``value`` writes a figure: a token (between whitespace) that
    holds more digits than letters (``2019``, ``8:00``, ``v1.0.0``, ``£14.20``,
    ``NW-10452``), what a field of figures shows (``Locator.digit``). Digits
    inside words (``Apache-2.0``, ``GPL-3.0-only``, ``smith2019graphs``) are
    no figure: two licenses that both hold a digit teach no kind (``MIT`` is a
    license too)."""
    return any(sum(c.isdigit() for c in t) > sum(c.isalpha() for c in t) for t in value.split())
