"""Values a grounded string of a grammar may take, listed: the spans a
``pattern`` allows (``candidates``), the list items of the source
(``item_values``), and the rules of a list of whole items in document order
(``item_chain``). ``agentflow.output.grammar`` spells them into a grammar;
this module decides which values there are. Pure functions of the source.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Literal

from agentflow.grounding.items import item_spans, items
from agentflow.grounding.lines import line_around, line_spans
from agentflow.grounding.locate import on_line

__all__ = ["ITEM_CHAIN_RULES", "MAX_CANDIDATES", "MAX_CANDIDATE_CHARS", "SPAN_CHECK_CHARS",
           "SPAN_CHECK_VALUE", "Place", "candidates", "chain_start", "item_chain", "item_places",
           "item_values", "line_values", "never_matches", "next_items", "places"]

Place = tuple[str, int, int]
"""A value a grounded string may take and where it is: ``(text, start, end)``."""

ITEM_CHAIN_RULES = 20_000
"""Most grammar rules a list of whole items in document order may take (two
per item of the source and place in the list); a larger list is built as
any other (any items, in any order)."""
MAX_ITEM_CHARS = 200_000
"""Most characters in all the items of a chain (the longest source a grammar
holds, ``grammar.MAX_SOURCE_CHARS``)."""

SPAN_CHECK_CHARS = 20_000
"""Sources up to this long get the exact treatment of patterned grounded
strings: every value the pattern allows is listed (``candidates``). Longer
ones get the pattern intersected with the substring, and only the search for
any match decides whether a value is possible (a sound, weaker check)."""
SPAN_CHECK_VALUE = 200
"""Longest listed value of a patterned grounded string (characters): a
longer span that matches is not offered (see the module docstring)."""
MAX_CANDIDATES = 1_000
MAX_CANDIDATE_CHARS = 50_000
"""Beyond this many listed values (or characters in all), the pattern is
intersected with the substring instead of listing them."""


def candidates(pattern: str, source: str, cuts: list[int]) -> list[str] | None:
    """Every distinct span of ``source`` a grounded string may take that
    matches ``pattern`` (JSON Schema semantics: a search), in order of first
    occurrence: spans from one offset of ``cuts`` to a later one, at most
    ``SPAN_CHECK_VALUE`` characters, neither starting nor ending with
    whitespace. ``[]``: no value is possible. ``None`` when the list cannot
    stand in for the pattern: Python cannot read it, the source is longer
    than ``SPAN_CHECK_CHARS``, or there are too many values."""
    if len(source) > SPAN_CHECK_CHARS:
        return None
    try:
        regex = re.compile(pattern)
    except re.error:
        return None
    if never_matches(pattern, source, source):
        return []  # no span holds what the whole text does not
    return _collect(_spans_between(cuts, source), source, regex)


def _spans_between(cuts: list[int], source: str) -> Iterator[tuple[int, int]]:
    """Every span of ``source`` from one offset of ``cuts`` to a later one, at
    most ``SPAN_CHECK_VALUE`` characters long, that does not start with
    whitespace."""
    for i, start in enumerate(cuts):
        if start >= len(source) or source[start].isspace():
            continue
        for end in cuts[i + 1:]:
            if end - start > SPAN_CHECK_VALUE:
                break
            yield start, end


def _collect(spans: Iterable[tuple[int, int]], source: str,
             regex: re.Pattern[str] | None) -> list[str] | None:
    """The distinct texts of ``spans`` (in order of first occurrence) that
    neither start nor end with whitespace and that ``regex`` (if any)
    searches; ``None`` past ``MAX_CANDIDATES`` values or
    ``MAX_CANDIDATE_CHARS`` characters."""
    found: dict[str, None] = {}
    size = 0
    for start, end in spans:
        if start >= end or source[start].isspace() or source[end - 1].isspace():
            continue
        value = source[start:end]
        if value in found or (regex is not None and regex.search(value) is None):
            continue
        found[value] = None
        size += len(value)
        if len(found) > MAX_CANDIDATES or size > MAX_CANDIDATE_CHARS:
            return None
    return list(found)


def never_matches(pattern: str, source: str, escaped: str) -> bool:
    """Whether no text of ``source`` (raw, or ``escaped``: its JSON string
    body) matches ``pattern`` at all, so a grounded string under it has no
    legal value (the weaker check for sources ``candidates`` does not list).
    ``False`` when Python cannot read the pattern (then nothing is assumed)."""
    core = pattern[1:] if pattern.startswith("^") else pattern
    core = core[:-1] if core.endswith("$") and not core.endswith("\\$") else core
    if _CONTEXT.search(core.replace("[^", "[")):
        return False  # anchors or lookarounds inside: a span may match where the text does not
    try:
        regex = re.compile(core)
    except re.error:
        return False
    return regex.search(source) is None and regex.search(escaped) is None


_CONTEXT = re.compile(r"[$^]|\\[bBAZz]|\(\?[=!<]")


def _matching_lines(source: str, line: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each line of ``source`` (its line ending excluded:
    ``lines.line_around``) that the regular expression ``line`` searches."""
    regex = re.compile(line)
    out = []
    start = 0
    while start <= len(source):
        lo, end = line_around(source, start)
        if regex.search(source[lo:end]) is not None:  # the line alone: ^ and $ are its edges
            out.append((lo, end))
        nl = source.find("\n", start)
        start = len(source) + 1 if nl < 0 else nl + 1
    return out


