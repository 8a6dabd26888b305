"""Locating grounded values in the source: the one definition of "verbatim"
(``agentflow.grounding`` documents it, with the occurrence rule), whole
tokens, whole lines and whole items. Placing an output's values by the
occurrence rule (``check_grounding``) is ``agentflow.grounding.placing``.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Callable

from agentflow.grounding.check import Span
from agentflow.grounding.escapes import unescaped
from agentflow.grounding.folding import TYPOGRAPHIC, fold_text
from agentflow.grounding.items import item_spans, own_item_spans
from agentflow.grounding.lines import line_around, line_spans
from agentflow.grounding.occurrence_index import starts
from agentflow.grounding.tokens import cuts_token

__all__ = ["TYPOGRAPHIC", "Span", "locate", "narrowed", "occurrences", "on_line"]


def _pattern(value: str, case_sensitive: bool) -> re.Pattern[str] | None:
    """The whitespace-normalised pattern of ``value`` (``None`` for blank text)."""
    words = value.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words),
                      0 if case_sensitive else re.IGNORECASE)


def _occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """Every (possibly overlapping) occurrence of ``value`` in ``source``: the
    exact ones if there are any, else the whitespace-normalised ones, else
    those of the Unicode-compatibility forms of both (``_folded_occurrences``),
    else those in a markup or JSON source's text with its escapes read
    (``_unescaped_occurrences``)."""
    spans = _plain_occurrences(value, source, case_sensitive)
    if not spans and not (value.isascii() and source.isascii()):
        spans = _folded_occurrences(value, source, case_sensitive)
    return spans or _unescaped_occurrences(value, source, case_sensitive)


def _unescaped_occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """Occurrences of ``value`` where a markup or JSON source writes it with
    its format's escapes (``agentflow.grounding.escapes.unescaped``: ``Salt
    &amp; Pepper`` for ``Salt & Pepper``, ``Caf\\u00e9`` for ``Café``), in
    ``source``'s own offsets (an escape's whole span)."""
    read = unescaped(source)
    if read is None:
        return []
    text, starts, ends = read
    return [(starts[a], ends[b - 1])
            for a, b in _plain_occurrences(value, text, case_sensitive) if b > a]


@functools.lru_cache(maxsize=4)
def _fold(source: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """``source`` folded (``_fold_text``: NFKC, typographic punctuation as
    ASCII), with the source span each folded character comes from: normalised
    per segment (a character and the combining marks after it), so every
    folded character maps back to whole source characters."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(source)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(source[j]):
            j += 1
        folded = fold_text(source[i:j])
        out.append(folded)
        starts.extend([i] * len(folded))
        ends.extend([j] * len(folded))
        i = j
    return "".join(out), tuple(starts), tuple(ends)


def _folded_occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """Occurrences of ``value`` where the source holds the same text in another
    Unicode form: composed or decomposed accents (``é`` as one character or as
    ``e`` + U+0301, as PDF text layers and macOS write it), ligatures (``ﬁ``),
    full-width or other compatibility characters (NFKC of both sides), or
    typographic punctuation where the other side has plain ASCII (``’`` and
    ``'``, ``“”`` and ``"``, ``–``/``—`` and ``-``: ``TYPOGRAPHIC``, either
    direction). Letter case is never folded here. Spans are in ``source``'s
    own offsets."""
    folded, starts, ends = _fold(source)
    target = fold_text(value)
    return [(starts[a], ends[b - 1])
            for a, b in _plain_occurrences(target, folded, case_sensitive) if b > a]


@functools.lru_cache(maxsize=4)
def _lower(source: str) -> str:
    """``source`` in lower case (one document's values are looked up in turn)."""
    return source.lower()


def _plain_occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """The exact occurrences if there are any, else the whitespace-normalised ones."""
    spans: list[Span] = []
    if case_sensitive:
        size = len(value)
        spans = [(i, i + size) for i in starts(value, source)]
        if spans:
            return spans
    if not case_sensitive and value.isascii() and source.isascii() and value.split() == [value]:
        # one ASCII word (no space) in ASCII text: what the pattern would match, not compiling
        # one per value (re.IGNORECASE of an escaped literal, for ASCII, is lower())
        return _plain_occurrences(value.lower(), _lower(source), True)
    if case_sensitive or (value.isascii() and source.isascii()):
        return _spaced_occurrences(value, source, case_sensitive)
    pattern = _pattern(value, case_sensitive)
    if pattern is None:
        return spans
    pos = 0
    while (m := pattern.search(source, pos)) is not None:
        spans.append((m.start(), m.end()))
        pos = m.start() + 1
    return spans


@functools.lru_cache(maxsize=4)
def _spaced(source: str, lower: bool) -> tuple[str, list[int], list[int]]:
    """``source`` with each run of whitespace as one space (in lower case
    when ``lower``); with where each run of two or more characters stands in
    it and how many characters such runs before and at it dropped (a
    character at ``i`` outside a run came from ``i + dropped[bisect(runs,
    i)]`` of ``source``)."""
    parts: list[str] = []
    runs: list[int] = []
    dropped = [0]
    pos = size = 0
    for match in re.finditer(r"\s+", source):
        if match.group() == " ":
            continue
        parts.append(source[pos:match.start()])
        size += match.start() - pos
        parts.append(" ")
        if match.end() - match.start() > 1:
            runs.append(size)
            dropped.append(dropped[-1] + match.end() - match.start() - 1)
        size += 1
        pos = match.end()
    parts.append(source[pos:])
    text = "".join(parts)
    return (text.lower() if lower else text), runs, dropped


