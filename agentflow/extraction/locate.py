"""Locating grounded values in the source: the one definition of "verbatim"
(``agentflow.extraction.grounding`` documents it, with the occurrence rule),
whole tokens, whole lines and whole items, and the check of an output's
grounded values.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentflow.extraction.folding import TYPOGRAPHIC, fold_text
from agentflow.extraction.items import item_at, item_spans
from agentflow.extraction.lines import line_around, line_at, line_spans
from agentflow.extraction.longest import longer_span, maximal_test
from agentflow.extraction.tokens import cuts_token, token_at

if TYPE_CHECKING:
    from agentflow.extraction.grounding import GroundedValue

__all__ = ["TYPOGRAPHIC", "GroundingCheck", "Span", "check_grounding", "locate", "occurrences",
           "on_line"]

Span = tuple[int, int]
_Places = tuple[list[Span], Callable[[Span], bool]]
"""A placed value's candidate places, in document order, and the test of
which of them it may take (``longest``: the maximal ones, tested lazily)."""


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
    those of the Unicode-compatibility forms of both (``_folded_occurrences``)."""
    spans = _plain_occurrences(value, source, case_sensitive)
    if spans or (value.isascii() and source.isascii()):
        return spans
    return _folded_occurrences(value, source, case_sensitive)


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


def _plain_occurrences(value: str, source: str, case_sensitive: bool) -> list[Span]:
    """The exact occurrences if there are any, else the whitespace-normalised ones."""
    spans: list[Span] = []
    if case_sensitive:
        i = source.find(value)
        while i >= 0:
            spans.append((i, i + len(value)))
            i = source.find(value, i + 1)
        if spans:
            return spans
    pattern = _pattern(value, case_sensitive)
    if pattern is None:
        return spans
    pos = 0
    while (m := pattern.search(source, pos)) is not None:
        spans.append((m.start(), m.end()))
        pos = m.start() + 1
    return spans


def _whole(spans: list[Span], source: str) -> list[Span]:
    """The spans that cut no token of ``source``."""
    return [s for s in spans if not cuts_token(source, *s)]


def _line_bounds(source: str) -> tuple[set[int], set[int]]:
    """Where the line contents of ``source`` start, and where they end."""
    lines = line_spans(source)
    return {s for s, _ in lines}, {e for _, e in lines}


