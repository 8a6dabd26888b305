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
(``agentflow.grounding.folding``: the form verification matches values in).
Pure functions of the source.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Sequence

from agentflow.grounding.folding import fold_text
from agentflow.grounding.lines import line_around
from agentflow.grounding.tokens import piece_spans

__all__ = ["LONGEST_REACH", "longer_span", "maximal", "maximal_test"]

LONGEST_REACH = 200
"""Longest span (characters) looked at around a value without a line rule:
the same bound as a listed value of the grammar
(``agentflow.output.grammar_values.SPAN_CHECK_VALUE``)."""

_CHUNK = re.compile(r"\w+|\s|[^\w\s]")  # the grammar's chunks (agentflow.output.grammar)


def _ends(text: str, lo: int, hi: int, whole_tokens: bool) -> list[int]:
    """The ends of the chunks (``whole_tokens``: pieces) of ``text[lo:hi]``,
    as offsets into ``text``, in order (they cover the part exactly, so
    these and ``lo`` are every boundary)."""
    part = text[lo:hi]
    if whole_tokens:
        return [lo + end for _, end in piece_spans(part)]
    return [lo + m.end() for m in _CHUNK.finditer(part)]


_BLOCK = 2048


class _Cuts:
    """The chunk (``whole_tokens``: piece) boundaries of a source, split
    lazily in blocks that begin at a whitespace character (one piece of its
    own, so the split of a block is the split of the whole text there): the
    places a verification tests share one pass over the text, however many
    there are and however their regions overlap."""

    def __init__(self, source: str, whole_tokens: bool) -> None:
        self.source = source
        self.whole_tokens = whole_tokens
        self.blocks: dict[int, list[int]] = {}

    def _edge(self, k: int) -> int:
        """Where block ``k`` begins: the first whitespace at or after
        ``k * _BLOCK`` (block 0: the start), else the end of the text."""
        if k <= 0:
            return 0
        n = len(self.source)
        i = k * _BLOCK
        while i < n and not self.source[i].isspace():
            i += 1
        return min(i, n)

    def _block(self, k: int) -> list[int]:
        if k not in self.blocks:
            lo, hi = self._edge(k), self._edge(k + 1)
            # a block's start is the end of the block before it (or 0)
            self.blocks[k] = ([0] if k == 0 else []) + _ends(self.source, lo, hi,
                                                             self.whole_tokens)
        return self.blocks[k]

    def within(self, lo: int, hi: int) -> list[int]:
        """The boundaries in ``[lo, hi]``, with ``lo`` and ``hi``, in order."""
        k = lo // _BLOCK
        while k > 0 and self._edge(k) > lo:
            k -= 1
        inner: list[int] = []
        while k * _BLOCK <= hi and self._edge(k) <= hi:
            block = self._block(k)
            inner += block[bisect.bisect_right(block, lo):bisect.bisect_left(block, hi)]
            k += 1
        return [lo, *inner, hi]


def _region(source: str, start: int, end: int, line: re.Pattern[str] | None
            ) -> tuple[int, int] | None:
    """Where longer spans may lie: the value's line when a line rule applies
    (``None`` if the value is not within one line it matches), else
    ``LONGEST_REACH`` characters either side."""
    if line is None:
        return max(0, end - LONGEST_REACH), min(len(source), start + LONGEST_REACH)
    lo, hi = line_around(source, start)
    if end > hi or line.search(source[lo:hi]) is None:
        return None
    return lo, hi


def _compile(pattern: str, line: str | None
             ) -> tuple[re.Pattern[str], re.Pattern[str] | None] | None:
    try:
        return re.compile(pattern), re.compile(line) if line is not None else None
    except re.error:
        return None


def _containing(source: str, span: tuple[int, int], regexes: tuple[re.Pattern[str],
                re.Pattern[str] | None], boundaries: _Cuts) -> Iterator[tuple[int, int]]:
    """The spans that strictly contain ``span`` and that the rules allow
    (see the module docstring), nearest first: left ends from ``span``'s
    start outwards, and for each the right ends from ``span``'s end outwards."""
    regex, line_regex = regexes
    start, end = span
    region = _region(source, start, end, line_regex)
    if region is None:
        return
    cuts = boundaries.within(*region)
    lefts = [a for a in reversed(cuts[:bisect.bisect_right(cuts, start)])
             if not source[a].isspace()]  # nearest first
    rights = [b for b in cuts[bisect.bisect_left(cuts, end):] if not source[b - 1].isspace()
              and b - start <= LONGEST_REACH]
    if not (lefts and rights):
        return
    # the least extensions first (one end kept), where a longer value most
    # often is: a verification that stops at the first one found is quick
    pairs = itertools.chain(
        ((a, rights[0]) for a in lefts),
        ((lefts[0], b) for b in rights[1:]),
        ((a, b) for a in lefts[1:]
         for b in rights[1:bisect.bisect_right(rights, a + LONGEST_REACH)]))
    for a, b in pairs:
        if b - a <= LONGEST_REACH and (a, b) != (start, end) and _allows(regex, source[a:b]):
            yield a, b


def longer_span(source: str, span: tuple[int, int], pattern: str, *, whole_tokens: bool,
                line: str | None = None) -> tuple[int, int] | None:
    """The longest span of ``source`` that strictly contains ``span`` and that
    the rules allow (see the module docstring), or ``None`` when ``span`` is
    maximal. A pattern Python cannot read allows no longer span."""
    regexes = _compile(pattern, line)
    if regexes is None:
        return None
    best: tuple[int, int] | None = None
    for a, b in _containing(source, span, regexes, _Cuts(source, whole_tokens)):
        if best is None or b - a > best[1] - best[0] or (
                b - a == best[1] - best[0] and a < best[0]):
            best = (a, b)
    return best


def maximal_test(source: str, pattern: str, *, whole_tokens: bool, line: str | None = None
                 ) -> Callable[[tuple[int, int]], bool]:
    """A test of whether a span of ``source`` is maximal (no longer span the
    rules allow contains it: ``longer_span`` is ``None``), memoized per span
    and stopping at the first longer span found, nearest first. Verification
    asks it only of the occurrences it needs (``placing.check_grounding``),
    so a value that occurs thousands of times costs a test per occurrence
    looked at, not per occurrence. A pattern Python cannot read: every span
    is maximal."""
    regexes = _compile(pattern, line)
    memo: dict[tuple[int, int], bool] = {}
    boundaries = _Cuts(source, whole_tokens)

    def test(span: tuple[int, int]) -> bool:
        if regexes is None:
            return True
        if span not in memo:
            memo[span] = next(_containing(source, span, regexes, boundaries), None) is None
        return memo[span]

    return test


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
    contains, in their order. One pass over the distinct spans sorted by
    start, longest first: a span is contained exactly when a span before it
    in that order reaches its end."""
    spans = sorted({(s, e) for _, s, e in places}, key=lambda se: (se[0], -se[1]))
    covered: set[tuple[int, int]] = set()
    reach = -1  # the furthest end of the spans before this one (each starts at or before it)
    for s, e in spans:
        if e <= reach:
            covered.add((s, e))
        reach = max(reach, e)
    return [p for p in places if (p[1], p[2]) not in covered]
