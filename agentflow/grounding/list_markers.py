"""Numbered list markers as a locator's left context.

Examples that write a list one item a line behind a bullet (``- ``) share
that bullet as the text before each item, so a locator learns it as a line
start (``agentflow.grounding.locators``). Numbered items (``1. ``, ``2) ``,
``(a) ``, ``i. ``) do not: each item's number differs. ``marker_kind``
names the kind of marker a set of line starts all are, so that the locator
can read "after a numbered item marker of this kind" as it reads after a
bullet, and ``marker_length`` finds such a marker at a line's start.

Kinds: ``1.`` ``1)`` ``(1)`` (up to three digits), ``a.`` ``a)`` ``(a)``
(one letter, either case), ``i.`` ``i)`` ``(i)`` (a lower- or upper-case
roman numeral), each followed by whitespace. A kind is written as its
first form (``"1. "``, ``"(a) "``) in ``Locator.left``.

A letter or a roman numeral with a dot is also how a name's initial is
written (``J. Smith``, ``A. Jones, head chef``, ``I. Newton``), so such a
marker is an item's (``item_lines``) only in a list: a run of at least two
lines whose markers go on in sequence from the first (``a.`` ``b.`` ``c.``;
``i.`` ``ii.`` ``iii.``; one letter case), other lines between them aside.
Digits are no initials: every line with a digit marker is an item's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["MARKER_KINDS", "item_lines", "marker_kind", "marker_length"]

_ROMAN = r"(?:[ivxlc]{1,7}|[IVXLC]{1,7})"
MARKER_KINDS: dict[str, re.Pattern[str]] = {
    "1. ": re.compile(r"[0-9]{1,3}\.[^\S\n]+"),
    "1) ": re.compile(r"[0-9]{1,3}\)[^\S\n]+"),
    "(1) ": re.compile(r"\([0-9]{1,3}\)[^\S\n]+"),
    "i. ": re.compile(_ROMAN + r"\.[^\S\n]+"),
    "i) ": re.compile(_ROMAN + r"\)[^\S\n]+"),
    "(i) ": re.compile(r"\(" + _ROMAN + r"\)[^\S\n]+"),
    "a. ": re.compile(r"[A-Za-z]\.[^\S\n]+"),
    "a) ": re.compile(r"[A-Za-z]\)[^\S\n]+"),
    "(a) ": re.compile(r"\([A-Za-z]\)[^\S\n]+"),
}
"""Marker kind -> the pattern of one marker with the whitespace after it.
Roman numerals come before letters: ``i.`` ``ii.`` ``iii.`` are one kind
(a list's ``i.`` alone reads as roman only with a ``ii.`` beside it, see
``marker_kind``)."""


def marker_length(body: str, kind: str) -> int | None:
    """Characters of the ``kind`` marker (whitespace after it included) that
    ``body`` (a line's content, indentation removed) begins with; ``None``:
    it begins with none."""
    pattern = MARKER_KINDS.get(kind)
    if pattern is None:
        return None
    match = pattern.match(body)
    return match.end() if match is not None else None


def marker_kind(befores: Sequence[str]) -> str | None:
    """The one marker kind every text of ``befores`` (the text before each
    item on its line, indentation removed) is exactly, when they are not all
    the same text (the same text is a plain line start, learned as such);
    ``None`` otherwise. Several kinds fit (``i.`` is a letter and a roman
    numeral): the first in ``MARKER_KINDS`` order that fits every one."""
    if len(befores) < 2 or len(set(befores)) < 2:
        return None
    for kind, pattern in MARKER_KINDS.items():
        if all(pattern.fullmatch(b) for b in befores):
            return kind
    return None


_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


def _roman(numeral: str) -> int | None:
    """The value of a lower-case roman numeral written the canonical way
    (``iv``, never ``iiii``); ``None`` otherwise."""
    total, last = 0, 0
    for c in reversed(numeral):
        value = _ROMAN_VALUES[c]
        total, last = (total - value, last) if value < last else (total + value, value)
    ones = ("", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix")
    tens = ("", "x", "xx", "xxx", "xl", "l", "lx", "lxx", "lxxx", "xc")
    canonical = "c" * (total // 100) + tens[total // 10 % 10] + ones[total % 10]
    return total if 0 < total < 400 and canonical == numeral else None


def _ordinal(marker: str, kind: str) -> tuple[int, bool] | None:
    """The place in its list of a letter or roman ``marker`` (``b.`` is 2,
    ``iv)`` 4) and whether it is upper case; ``None``: not one."""
    name = marker.strip().strip("().")
    if kind.strip("(). ") == "i":
        value = _roman(name.lower())
    else:
        value = ord(name.lower()) - ord("a") + 1 if len(name) == 1 and name.isascii() else None
    return (value, name.isupper()) if value is not None else None


def item_lines(lines: Sequence[str], kind: str) -> frozenset[int]:
    """The indexes of ``lines`` that begin (indentation aside) with a marker
    of ``kind`` that is an item's (see the module docstring): any digit
    marker; a letter or roman one only in a run of two or more that goes on
    in sequence from the first (``a.`` ``b.``; not ``J. Smith`` nor ``A.
    Jones`` alone)."""
    pattern = MARKER_KINDS.get(kind)
    if pattern is None:
        return frozenset()
    marked = [(i, m.group()) for i, line in enumerate(lines)
              if (m := pattern.match(line.lstrip())) is not None]
    if kind.strip("(). ") == "1":
        return frozenset(i for i, _ in marked)
    out: set[int] = set()
    run: list[int] = []
    last: tuple[int, bool] | None = None
    for i, marker in marked:
        place = _ordinal(marker, kind)
        if place is not None and last is not None and place == (last[0] + 1, last[1]):
            run.append(i)
        else:
            if len(run) >= 2:
                out.update(run)
            run = [i] if place is not None and place[0] == 1 else []
        last = place if run else None
    if len(run) >= 2:
        out.update(run)
    return frozenset(out)