def _whole_lines(spans: list[Span], bounds: tuple[set[int], set[int]]) -> list[Span]:
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
    (see ``agentflow.extraction.grounding`` for "verbatim"; ``whole_tokens``:
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
    every = _occurrences(value, source, case_sensitive)
    if whole_tokens:
        every = _whole(every, source)
    if whole_lines:
        every = _whole_lines(every, _line_bounds(source))
    if whole_items:
        items = set(item_spans(source))
        every = [s for s in every if s in items]
    if line is not None:
        every = _on_lines(every, source, line, whole_items)
    return every


@dataclass(frozen=True, slots=True)
class GroundingCheck:
    """The result of checking an output's grounded values against a source.

    Attributes:
        spans: field path -> ``[(start, end)]`` for every value found.
        unfound: ``(path, value)`` of every value not found in the source.
        empty: ``(path, optional)`` of grounded values that are empty (or
            whitespace); ``optional``: the field allows null.
        cut: ``(path, value, token)`` of whole-token values found only
            inside a longer token (``token``: the first such, e.g.
            ``("version", "1.5.2-1", "2:1.5.2-1")``); also in ``unfound``.
        cut_lines: ``(path, value, line)`` of whole-line values found only
            as part of a line (``line``: the content of the first such
            line); also in ``unfound``.
        cut_items: ``(path, value, item)`` of whole-item values found in the
            document but never as exactly one list item (``item``: the first
            item the first occurrence overlaps, ``""`` when it overlaps
            none); also in ``unfound``.
        off_line: ``(path, value, line)`` of values found in the document
            but on no line their marker's ``line`` expression matches
            (``line``: that expression); also in ``unfound``.
        shortened: ``(path, value, longer)`` of values under
            ``Grounded(longest=True)`` found in the document only as part of
            a longer span the field's rules and pattern also allow
            (``longer``: the longest such around the first occurrence); also
            in ``unfound``.
        misordered: ``(path, value, after)`` of values found in the
            document but nowhere after the value of the field their
            marker's ``after`` names (``after``: that field's name); also in
            ``unfound``.
        preceding: path of each ``misordered`` value -> the value of the
            field it must follow, as the document writes it (the message
            names it: that value may be the wrong one).
        nullable: paths of ``unfound`` values whose field allows null (the
            message offers it: a model that writes ``"null"``, ``"N/A"`` or a
            guess for a field the document does not fill is told it may leave
            it null).
    """

    spans: dict[str, list[Span]] = field(default_factory=dict)
    unfound: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, bool]] = field(default_factory=list)
    cut: list[tuple[str, str, str]] = field(default_factory=list)
    cut_lines: list[tuple[str, str, str]] = field(default_factory=list)
    cut_items: list[tuple[str, str, str]] = field(default_factory=list)
    off_line: list[tuple[str, str, str]] = field(default_factory=list)
    shortened: list[tuple[str, str, str]] = field(default_factory=list)
    misordered: list[tuple[str, str, str]] = field(default_factory=list)
    preceding: dict[str, str] = field(default_factory=dict)
    nullable: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every grounded value was found."""
        return not self.unfound and not self.empty

    def message(self, name: Callable[[str], str] | None = None) -> str:
        """A message listing each failing field (for the model and for errors).

        ``name``: spells a field path in the message (default: as it is, python
        field names); the engine passes ``field_keys.key_path`` so the model
        reads the keys of the schema it was sent (its aliases)."""
        show = name or _same
        nullable = set(self.nullable)
        cut = {(p, v): token for p, v, token in self.cut}
        cut_lines = {(p, v): line for p, v, line in self.cut_lines}
        cut_items = {(p, v): item for p, v, item in self.cut_items}
        off_line = {(p, v): line for p, v, line in self.off_line}
        misordered = {(p, v): _field_name(show(_sibling(p, after)))  # as the model named it
                      for p, v, after in self.misordered}
        shortened = {(p, v): longer for p, v, longer in self.shortened}
        lines = [f"- {show(p)}: {v!r} cuts through the token {cut[p, v]!r} of the document; "
                 f"copy whole tokens (here {cut[p, v]!r}) exactly as written"
                 if (p, v) in cut else
                 f"- {show(p)}: {v!r} is only part of the line {cut_lines[p, v]!r} of the "
                 f"document; copy whole lines exactly as written"
                 if (p, v) in cut_lines else
                 f"- {show(p)}: {v!r} is not one whole item of a list in the document"
                 + (f" (the item is {cut_items[p, v]!r})" if cut_items[p, v] else
                    " (it is in no list item)")
                 + "; copy one whole item, with its continuation lines, exactly as written"
                 if (p, v) in cut_items else
                 f"- {show(p)}: {v!r} is not on a line of the document that matches "
                 f"{off_line[p, v]!r} (where this field is written); copy it from such a line"
                 if (p, v) in off_line else
                 f"- {show(p)}: {v!r} is only part of {shortened[p, v]!r} in the document, which "
                 f"is a whole value of this field; copy the whole value as written"
                 if (p, v) in shortened else
                 f"- {show(p)}: {v!r} is not after the value of {misordered[p, v]!r} in the "
                 f"document (this field is written after it); copy it from the text that "
                 f"follows that value"
                 + (f" ({self.preceding[p]!r}), or correct {misordered[p, v]!r} if that "
                    f"value is the wrong one" if p in self.preceding else "")
                 if (p, v) in misordered else
                 f"- {show(p)}: {v!r} is not found in the document; copy the text exactly as "
                 f"it is written there" for p, v in self.unfound]
        lines = [line + (", or use null if the document does not say" if p in nullable else "")
                 for line, (p, _) in zip(lines, self.unfound, strict=True)]
        lines += [f"- {show(p)}: empty text; copy it from the document"
                  + (", or use null if the document does not say" if optional else
                     ", or leave the item out of the list" if p.endswith("]") else "")
                  for p, optional in self.empty]
        return "\n".join(lines)


def check_grounding(values: Sequence[GroundedValue], source: str,
                    prior: frozenset[Span] = frozenset()) -> GroundingCheck:
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

    Returns a ``GroundingCheck`` with a span per found value, the values not
    found and the empty ones (never raises).
    """
    result = GroundingCheck()
    options: dict[str, _Places] = {}  # where each placed value could be, for ``after``
    follows: dict[str, str] = {}  # path -> the path of the value it was placed after
    taken: set[Span] = set(prior)
    cursor = 0
    bounds: tuple[set[int], set[int]] | None = None  # of the lines, computed once if needed
    items: set[Span] | None = None  # of the list items, computed once if needed
    for gv in values:
        if not gv.value.strip():
            result.empty.append((gv.path, gv.optional))
            continue
        every = _occurrences(gv.value, source, gv.marker.case_sensitive)
        if every and gv.marker.whole_tokens:
            whole = _whole(every, source)
            if not whole:
                result.cut.append((gv.path, gv.value, token_at(source, *every[0])))
            every = whole
        if every and gv.marker.whole_lines:
            bounds = bounds or _line_bounds(source)
            whole = _whole_lines(every, bounds)
            if not whole:
                result.cut_lines.append((gv.path, gv.value, line_at(source, *every[0])))
            every = whole
        if every and gv.marker.whole_items:
            items = set(item_spans(source)) if items is None else items
            whole = [s for s in every if s in items]
            if not whole:
                result.cut_items.append((gv.path, gv.value, item_at(source, *every[0]) or ""))
            every = whole
        if every and gv.marker.line is not None:
            placed = _on_lines(every, source, gv.marker.line, gv.marker.whole_items)
            if not placed:
                result.off_line.append((gv.path, gv.value, gv.marker.line))
            every = placed
        keep: Callable[[Span], bool] = _always
        if every and gv.marker.longest and gv.pattern is not None:
            # tested lazily, where a place is looked at: a value repeated
            # thousands of times costs a test per place used, not per place
            keep = maximal_test(source, gv.pattern, whole_tokens=gv.marker.whole_tokens,
                                line=gv.marker.line)
            if not any(map(keep, every)):
                a, b = longer_span(source, every[0], gv.pattern,
                                   whole_tokens=gv.marker.whole_tokens,
                                   line=gv.marker.line) or every[0]
                result.shortened.append((gv.path, gv.value, source[a:b]))
                every = []
        sibling = _sibling(gv.path, gv.marker.after) if gv.marker.after else None
        bound = options.get(sibling) if sibling is not None else None
        if every and bound:
            low = _earliest_end(*bound)
            after = [s for s in every if s[0] >= low]
            if not any(map(keep, after)):
                result.misordered.append((gv.path, gv.value, str(gv.marker.after)))
                if sibling in result.spans:
                    a, b = result.spans[sibling][0]
                    result.preceding[gv.path] = source[a:b]
                after = []
            every = after
        if not every:
            result.unfound.append((gv.path, gv.value))
            if gv.optional:
                result.nullable.append(gv.path)
            continue
        span = next((s for s in every if s[0] >= cursor and s not in taken and keep(s)), None)
        span = span or next((s for s in every if s not in taken and keep(s)),
                            None) or next(filter(keep, every))
        if sibling is not None and bound:
            follows[gv.path] = sibling
            _pull_before(result.spans, options, follows, taken, sibling, span[0])
        taken.add(span)
        cursor = span[0]
        options[gv.path] = (every, keep)
        result.spans[gv.path] = [span]
    return result


