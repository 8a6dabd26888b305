"""Longest values (``Grounded(longest=True)``): a grounded value that is never
a proper part of a longer span its field's rules also allow.

A field's ``pattern`` says what a whole value looks like; a value that matches
it can still be a cut of a longer one that matches it too: ``Klose
<doko@debian.org>`` out of ``Matthias Klose <doko@debian.org>`` (a name whose
first names a small model dropped), ``200.00`` out of ``1 200.00``. Under
``longest`` such a value is refused in verification ("is only part of ...")
and never offered by the grammar, which lists only the maximal spans.

The spans considered are those the other rules allow: between the source's
chunk boundaries (whole tokens: token boundaries), within one line that the
``line`` expression matches when there is one (else within
``SPAN_CHECK_VALUE`` characters), neither starting nor ending with whitespace,
and that the pattern searches (JSON Schema semantics), as written or folded
(``agentflow.extraction.folding``: the form verification matches values in).
Pure functions of the source.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from agentflow.extraction.folding import fold_text
from agentflow.extraction.tokens import piece_spans

__all__ = ["LONGEST_REACH", "longer_span", "maximal"]

LONGEST_REACH = 200
"""Longest span (characters) looked at around a value without a line rule:
the same bound as a listed value of the grammar
(``agentflow.output.grammar_values.SPAN_CHECK_VALUE``)."""

_CHUNK = re.compile(r"\w+|\s|[^\w\s]")  # the grammar's chunks (agentflow.output.grammar)


def _cuts(text: str, lo: int, hi: int, whole_tokens: bool) -> list[int]:
    """Chunk (``whole_tokens``: piece) boundaries of ``text[lo:hi]``, as
    offsets into ``text``."""
    part = text[lo:hi]
    offsets = {lo, hi}
    if whole_tokens:
        for start, end in piece_spans(part):
            offsets.update((lo + start, lo + end))
    else:
        for m in _CHUNK.finditer(part):
            offsets.update((lo + m.start(), lo + m.end()))
    return sorted(offsets)


def _region(source: str, start: int, end: int, line: re.Pattern[str] | None
            ) -> tuple[int, int] | None:
    """Where longer spans may lie: the value's line when a line rule applies
    (``None`` if the value is not within one line it matches), else
    ``LONGEST_REACH`` characters either side."""
    if line is None:
        return max(0, end - LONGEST_REACH), min(len(source), start + LONGEST_REACH)
    lo = source.rfind("\n", 0, start) + 1
    hi = source.find("\n", start)
    hi = len(source) if hi < 0 else hi
    if end > hi or line.search(source[lo:hi]) is None:
        return None
    return lo, hi


def longer_span(source: str, span: tuple[int, int], pattern: str, *, whole_tokens: bool,
                line: str | None = None) -> tuple[int, int] | None:
    """The longest span of ``source`` that strictly contains ``span`` and that
    the rules allow (see the module docstring), or ``None`` when ``span`` is
    maximal. A pattern Python cannot read allows no longer span."""
    try:
        regex = re.compile(pattern)
        line_regex = re.compile(line) if line is not None else None
    except re.error:
        return None
    start, end = span
    region = _region(source, start, end, line_regex)
    if region is None:
        return None
    cuts = _cuts(source, *region, whole_tokens)
    best: tuple[int, int] | None = None
    lefts = cuts[:bisect.bisect_right(cuts, start)]
    rights = cuts[bisect.bisect_left(cuts, end):]
    for a in lefts:
        if source[a].isspace():
            continue
        for b in rights:
            if b - a > LONGEST_REACH:
                break
            if (a, b) == (start, end) or source[b - 1].isspace():
                continue
            if (best is None or b - a > best[1] - best[0]) and _allows(regex, source[a:b]):
                best = (a, b)
    return best


def _allows(regex: re.Pattern[str], text: str) -> bool:
    """Whether the pattern searches ``text`` as written or folded (``folding``:
    a name whose accents the source writes decomposed, ``e`` + U+0301, is the
    value a model copies composed, and the one the pattern checks)."""
    if regex.search(text) is not None:
        return True
    if text.isascii():
        return False  # folding changes no ASCII text
    folded = fold_text(text)
    return folded != text and regex.search(folded) is not None


def maximal(places: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The places (``(text, start, end)``) that no other place strictly
    contains, in their order."""
    spans = sorted({(s, e) for _, s, e in places}, key=lambda se: (se[0], -se[1]))
    covered: set[tuple[int, int]] = set()
    reach = -1  # the furthest end of a span that starts at or before this one
    widest: list[tuple[int, int]] = []  # spans seen so far, for the containment test
    for s, e in spans:
        if e <= reach and any(a <= s and e <= b and (a, b) != (s, e) for a, b in widest):
            covered.add((s, e))
        else:
            widest.append((s, e))
        reach = max(reach, e)
    return [p for p in places if (p[1], p[2]) not in covered]
