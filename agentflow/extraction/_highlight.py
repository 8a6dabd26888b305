"""Spans drawn into a source text: escaping, checking spans against the record,
and the markup sweep that nests or splits overlapping spans (see ``report``)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow._clean_text import json_bytes
from agentflow.documents.names import BIDI_CONTROLS
from agentflow.extraction._report_assets import PALETTE_SIZE
from agentflow.grounding.typed_values import found_in

__all__ = ["MISSING", "Span", "escape_attr", "escape_text", "find_spans", "json_text", "markup",
           "value_at"]

# --------------------------------------------------------------------------- escaping

_TEXT = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord("\r"): "&#13;",
         0: "\ufffd", **{c: "\ufffd" for c in range(0xD800, 0xE000)},
         # bidi controls would reorder what is shown ("\u202e00.0009" reads as 9000.00)
         **{ord(c): "\ufffd" for c in BIDI_CONTROLS}}
_ATTR = {**_TEXT, ord('"'): "&quot;", ord("'"): "&#39;", ord("\n"): "&#10;",
         ord("\t"): "&#9;"}


def escape_text(text: str) -> str:
    """``text`` as HTML text content (one character in, one character rendered;
    NUL, lone surrogates and bidirectional controls render as U+FFFD)."""
    return text.translate(_TEXT)


def escape_attr(text: str) -> str:
    """``text`` as a double-quoted attribute value."""
    return text.translate(_ATTR)


def json_text(value: Any) -> str:
    """A record's ``value`` as JSON text to show (``json_bytes``: an integer past 64
    bits keeps its digits); a value nested past what a JSON writer can walk (a
    results file may hold one 1,000 deep) is named, not written: the page is
    made either way."""
    try:
        return json_bytes(value).decode()
    except (TypeError, RecursionError):
        return "(a JSON value nested too deeply to show)"


_PATH_TOKEN = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
MISSING = object()


def value_at(output: Any, path: str) -> Any:
    """The value at a field path (``changes[2]``, ``entries[3].version``), or ``MISSING``."""
    node = output
    for match in _PATH_TOKEN.finditer(path):
        index, name = match.groups()
        if index is not None and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        elif name is not None and isinstance(node, Mapping) and name in node:
            node = node[name]
        else:
            return MISSING
    return node


def _collapsed(text: str) -> str:
    return " ".join(text.split()).casefold()


# --------------------------------------------------------------------------- spans


@dataclass(frozen=True, slots=True)
class Span:
    """One span to draw: ``[start, end)`` in the shown text, ``raw`` as in the record."""

    key: int
    path: str
    start: int  # in the shown text
    end: int
    raw: tuple[int, int]  # as in the record
    colour: int = 0
    differs: bool = False
    gap: str = ""  # not a field span: a range the model did not read, and why


def _colour(path: str, colours: dict[str, int]) -> int:
    field_name = re.sub(r"\[\d+\]", "[]", path)
    return colours.setdefault(field_name, len(colours) % PALETTE_SIZE)


def _pair(item: Any) -> tuple[int, int] | None:
    if isinstance(item, list | tuple) and len(item) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in item):
        return item[0], item[1]
    return None


def find_spans(record: Mapping[str, Any], text: str | None, shift: int, colours: dict[str, int]
               ) -> tuple[list[Span], list[tuple[str, str]]]:
    """The drawable spans of a record over ``text`` (``None``: listed, not drawable), each
    shifted by ``shift``, and ``(path, why)`` for each span that is not a valid pair or
    does not fit in ``text``.

    Also the ranges the model did not read, as ``gap`` spans: the record's
    ``chunks.missing`` (chunks that failed) and, when ``truncated`` says the
    document was cut, the rest after ``kept_chars``. ``colours`` (field name ->
    colour index) grows as new fields are met.
    """
    output = record.get("output")
    spans: list[Span] = []
    invalid: list[tuple[str, str]] = []
    raw_spans = record.get("spans")
    entries = raw_spans.items() if isinstance(raw_spans, Mapping) else ()
    chunks = record.get("chunks")
    gaps = chunks.get("missing") if isinstance(chunks, Mapping) else None
    candidates: list[tuple[str, Any, str]] = [
        (str(path), item, "") for path, items in entries
        for item in (items if isinstance(items, list) else [items])]
    candidates += [("", item, "not extracted: in a chunk that failed")
                   for item in (gaps if isinstance(gaps, list) else ())]
    truncated = record.get("truncated")
    if isinstance(truncated, Mapping):
        cut = [truncated.get("kept_chars"), truncated.get("total_chars")]
        candidates.append(("", cut, "not read by the model: the document was cut here"))
    for path, item, gap in candidates:
        pair = _pair(item)
        if pair is None or not 0 <= pair[0] <= pair[1]:
            if not gap:
                invalid.append((path, f"not a [start, end] pair: {json_text(item)}"))
            continue
        start, end = pair[0] + shift, pair[1] + shift
        if text is None:  # listed with its offsets, not drawn or checked
            if not gap:
                spans.append(Span(len(spans), path, start, end, pair, _colour(path, colours)))
            continue
        if end > len(text):
            if gap and start < len(text):
                end = len(text)  # the source is shorter than recorded: shade what is there
            else:
                if not gap:
                    invalid.append((path, f"[{pair[0]}, {pair[1]}) is past the end of the text "
                                          f"({len(text) - shift} characters)"))
                continue
        if gap:
            if start < end:
                spans.append(Span(len(spans), path, start, end, pair, gap=gap))
            continue
        value = value_at(output, path)
        differs = isinstance(value, str) and _collapsed(text[start:end]) != _collapsed(
            value) and not _same_day(value, text[start:end])
        spans.append(Span(len(spans), path, start, end, pair, _colour(path, colours), differs))
    return spans, invalid


def _same_day(value: str, written: str) -> bool:
    """Whether ``value``, an ISO date (or date-time) as a record writes one,
    is the day ``written`` writes (``2024-01-08`` and ``08/Jan/24``: a date
    field's span is the text it was read from)."""
    try:
        day = dt.datetime.fromisoformat(value.replace("Z", "+00:00")).date()
    except ValueError:
        return False
    return found_in(day, written)


def _open(span: Span, doc: int, first: bool) -> str:
    if span.gap:
        return (f'<span class="missing" title="{escape_attr(span.gap)} '
                f'[{span.raw[0]}, {span.raw[1]})">')
    classes = f"hl c{span.colour}" + (" first" if first else "") + (
        " differs" if span.differs else "")
    anchor = f' id="s{doc}-{span.key}"' if first else ""
    where = f"{escape_attr(span.path)} [{span.raw[0]}, {span.raw[1]})"
    return (f'<mark class="{classes}"{anchor} data-span="{doc}-{span.key}" '
            f'data-field="{escape_attr(span.path)}" title="{where}">')


def _close(span: Span) -> str:
    return "</span>" if span.gap else "</mark>"


REOPEN_BUDGET = 4
"""Fragments the nesting sweep may reopen per span (plus a constant): past
that, the spans cross so much that nesting them would grow the page with the
square of their number, and ``markup`` draws flat segments instead."""


def markup(text: str, spans: Sequence[Span], doc: int) -> Iterator[str]:
    """``text`` escaped, with ``spans`` as (possibly nested or split) elements.

    A sweep over the span boundaries: at each boundary the spans ending there
    close (with any opened inside them that go on, which reopen as fragments,
    longest first), then the spans starting there open, longest first, so
    nested spans nest and only crossing spans split. When crossing spans would
    reopen more than ``REOPEN_BUDGET`` fragments per span (thousands of
    crossing spans: the page would grow quadratically), the text is drawn as
    flat segments instead, each marked with the innermost span covering it
    (``_segments``): the page stays linear in the number of spans.
    """
    pieces: list[str] = []
    budget = REOPEN_BUDGET * len(spans) + 64
    for piece, reopened in _nested(text, spans, doc):
        budget -= reopened
        if budget < 0:
            yield from _segments(text, spans, doc)
            return
        pieces.append(piece)
    yield from pieces


def _nested(text: str, spans: Sequence[Span], doc: int) -> Iterator[tuple[str, int]]:
    """The nesting sweep's pieces, each with how many fragments it reopened."""
    order = sorted(spans, key=lambda s: (s.start, -s.end, s.key))
    points = sorted({s.start for s in spans} | {s.end for s in spans})
    ending: dict[int, list[Span]] = {}
    for span in spans:
        ending.setdefault(span.end, []).append(span)
    stack: list[Span] = []
    depth: dict[int, int] = {}  # span key -> its index in stack, while it is open
    nxt = pos = 0
    for point in points:
        if point > pos:
            yield escape_text(text[pos:point]), 0
            pos = point
        first_ending = min((depth[s.key] for s in ending.get(point, ()) if s.key in depth),
                           default=None)
        if first_ending is not None:
            closing = stack[first_ending:]
            del stack[first_ending:]
            for span in closing:
                del depth[span.key]
            yield "".join(_close(s) for s in reversed(closing)), 0
            for span in sorted((s for s in closing if s.end != point), key=lambda s: -s.end):
                yield _open(span, doc, first=False), 1
                depth[span.key] = len(stack)
                stack.append(span)
        while nxt < len(order) and order[nxt].start == point:
            span = order[nxt]
            nxt += 1
            yield _open(span, doc, first=True), 0
            if span.end == point:
                yield _close(span), 0
            else:
                depth[span.key] = len(stack)
                stack.append(span)
    yield escape_text(text[pos:]), 0


def _segments(text: str, spans: Sequence[Span], doc: int) -> Iterator[str]:
    """``text`` cut at every span boundary, each segment inside one element of
    the innermost (shortest) span covering it; every span's anchor at its
    start. O(n log n) time, O(n) markup for n spans."""
    import heapq

    starts = sorted(spans, key=lambda s: (s.start, s.key))
    points = sorted({s.start for s in spans} | {s.end for s in spans} | {len(text)})
    heap: list[tuple[int, int, int, Span]] = []  # (length, key, end, span)
    anchored: set[int] = set()
    nxt = pos = 0
    for point in points:
        while heap and heap[0][2] <= pos:  # spans that ended: dropped lazily
            heapq.heappop(heap)
        if point > pos:
            chunk = escape_text(text[pos:point])
            if heap:
                span = heap[0][3]
                yield _open(span, doc, first=span.key not in anchored) + chunk + _close(span)
                anchored.add(span.key)
            else:
                yield chunk
            pos = point
        pushed: list[Span] = []
        while nxt < len(starts) and starts[nxt].start == point:
            span = starts[nxt]
            nxt += 1
            if span.end > point:
                heapq.heappush(heap, (span.end - span.start, span.key, span.end, span))
                pushed.append(span)
            else:
                yield _open(span, doc, first=True) + _close(span)
                anchored.add(span.key)
        while heap and heap[0][2] <= point:
            heapq.heappop(heap)
        top = heap[0][3] if heap else None
        for span in pushed:
            if span is not top:  # not drawn first here: its anchor alone, where it starts
                yield f'<span id="s{doc}-{span.key}"></span>'
                anchored.add(span.key)
    yield escape_text(text[pos:])