def _spaced_occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """What ``_pattern(value)`` matches in ``source`` (each run of whitespace
    between ``value``'s words matching any run), found in the source with
    its whitespace runs folded: in time linear in the source, where the
    pattern's search is the source's length times the value's (a long value
    in a long, repetitive document took minutes). ``case_sensitive=False``
    only for ASCII text (its lower case keeps every offset)."""
    words = value.split()
    if not words:
        return []
    target = " ".join(words)
    text, runs, dropped = _spaced(source, not case_sensitive)
    if not case_sensitive:
        target = target.lower()
    spans: list[Span] = []
    for i in starts(target, text):
        last = i + len(target) - 1  # (both ends are no whitespace: no run holds them)
        spans.append((i + dropped[bisect.bisect(runs, i)],
                      last + 1 + dropped[bisect.bisect(runs, last)]))
    return spans


@functools.lru_cache(maxsize=4)
def _line_bounds(source: str) -> tuple[frozenset[int], frozenset[int]]:
    """Where the line contents of ``source`` start, and where they end (one
    document's values are placed in turn)."""
    lines = line_spans(source)
    return frozenset(s for s, _ in lines), frozenset(e for _, e in lines)


@functools.lru_cache(maxsize=4)
def _item_set(source: str) -> frozenset[Span]:
    """The spans of ``source``'s list items, each with and without its own
    nested items (``item_spans``, ``own_item_spans``)."""
    return frozenset(item_spans(source)) | frozenset(own_item_spans(source))


def _whole_lines(spans: list[Span], bounds: tuple[frozenset[int], frozenset[int]]) -> list[Span]:
    """The spans that begin and end at line contents (``bounds``: ``_line_bounds``)."""
    starts, ends = bounds
    return [s for s in spans if s[0] in starts and s[1] in ends]


def on_line(span: Span, source: str, line: re.Pattern[str]) -> bool:
    """Whether ``span`` lies within one line of ``source`` (a whole item:
    begins on one) that ``line`` searches."""
    lo, hi = line_around(source, span[0])
    # the line alone: ``^`` and ``$`` of the expression are its start and end
    return line.search(source[lo:hi]) is not None


def _on_lines(spans: list[Span], source: str, line: str, item: bool) -> list[Span]:
    """The spans on a line ``line`` matches (one line each, unless ``item``:
    a whole item may run over several, its first line decides)."""
    regex = re.compile(line)
    return [s for s in spans
            if (item or "\n" not in source[s[0]:s[1]]) and on_line(s, source, regex)]


def locate(
    value: str, source: str, *, start: int = 0, case_sensitive: bool = True,
    whole_tokens: bool = False, whole_lines: bool = False, whole_items: bool = False,
    line: str | None = None,
) -> Span | None:
    """Where ``value`` occurs verbatim in ``source`` at or after ``start``
    (see ``agentflow.grounding`` for "verbatim"; ``whole_tokens``:
    only occurrences that cut no token; ``whole_lines``: only occurrences
    made of whole lines; ``whole_items``: only occurrences that are exactly
    one list item; ``line``: only occurrences on a line this regular
    expression searches); ``None`` if it does not. Blank values are never
    found."""
    every = occurrences(value, source, case_sensitive=case_sensitive,
                        whole_tokens=whole_tokens, whole_lines=whole_lines,
                        whole_items=whole_items, line=line)
    return next((s for s in every if s[0] >= start), None)


def occurrences(
    value: str, source: str, *, case_sensitive: bool = True, whole_tokens: bool = False,
    whole_lines: bool = False, whole_items: bool = False, line: str | None = None,
) -> list[Span]:
    """Every place ``value`` occurs verbatim in ``source`` under the rules
    ``locate`` takes, in document order (``[]`` for a blank value)."""
    if not value.strip():
        return []
    return narrowed(_occurrences(value, source, case_sensitive), source,
                    whole_tokens=whole_tokens, whole_lines=whole_lines,
                    whole_items=whole_items, line=line)[0]


def narrowed(
    every: list[Span], source: str, *, whole_tokens: bool = False, whole_lines: bool = False,
    whole_items: bool = False, line: str | None = None,
    cut_ok: Callable[[Span], bool] | None = None,
) -> tuple[list[Span], tuple[str, Span] | None]:
    """The places of ``every`` (a value's, in ``source``) that the rules
    ``locate`` takes allow, each rule in turn, and the last rule that left
    none of the places before it: ``("cut", ...)`` (``whole_tokens``),
    ``"cut_lines"``, ``"cut_items"`` or ``"off_line"``, with the first of
    those places (``None``: no rule did). ``cut_ok``: whether a place that
    cuts a token is whole all the same (``agentflow.grounding.
    locator_whole``: where the field's locator reads the value)."""
    failed: tuple[str, Span] | None = None
    if every and whole_tokens:
        whole = [s for s in every if not cuts_token(source, *s) or (
            cut_ok is not None and cut_ok(s))]
        failed = None if whole else ("cut", every[0])
        every = whole
    if every and whole_lines:
        whole = _whole_lines(every, _line_bounds(source))
        failed = None if whole else ("cut_lines", every[0])
        every = whole
    if every and whole_items:
        items = _item_set(source)
        whole = [s for s in every if s in items]
        failed = None if whole else ("cut_items", every[0])
        every = whole
    if every and line is not None:
        placed = _on_lines(every, source, line, whole_items)
        failed = None if placed else ("off_line", every[0])
        every = placed
    return every, failed