def _same(path: str) -> str:
    return path


def _field_name(path: str) -> str:
    """The last field name of ``path`` (``entries[3].version`` -> ``version``)."""
    return path.rpartition(".")[2]


def _always(span: Span) -> bool:
    return True


def _earliest_end(places: list[Span], keep: Callable[[Span], bool]) -> int:
    """The earliest end among ``places`` that ``keep`` allows (one exists)."""
    return next(e for s, e in sorted(places, key=lambda se: se[1]) if keep((s, e)))


def _pull_before(spans: dict[str, list[Span]], options: dict[str, _Places],
                 follows: dict[str, str], taken: set[Span], path: str | None,
                 limit: int) -> None:
    """Move the span of ``path`` (and, in turn, of the values it follows) to
    its last place that ends by ``limit``, while it ends after ``limit``.

    Each move only makes a span end earlier, so the values placed after it
    stay after it; the value it follows is pulled before its new start the
    same way (a chain ``a -> b -> c`` whose ``b`` moved for ``c`` moves ``a``
    for ``b``). A place always exists: each value's places begin at or after
    the earliest end of the places of the value it follows."""
    while path is not None and spans[path][0][1] > limit:
        places, keep = options[path]
        last = next((s for s in reversed(places) if s[1] <= limit and keep(s)), None)
        if last is None:
            return
        taken.discard(spans[path][0])
        spans[path] = [last]
        taken.add(last)
        path, limit = follows.get(path), last[0]


def _sibling(path: str, name: str) -> str:
    """The path of field ``name`` in the object that holds ``path``
    (``entries[3].distribution``, ``version`` -> ``entries[3].version``;
    a list item ``a.tags[2]`` -> ``a.name``)."""
    parent = path.rpartition(".")[0]
    return f"{parent}.{name}" if parent else name
