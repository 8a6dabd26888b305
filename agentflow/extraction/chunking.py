"""Splitting a long document into chunks at natural boundaries.

A chunk is a ``[start, end)`` range of character offsets (Python ``str``
indices) into the document: the text itself is sliced only when a chunk is
sent, so a 1 MB document is never held as N copies. ``iter_chunks`` yields
chunks one at a time, in document order.

Where a chunk ends, in order of preference (the first kind found in the
second half of the window wins, so chunks stay near ``max_chars``):

1. after a blank line followed by an unindented line (a new top-level block:
   a heading, a changelog entry, a paragraph of prose);
2. after any blank line (also one followed by indented text);
3. after a line end;
4. after a sentence end (``.``, ``!``, ``?`` and closing quotes/brackets,
   then whitespace; or the CJK full stops ``。！？``);
5. after any whitespace anywhere in the window (never inside a word);
6. nowhere natural (one run of non-space text longer than a chunk): a
   *hard cut* at the window's end, moved back so that it never splits a
   character — a code point and the combining marks, variation selectors or
   zero-width joiner that belong to it, nor ``\\r\\n``. The chunk says so
   (``Chunk.hard_cut``) and the record lists those offsets.

Overlap: the next chunk starts up to ``overlap`` characters before the
previous end, at the first line start (else word start) in that stretch, so
an item cut by the boundary is seen whole by the next chunk; a stretch with
neither gives no overlap. ``offset``
shifts the first boundary (extra passes use it to see the document cut in
other places).

Item chunks (``iter_item_chunks``, the map-over-items mode of
``Chunking(items=...)``): the document is read as a run of *units* where a
list item may begin — top-level blocks (``"block"``: a blank line followed
by an unindented line starts one) or lines (``"line"``) — and each chunk is
as many whole units as fit (at most ``max_units``), so no item is cut and
no overlap is needed. A
chunk says how many non-blank units it holds (``Chunk.units``): at most that
many items begin in it. A unit longer than a chunk is split by
``iter_chunks`` (with overlap) and each piece counts as one unit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

from agentflow._arguments import check_choice, check_instance, check_int, wrong_value

__all__ = ["ITEM_UNITS", "Chunk", "ItemUnit", "iter_chunks", "iter_item_chunks", "safe_cut"]

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_BLOCK_START = re.compile(r"\n[ \t\r\f\v]*\n(?=[^\s])")
_SENTENCE = re.compile(r"[.!?][)\]\"'»”’]*\s+|[。！？]")
_SPACE = re.compile(r"\s+")
_LINE_START = re.compile(r"(?<=\n)")
_WORD_START = re.compile(r"(?<=\s)\S")
_LINE = re.compile(r"\n")

ItemUnit = Literal["block", "line"]
"""Where a list item may begin: a top-level block, or any line."""
ITEM_UNITS: tuple[str, ...] = get_args(ItemUnit)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a document.

    Attributes:
        index: position among the document's chunks (from 0).
        start / end: ``[start, end)`` character offsets into the document.
        hard_cut: the chunk ends inside a run of text with no natural
            boundary (split at a character boundary instead).
        units: item chunks only: the non-blank units (blocks or lines) the
            chunk holds, so at most this many list items begin in it
            (0: not counted).
    """

    index: int
    start: int
    end: int
    hard_cut: bool = False
    units: int = 0

    def text(self, document: str) -> str:
        """This chunk's text (a new ``str`` of ``end - start`` characters)."""
        return document[self.start : self.end]


