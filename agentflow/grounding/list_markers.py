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
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["MARKER_KINDS", "marker_kind", "marker_length"]

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