def line_values(source: str, line: str, pattern: object, cuts: list[int],
                whole_lines: bool = False) -> list[str] | None:
    """Every distinct value a grounded string held to the lines ``line``
    matches may take, in order of first occurrence: spans from one offset of
    ``cuts`` to a later one within one such line, at most
    ``SPAN_CHECK_VALUE`` characters, neither starting nor ending with
    whitespace (``whole_lines``: each such line's content), that ``pattern``
    (if any) searches. ``[]``: none. ``None``: more than ``MAX_CANDIDATES``
    values (or ``MAX_CANDIDATE_CHARS`` characters), or a pattern Python
    cannot read: the caller leaves the line rule to verification."""
    regex = _compiled(pattern)
    if regex is False:
        return None
    return _collect(_on_lines(source, line, cuts, whole_lines), source, regex)


def _compiled(pattern: object) -> re.Pattern[str] | Literal[False] | None:
    """``pattern`` compiled; ``None`` when there is none (not a non-empty
    str); ``False`` when Python cannot read it."""
    if not (isinstance(pattern, str) and pattern):
        return None
    try:
        return re.compile(pattern)
    except re.error:
        return False


def _on_lines(source: str, line: str, cuts: list[int],
              whole_lines: bool) -> Iterator[tuple[int, int]]:
    """The spans between ``cuts`` within each line ``line`` matches, at most
    ``SPAN_CHECK_VALUE`` characters (``whole_lines``: each such line's content)."""
    for start, end in _matching_lines(source, line):
        if whole_lines:
            yield from ((start + s, start + e) for s, e in line_spans(source[start:end]))
        else:
            yield from _spans_between(
                cuts[bisect.bisect_left(cuts, start):bisect.bisect_right(cuts, end)], source)


def places(source: str, cuts: list[int], pattern: object, line: str | None,
           whole_lines: bool = False) -> list[Place] | None:
    """Every place a grounded string may be copied from, as ``(text, start,
    end)`` in document order (the same spans ``line_values`` and
    ``candidates`` list, each occurrence kept): within the lines ``line``
    matches when it is given (``whole_lines``: each such line's content),
    else anywhere in a source up to ``SPAN_CHECK_CHARS`` characters when
    ``pattern`` is given. ``None`` when they cannot be listed: no line and
    no pattern (any span), a longer source without a line, a pattern Python
    cannot read, whole lines without a line, or more than
    ``MAX_CANDIDATES`` places."""
    regex = _compiled(pattern)
    if regex is False:
        return None
    if line is None and (regex is None or whole_lines or len(source) > SPAN_CHECK_CHARS):
        return None

    spans = (_spans_between(cuts, source) if line is None else
             _on_lines(source, line, cuts, whole_lines))
    out: list[Place] = []
    for start, end in spans:
        if start >= end or source[start].isspace() or source[end - 1].isspace():
            continue
        value = source[start:end]
        if regex is None or regex.search(value) is not None:
            out.append((value, start, end))
            if len(out) > MAX_CANDIDATES:
                return None
    return out


def item_places(source: str, pattern: object = None, line: str | None = None,
                taken: Collection[tuple[int, int]] = ()) -> list[Place]:
    """Each list item of ``source`` (``agentflow.grounding.items``; in
    order, repeats kept) as ``(text, start, end)``, under the rules of
    ``item_values``."""
    regex = re.compile(line) if line is not None else None
    found = [(source[s:e], s, e) for s, e in item_spans(source) if not _within(s, e, taken)
             and (regex is None or on_line((s, e), source, regex))]
    if isinstance(pattern, str) and pattern:
        try:
            allowed = re.compile(pattern)
        except re.error:
            return found
        found = [p for p in found if allowed.search(p[0]) is not None]
    return found


