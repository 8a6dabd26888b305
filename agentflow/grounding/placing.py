"""Placing an output's grounded values in the source by the occurrence rule
(``check_grounding``; ``agentflow.grounding`` documents the rule): each
value's places under its marker's rules (``agentflow.grounding.locate``),
and the one it takes.

An output may hold thousands of values (a list's items), many of them the
same (a repeated item): each distinct value under the same rules is located
once (``_Rule``: its places, the test of which it may take, why it has
none), and the place a value takes is found from where the value before it
was (its places are in document order: a binary search of their starts),
past the places already taken, never by reading every place before it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentflow.grounding.check import GroundingCheck, Span, sibling_path
from agentflow.grounding.edges import edge_problem
from agentflow.grounding.items import item_at
from agentflow.grounding.lines import line_at
from agentflow.grounding.locate import _occurrences, narrowed
from agentflow.grounding.locator_whole import ReadAt
from agentflow.grounding.longest import longer_span, maximal_test
from agentflow.grounding.tokens import token_at

if TYPE_CHECKING:
    from agentflow.grounding.values import GroundedValue

__all__ = ["check_grounding"]

_Places = tuple[list[Span], Callable[[Span], bool]]
"""A placed value's candidate places, in document order, and the test of
which of them it may take (``longest``: the maximal ones, tested lazily)."""


@dataclass(slots=True)
class _Rule:
    """One value's places under its marker's rules, shared by every value of
    the output that is the same string under the same rules.

    ``every``: the places, in document order (``starts``: their starts);
    ``keep``: which of them it may take; ``failure``: the result's list that
    names the value when it has no place, and the text that entry shows;
    ``free``: ``every[:free]`` are each taken or refused by ``keep`` (while
    ``era`` is the check's: no taken place was given back since);
    ``clean``: the places ``keep`` allows whose edges are clean (made when
    the marker asks for clean edges; ``clean_set``, ``clean_starts``: as a
    set, and their starts)."""

    every: list[Span]
    keep: Callable[[Span], bool]
    failure: tuple[str, str] | None = None
    starts: list[int] = field(default_factory=list)
    free: int = 0
    era: int = 0
    clean: list[Span] | None = None
    clean_set: frozenset[Span] = frozenset()
    clean_starts: list[int] = field(default_factory=list)


class _Context:
    """What a check computes once for its source: the maximal-span tests,
    the rules located so far."""

    def __init__(self, source: str, read: Mapping[str, ReadAt]) -> None:
        self.source = source
        self.read = read
        self.tests: dict[tuple[str, bool, str | None], Callable[[Span], bool]] = {}
        self.rules: dict[tuple[str, object, str | None, str | None], _Rule] = {}
        self.era = 0  # moves on each time a taken place is given back

    def rule(self, gv: GroundedValue) -> _Rule:
        """``gv``'s places under its rules (located once per value and rules)."""
        key = (gv.value, gv.marker, gv.pattern, gv.path if gv.path in self.read else None)
        rule = self.rules.get(key)
        if rule is None:
            self.rules[key] = rule = self._locate(gv)
        return rule

    def _locate(self, gv: GroundedValue) -> _Rule:
        source, marker = self.source, gv.marker
        reads = self.read.get(gv.path)
        every, failed = narrowed(
            _occurrences(gv.value, source, marker.case_sensitive), source,
            whole_tokens=marker.whole_tokens, whole_lines=marker.whole_lines,
            whole_items=marker.whole_items, line=marker.line,
            cut_ok=None if reads is None else functools.partial(reads, gv.value))
        failure = None if failed is None else (failed[0], _shown(failed, source, marker.line))
        keep: Callable[[Span], bool] = _always
        if every and marker.longest and gv.pattern is not None:
            # tested lazily, where a place is looked at: a value repeated
            # thousands of times costs a test per place used, not per place
            test = (gv.pattern, marker.whole_tokens, marker.line)
            if test not in self.tests:
                self.tests[test] = maximal_test(source, gv.pattern,
                                                whole_tokens=marker.whole_tokens,
                                                line=marker.line)
            keep = self.tests[test]
            if not any(map(keep, every)):
                a, b = longer_span(source, every[0], gv.pattern, whole_tokens=marker.whole_tokens,
                                   line=marker.line) or every[0]
                failure = ("shortened", source[a:b])
                every = []
        starts = [s for s, _ in every]
        if any(a > b for a, b in itertools.pairwise(starts)):  # (never: found in document order)
            every = sorted(every, key=lambda s: s[0])
            starts.sort()
        return _Rule(every, keep, failure, starts, era=self.era)

    def first_free(self, rule: _Rule, k: int, taken: set[Span]) -> int:
        """The first index at or after ``k`` whose place is not taken and
        ``keep`` allows (``len(rule.every)`` when none is)."""
        if rule.era != self.era:  # a taken place was given back: nothing known
            rule.free, rule.era = 0, self.era
        every, keep = rule.every, rule.keep
        known = k <= rule.free
        k = max(k, rule.free)
        while k < len(every) and (every[k] in taken or not keep(every[k])):
            k += 1
        if known:
            rule.free = k
        return k

    def clean(self, rule: _Rule, value: str, base: int) -> list[Span]:
        """``rule``'s places from ``base`` on that ``keep`` allows and whose
        edges are clean."""
        if rule.clean is None:
            rule.clean = [s for s in rule.every
                          if rule.keep(s) and edge_problem(value, self.source, s) is None]
            rule.clean_set = frozenset(rule.clean)
            rule.clean_starts = [s for s, _ in rule.clean]
        if not base:
            return rule.clean
        return rule.clean[bisect.bisect_left(rule.clean_starts, rule.starts[base]):]


def check_grounding(values: Sequence[GroundedValue], source: str,
                    prior: frozenset[Span] = frozenset(),
                    read: Mapping[str, ReadAt] | None = None) -> GroundingCheck:
    """Locate each grounded value in ``source`` by the occurrence rule.

    ``prior``: spans an earlier extraction pass took (``agentflow.extraction.
    recall``); like the spans of the values before it, a value takes one of
    them only when it occurs nowhere else (a repeated list item a later pass
    copied is its next occurrence, not the one already found).

    A value whose marker says ``after="field"`` must begin at or after the
    end of that sibling field's value (its earliest end among the places its
    own rules allow); when it does, the sibling's span is moved, if needed,
    to a place that ends before this value begins, and so in turn the field
    that sibling follows (a chain ``a -> b -> c``: every span ends before the
    next one begins). A null or unfound sibling sets no bound.

    ``read``: field path -> whether a value at a span is where that field's
    learned locator reads it (``agentflow.grounding.locator_whole``): such a
    place is whole by the rule's edges, though it cuts a token
    (``Port=2022``).

    Returns a ``GroundingCheck`` with a span per found value, the values not
    found and the empty ones (never raises).
    """
    result = GroundingCheck()
    context = _Context(source, read or {})
    options: dict[str, _Places] = {}  # where each placed value could be, for ``after``
    follows: dict[str, str] = {}  # path -> the path of the value it was placed after
    taken: set[Span] = set(prior)
    cursor = 0
    # one value (a record's one grounded string): no other value to share its rule with,
    # so none is keyed (a key hashes the marker, a dataclass: Python code) nor kept
    alone = len(values) == 1
    for gv in values:
        if not gv.value.strip():
            result.empty.append((gv.path, gv.optional))
            continue
        rule = context._locate(gv) if alone else context.rule(gv)
        if rule.failure is not None:
            kind, shown = rule.failure
            getattr(result, kind).append((gv.path, gv.value, shown))
        every, keep, base = rule.every, rule.keep, 0
        sibling = sibling_path(gv.path, gv.marker.after) if gv.marker.after else None
        bound = options.get(sibling) if sibling is not None else None
        if every and bound:
            base = bisect.bisect_left(rule.starts, _earliest_end(*bound))
            every = every[base:]
            if not any(map(keep, every)):
                result.misordered.append((gv.path, gv.value, str(gv.marker.after)))
                if sibling in result.spans:
                    a, b = result.spans[sibling][0]
                    result.preceding[gv.path] = source[a:b]
                every = []
        if not every:
            result.unfound.append((gv.path, gv.value))
            if gv.optional:
                result.nullable.append(gv.path)
            continue
        k = context.first_free(rule, max(base, bisect.bisect_left(rule.starts, cursor)), taken)
        if k == len(rule.every):
            k = context.first_free(rule, base, taken)
        span = rule.every[k] if k < len(rule.every) else next(filter(keep, every))
        if gv.marker.clean:
            clean = context.clean(rule, gv.value, base)
            if not clean:
                why = edge_problem(gv.value, source, span) or "has an unclean edge"
                result.unclean.append((gv.path, gv.value, why))
                result.unfound.append((gv.path, gv.value))
                if gv.optional:
                    result.nullable.append(gv.path)
                continue
            if span not in rule.clean_set:
                span = next((s for s in clean if s not in taken), clean[0])
        if sibling is not None and bound:
            follows[gv.path] = sibling
            if _pull_before(result.spans, options, follows, taken, sibling, span[0]):
                context.era += 1
        taken.add(span)
        cursor = span[0]
        options[gv.path] = (every, keep)
        result.spans[gv.path] = [span]
    return result


def _always(span: Span) -> bool:
    return True


def _shown(failed: tuple[str, Span], source: str, line: str | None) -> str:
    """The text a failure of ``narrowed`` shows: the token, line or item
    its first place cuts, or the line rule it is off."""
    kind, (a, b) = failed
    if kind == "cut":
        return token_at(source, a, b)
    if kind == "cut_lines":
        return line_at(source, a, b)
    if kind == "cut_items":
        return item_at(source, a, b) or ""
    return str(line)


def _earliest_end(places: list[Span], keep: Callable[[Span], bool]) -> int:
    """The earliest end among ``places`` that ``keep`` allows (one exists)."""
    return next(e for s, e in sorted(places, key=lambda se: se[1]) if keep((s, e)))


def _pull_before(spans: dict[str, list[Span]], options: dict[str, _Places],
                 follows: dict[str, str], taken: set[Span], path: str | None,
                 limit: int) -> bool:
    """Move the span of ``path`` (and, in turn, of the values it follows) to
    its last place that ends by ``limit``, while it ends after ``limit``;
    whether any moved.

    Each move only makes a span end earlier, so the values placed after it
    stay after it; the value it follows is pulled before its new start the
    same way (a chain ``a -> b -> c`` whose ``b`` moved for ``c`` moves ``a``
    for ``b``). A place always exists: each value's places begin at or after
    the earliest end of the places of the value it follows."""
    moved = False
    while path is not None and spans[path][0][1] > limit:
        places, keep = options[path]
        last = next((s for s in reversed(places) if s[1] <= limit and keep(s)), None)
        if last is None:
            return moved
        taken.discard(spans[path][0])
        spans[path] = [last]
        taken.add(last)
        moved = True
        path, limit = follows.get(path), last[0]
    return moved