def _joins_previous(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (combining mark,
    variation selector, zero-width joiner, emoji modifier, low surrogate)."""
    code = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF  # variation selectors
        or code == 0x200D  # zero-width joiner
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xDC00 <= code <= 0xDFFF  # a low surrogate (text decoded with surrogatepass)
    )


def safe_cut(text: str, cut: int, floor: int = 0) -> int:
    """``cut`` moved back (not below ``floor + 1``) so that ``text[:cut]`` does
    not end inside a character: never before a joining code point, never
    after a zero-width joiner, never between ``\\r`` and ``\\n``. When no such
    place exists above ``floor``, ``cut`` moved forward instead."""
    if cut <= floor or cut >= len(text):
        return cut

    def bad(i: int) -> bool:
        return (_joins_previous(text[i]) or text[i - 1] == "\u200d"
                or (text[i - 1] == "\r" and text[i] == "\n"))

    i = cut
    while i > floor + 1 and bad(i):
        i -= 1
    if not bad(i):
        return i
    i = cut
    while i < len(text) and bad(i):
        i += 1
    return i


def _last_end(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    """The end of the last match of ``pattern`` lying inside ``text[lo:hi]``."""
    end = None
    for match in pattern.finditer(text, lo, hi):
        end = match.end()
    return end


def _line_end(text: str, lo: int, hi: int) -> int | None:
    at = text.rfind("\n", lo, hi)
    return at + 1 if at >= 0 else None


def _boundary(text: str, pos: int, limit: int) -> tuple[int, bool]:
    """Where a chunk starting at ``pos`` ends when it may reach ``limit``:
    ``(cut, hard_cut)``."""
    half = pos + max(1, (limit - pos) // 2)
    for cut in (
        _last_end(_BLOCK_START, text, half - 1, limit),
        _last_end(_BLANK_LINE, text, half - 1, limit),
        _line_end(text, half - 1, limit),
        _last_end(_SENTENCE, text, half, limit),
    ):
        if cut is not None and pos < cut <= limit:
            return cut, False
    cut = _last_end(_SPACE, text, pos + 1, limit)  # any word boundary, however early
    if cut is not None and pos < cut <= limit:
        return cut, False
    return safe_cut(text, limit, pos), True


def _next_start(text: str, pos: int, cut: int, overlap: int) -> int:
    """Where the chunk after one ending at ``cut`` starts (``overlap`` chars back at most)."""
    if overlap <= 0:
        return cut
    lo = max(pos + 1, cut - overlap)
    if lo >= cut:
        return cut
    for pattern in (_LINE_START, _WORD_START):
        match = pattern.search(text, lo, cut)
        if match is not None and match.start() < cut:
            return match.start()
    return cut  # no line or word starts in the stretch: no overlap rather than half a word


def iter_chunks(
    text: str, max_chars: int, overlap: int = 0, *, offset: int = 0
) -> Iterator[Chunk]:
    """The chunks of ``text``, each at most ``max_chars`` characters (a hard
    cut that would split a character may exceed it by the joining marks).

    Args:
        text: the document.
        max_chars: characters per chunk (>= 1).
        overlap: characters the next chunk may repeat from this one (>= 0,
            < ``max_chars``).
        offset: the first chunk is at most this long (when > 0), shifting
            every later boundary; extra passes use it.

    Yields:
        ``Chunk`` items covering ``text`` in order; an empty text yields none.

    Raises (when called, before the first chunk):
        ArgumentTypeError: ``text`` is no str, a size no int (a ``TypeError``).
        ArgumentValueError: ``max_chars`` < 1, ``overlap`` outside
            ``[0, max_chars)`` or ``offset`` < 0 (a ``ValueError``).
    """
    _check_sizes(text, max_chars, overlap, offset)
    return _chunks(text, max_chars, overlap, offset)


def _check_sizes(text: str, max_chars: int, overlap: int, offset: int) -> None:
    check_instance("text", text, str, "a str")
    check_int("max_chars", max_chars, 1)
    check_int("overlap", overlap, 0)
    if overlap >= max_chars:
        raise wrong_value("overlap", f"an int >= 0 and < max_chars ({max_chars})", overlap)
    check_int("offset", offset, 0)


def _chunks(text: str, max_chars: int, overlap: int, offset: int) -> Iterator[Chunk]:
    n, pos, index = len(text), 0, 0
    while pos < n:
        size = offset if index == 0 and 0 < offset < max_chars else max_chars
        limit = pos + size
        if limit >= n:
            yield Chunk(index, pos, n)
            return
        cut, hard = _boundary(text, pos, limit)
        yield Chunk(index, pos, cut, hard)
        if cut >= n:
            return
        start = _next_start(text, pos, cut, overlap)
        pos = start if start > pos else cut
        index += 1


def _unit_starts(text: str, unit: ItemUnit) -> Iterator[int]:
    """Offsets where units begin (0 first), lazily."""
    yield 0
    pattern = _BLOCK_START if unit == "block" else _LINE
    for match in pattern.finditer(text):
        if match.end() < len(text):
            yield match.end()


def iter_item_chunks(
    text: str, max_chars: int, unit: ItemUnit = "block", overlap: int = 0, *, offset: int = 0,
    max_units: int | None = None,
) -> Iterator[Chunk]:
    """Chunks of whole units (see the module docstring), each at most
    ``max_chars`` characters unless one unit alone is longer (then that unit
    is split by ``iter_chunks`` with ``overlap``, each piece one unit).

    Args:
        text: the document.
        max_chars: characters per chunk (>= 1).
        unit: ``"block"`` or ``"line"``: where an item may begin.
        overlap: characters of overlap between the pieces of a unit that is
            split (``< max_chars``); whole units never overlap.
        offset: the first chunk is at most this long (when > 0), shifting
            later boundaries (extra passes).
        max_units: non-blank units per chunk at most (``None``: no cap).

    Yields:
        ``Chunk`` items covering ``text`` in order, ``units`` set; an empty
        text yields none.

    Raises (when called, before the first chunk):
        ArgumentTypeError: ``text`` is no str, a size no int (a ``TypeError``).
        ArgumentValueError: ``max_chars`` < 1, ``overlap`` outside
            ``[0, max_chars)``, ``offset`` < 0, ``max_units`` < 1 or an unknown
            ``unit`` (a ``ValueError``).
    """
    check_choice("unit", unit, ITEM_UNITS)
    check_int("max_units", max_units, 1, optional=True)
    _check_sizes(text, max_chars, overlap, offset)
    return _item_chunks(text, max_chars, unit, overlap, offset, max_units)


def _item_chunks(text: str, max_chars: int, unit: ItemUnit, overlap: int, offset: int,
                 max_units: int | None) -> Iterator[Chunk]:
    n, index = len(text), 0
    start, units = 0, 0
    starts = _unit_starts(text, unit)
    begin = next(starts, None)
    while begin is not None and begin < n:
        after = next(starts, None)
        end = n if after is None else after
        limit = offset if index == 0 and 0 < offset < max_chars else max_chars
        blank = not text[begin:end].strip()
        full = max_units is not None and units >= max_units and not blank
        if end - start <= limit and not full:  # the unit joins the chunk
            units += 0 if blank else 1
        else:
            if begin > start:  # close the chunk before this unit
                yield Chunk(index, start, begin, units=units)
                index += 1
                start, units = begin, 0
                limit = max_chars
            if end - start <= limit:
                units = 0 if blank else 1
            else:  # one unit longer than a chunk: its pieces
                piece = text[start:end]
                for sub in _chunks(piece, limit, min(overlap, limit - 1), 0):
                    yield Chunk(index, start + sub.start, start + sub.end, sub.hard_cut, 1)
                    index += 1
                start, units = end, 0
        begin = after
    if start < n:
        yield Chunk(index, start, n, units=units)