def _within(start: int, end: int, taken: Collection[tuple[int, int]]) -> bool:
    """Whether ``[start, end)`` is a taken item or lies inside one (an item
    nested in a taken item is part of it: never offered again on its own),
    or an item whose own text was taken (``agentflow.grounding.items.
    own_item_spans``: it begins where a taken span begins; the items nested
    in it are items of their own)."""
    return any(s == start or (s <= start and end <= e) for s, e in taken)


def item_values(source: str, pattern: object = None, line: str | None = None,
                taken: Collection[tuple[int, int]] = ()) -> list[str]:
    """The text of each list item of ``source`` (``agentflow.extraction.
    items``; in order, repeats kept) that ``pattern`` (a JSON Schema
    ``pattern``: a search) allows, whose first line ``line`` (if any)
    searches, and whose ``[start, end)`` is not in ``taken`` nor inside one
    of them (items an earlier extraction pass found, with their nested
    items: ``agentflow.extraction.recall``); every
    such item when there is no pattern or Python cannot read it (verification
    then decides)."""
    if line is None and not taken and not (isinstance(pattern, str) and pattern):
        return items(source)
    return [text for text, _, _ in item_places(source, pattern, line, taken)]


def item_chain(values: list[str], low: int, high: int | None, separator: str,
               prefix: str, follows: Sequence[int] | None = None,
               ) -> tuple[dict[str, str], str] | None:
    """Lark rules for the items of a list of whole items in document order,
    each item (each place in ``values``) taken at most once: after item
    ``i`` the list either ends or goes on with item ``follows[i]`` or a
    later one (default ``i + 1``; ``next_items``: the first item that begins
    where item ``i`` ends, so an item nested in one taken is never taken
    again on its own).

    Args:
        values: the items, in document order (``item_values``).
        low, high: the list's ``minItems`` / ``maxItems`` (``None``: no
            bound); ``high`` is kept by counting places (rules per item and
            place), ``low`` only when it is 0 or 1.
        separator: the Lark literal of the item separator (``", "``).
        prefix: a rule name prefix no other rule uses.
        follows: for each item, the index of the first item that may come
            after it in the list (``len(values)``: none).

    Returns:
        ``(rules, first)``: the rules by name, and the rule for the list's
        items (the caller writes ``"[" first "]"``, and the empty list when
        ``low`` is 0); ``None`` when no chain applies: no values, ``low``
        over 1, ``high`` under 1, or more than ``ITEM_CHAIN_RULES`` rules.
    """
    if not values or low > 1 or (high is not None and high < 1):
        return None
    cap = high if high is not None else 1  # without maxItems no count is kept
    if len(values) * cap * 2 > ITEM_CHAIN_RULES or sum(map(len, values)) > MAX_ITEM_CHARS:
        return None
    lits = [json.dumps(json.dumps(v, ensure_ascii=False), ensure_ascii=False) for v in values]
    m = len(values)

    def take(i: int, c: int) -> str:  # item i is the c-th of the list, maybe a later one next
        return f"{prefix}_{i}_{c}"

    def pick(i: int, c: int) -> str:  # the c-th item is item i or a later one
        return f"{prefix}_{i}_{c}_"  # c == 1: chain_start

    rules: dict[str, str] = {}
    for i in range(m - 1, -1, -1):
        for c in range(1, min(cap, i + 1) + 1):  # item i is at most the (i+1)-th
            alts = [lits[i]]
            after = i + 1 if follows is None else max(i + 1, follows[i])
            if after < m and (high is None or c < cap):
                alts.append(f"{lits[i]} {separator} {pick(after, 1 if high is None else c + 1)}")
            rules[take(i, c)] = " | ".join(alts)
            rules[pick(i, c)] = take(i, c) if i + 1 == m else f"{take(i, c)} | {pick(i + 1, c)}"
    return rules, pick(0, 1)


def next_items(places: Sequence[Place]) -> list[int]:
    """For each place (in document order), the index of the first later place
    that begins at or after its end (``len(places)``: none): the items a list
    of whole items may go on with (an item nested in it is part of it)."""
    starts = [start for _, start, _ in places]
    return [max(i + 1, bisect.bisect_left(starts, end)) for i, (_, _, end) in enumerate(places)]


def chain_start(prefix: str, i: int) -> str:
    """The rule of an ``item_chain`` (rule prefix ``prefix``) whose list
    begins with item ``i`` or a later one: the chain from a bound on."""
    return f"{prefix}_{i}_1_"
