"""Text a document marks as no longer in force: cancelled, superseded,
withdrawn or struck-out blocks, which a rule that reads a field's place must
not read a value from.

A document often keeps what no longer holds beside what does: an order's
``PREVIOUS SHIPMENT (cancelled)`` block above the current one, an
``ORIGINAL ENTRY (in error)`` above the corrected report, a ``Next meeting:
5 May (cancelled)`` line, a version ``(superseded by 2.1)``, a struck-out
``~~GLS~~``. A value written there sits under the field's label all the
same, so a learned locator (``agentflow.grounding.locators``) or a hand rule
(``agentflow.extraction.hand_rules``) would take it for the field's value.
``void_spans`` finds such text, by what the document itself says, never by
document kind:

* **struck-out text**: GitHub-flavoured Markdown ``~~text~~`` (on one
  line; paired as GFM pairs them: a ``~~`` that can close, not after
  whitespace, closes the nearest ``~~`` before it that can open, not before
  whitespace, so in ``~~a ~~b ~~gone~~`` only ``gone`` is struck; the
  flanking rules of CommonMark; a run of three or more tildes strikes
  nothing), HTML ``<del>``, ``<s>`` and ``<strike>`` elements (each open tag
  to the next close tag of its name; an open tag never closed strikes
  nothing), and characters each followed by a combining stroke overlay
  (U+0335, U+0336, U+0338), as plain-text editors strike text out;
* **a void status**: a *void word* (``VOID_WORDS``: ``cancelled``,
  ``superseded``, ``withdrawn``, ``in error``...) that is a line's status,
  not a word of its sentence: the first or last words of a note in
  brackets (``(cancelled)``, ``[superseded by 2.1]``, ``(order void)``) or
  after a dash to the line's end (``- withdrawn``, ``— CANCELLED``), or of
  the line itself where it is a stamp in capitals (``CANCELLED SHIPMENT``,
  ``DO NOT USE``) or a Markdown heading (``## Superseded entry``); never in
  a phrase that states a condition or a rule (``if``, ``may``, ``after``,
  ``near``...: ``VOID IF UNPAID``, ``(refund if cancelled)``). So ``Cash
  withdrawn``, ``Do not use near water``, ``Order 1182 cancelled`` and
  ``Status: Cancelled`` (a status that is a line's value) void nothing;
* **a void heading**: a line with a void status that heads a block (it
  begins the text, follows a blank line, or is a Markdown ``#`` heading),
  is short (at most ``HEADING_MAX_WORDS`` words), is no ``key: value``
  line with a value after its key, no list item and no sentence (it does
  not end with ``.``). Its block runs to the next blank line after some
  content (a Markdown heading's: to the next heading of the same level or
  higher);
* **a void note on a line**: a status in brackets or after a dash beside
  the line's other text (``Next meeting: 5 May (cancelled)``, ``- Toaster -
  withdrawn``) voids that line.

``live_text`` is the text with void spans blanked (each character but a
line break replaced by a space: offsets, lines and spans of the rest are
unchanged). A reader of the live text may only lose confidence by it, never
gain it: where reading the whole text would pin nothing (two different
values under one label), voiding one of them pins nothing either
(``agentflow.extraction.confidence``, ``agentflow.extraction.hand_rules``).
Every scan is linear in the text's length.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from agentflow.grounding.items import ITEM_LINE
from agentflow.grounding.spans import merge_spans

__all__ = ["HEADING_MAX_WORDS", "VOID_WORDS", "live_text", "void_spans"]

VOID_WORDS = (
    r"cancell?ed", r"superseded", r"withdrawn", r"revoked", r"rescinded", r"retracted",
    r"annull?ed", r"voided", r"void", r"obsolete", r"struck(?:[ -]out| through)?",
    r"in error", r"entered in error", r"no longer (?:valid|applies|in force|current)",
    r"replaced by", r"do not use", r"invalidated",
)
"""The words that say a block or line no longer holds (regular expressions,
matched as whole words, letter case ignored), where they are its status
(see the module docstring)."""

HEADING_MAX_WORDS = 8
"""Longest line (in words) read as a heading that voids its block."""

_VOID = re.compile(r"(?<![\w-])(?:" + "|".join(VOID_WORDS) + r")(?![\w-])", re.IGNORECASE)
_CONDITION = re.compile(
    r"(?<![\w-])(?:if|unless|when|until|after|before|near|may|might|must|should|shall|will"
    r"|would|can|could)(?![\w-])", re.IGNORECASE)
"""Words that make a phrase a condition or a rule, not a status."""
_EDGE = " \t#*_:!.,;~"
"""What may stand between a status and the edge of its phrase."""
_TAG = re.compile(r"<(/?)(del|s|strike)(?:\s[^<>\n]{0,200})?>", re.IGNORECASE)
_TILDES = re.compile(r"~+|\n")
_STROKED = re.compile(r"(?:[^\n][\u0335\u0336\u0338])+")
_KEY_VALUE = re.compile(r"^[ \t]*[^\W\d][\w.'-]*(?: [\w.'-]+){0,3}[ \t]*[:=][ \t]*\S")
_MD_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]")


def _lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _struck(text: str) -> list[tuple[int, int]]:
    """The struck-out parts of ``text`` (see the module docstring), in one
    pass over its tags, ``~~`` marks and stroked characters."""
    spans = [m.span() for m in _STROKED.finditer(text)]
    opened: dict[str, int] = {}  # tag name -> its first open tag not closed yet
    for m in _TAG.finditer(text):
        name = m.group(2).casefold()
        if not m.group(1):
            opened.setdefault(name, m.start())
        elif name in opened:
            spans.append((opened.pop(name), m.end()))
    openers: list[int] = []  # this line's ``~~`` runs that may open, not matched yet
    for m in _TILDES.finditer(text):
        if m.group() == "\n":
            openers.clear()
            continue
        at, end = m.span()
        if end - at != 2:  # a run of 3 or more tildes strikes nothing (GFM)
            continue
        before = text[at - 1] if at else "\n"
        after = text[end] if end < len(text) else "\n"
        if openers and _flanking(before, after):  # closes the nearest opener
            spans.append((openers.pop(), end))
        elif _flanking(after, before):
            openers.append(at)
    return spans


def _flanking(inside: str, outside: str) -> bool:
    """Whether a ``~~`` run with ``inside`` on its text's side and ``outside``
    on the other can open or close (CommonMark's left- and right-flanking
    delimiter runs: not against whitespace; against punctuation only when
    whitespace or punctuation is outside)."""
    return not inside.isspace() and (not _punctuation(inside) or outside.isspace()
                                     or _punctuation(outside))


def _punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS"


def _edge(line: str, lo: int, hi: int, match: re.Match[str]) -> bool:
    """Whether the void word ``match`` is the first or last words of the
    phrase ``line[lo:hi]``, and the phrase states no condition."""
    first = not line[lo:match.start()].strip(_EDGE)
    last = not line[match.end():hi].strip(_EDGE)
    return (first or last) and _CONDITION.search(line, lo, hi) is None


def _status(line: str, match: re.Match[str]) -> str:
    """How the void word ``match`` stands on ``line``: ``"note"``, a status
    in brackets or after a dash beside other text on the line; ``"stamp"``,
    a status that can only head a block (the line's own first or last
    words, in capitals or in a Markdown heading; a note with nothing
    beside it); ``""``, no status (see the module docstring)."""
    before = line[: match.start()]
    opened = max(before.rfind("("), before.rfind("["))
    if opened >= 0 and before.rfind(")") < opened and before.rfind("]") < opened:
        closes = [i for i in (line.find(")", match.end()), line.find("]", match.end())) if i >= 0]
        if not _edge(line, opened + 1, min(closes, default=len(line)), match):
            return ""
        return "note" if line[:opened].strip(" \t-*:") else "stamp"
    dash = max(before.rfind(" - "), before.rfind(" \u2013 "), before.rfind(" \u2014 "))
    if dash >= 0 and not before[dash + 3:].strip():
        if not _edge(line, dash + 3, len(line), match):
            return ""
        return "note" if line[:dash].strip(" \t-*:") else "stamp"
    if (match.group().isupper() or _MD_HEADING.match(line)) and _edge(
            line, 0, len(line), match):
        return "stamp"
    return ""


def _heading(line: str, after_blank: bool) -> bool:
    """Whether ``line`` reads as a heading that could void its block."""
    body = line.strip()
    if not body or _KEY_VALUE.match(line) or body.endswith(".") or ITEM_LINE.match(line):
        return False
    if len(body.split()) > HEADING_MAX_WORDS:
        return False
    return after_blank or _MD_HEADING.match(line) is not None


def _block_end(text: str, lines: list[tuple[int, int]], i: int) -> int:
    """Where the block headed by line ``i`` ends (an offset of ``text``)."""
    level = _MD_HEADING.match(text[slice(*lines[i])])
    end = lines[i][1]
    content = False
    for j in range(i + 1, len(lines)):
        start, stop = lines[j]
        line = text[start:stop]
        if level is not None:
            other = _MD_HEADING.match(line)
            if other is not None and len(other.group(1)) <= len(level.group(1)):
                break
        elif not line.strip():
            if content:
                break
            continue
        content = content or bool(line.strip())
        end = stop
    return end


@functools.lru_cache(maxsize=16)
def void_spans(text: str) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` of each part of ``text`` the document marks as no
    longer in force (see the module docstring), in order, not overlapping."""
    spans = _struck(text)
    if _VOID.search(text) is not None:
        lines = _lines(text)
        covered = 0  # the end of the last void block: a line before it is void already
        for i, (start, stop) in enumerate(lines):
            if start < covered:
                continue
            line = text[start:stop]
            kinds = {_status(line, m) for m in _VOID.finditer(line)} - {""}
            if not kinds:
                continue
            if _heading(line, i == 0 or not text[slice(*lines[i - 1])].strip()):
                covered = _block_end(text, lines, i)
                spans.append((start, covered))
            elif "note" in kinds:
                spans.append((start, stop))
    return tuple(merge_spans(sorted(spans)))


def live_text(text: str) -> str:
    """``text`` with its void spans (``void_spans``) blanked: every character
    in them but a line break is a space, so offsets and lines are kept."""
    spans = void_spans(text)
    if not spans:
        return text
    parts, pos = [], 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(re.sub(r"[^\n]", " ", text[start:end]))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
