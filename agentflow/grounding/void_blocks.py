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

* **struck-out text**: GitHub-flavoured Markdown ``~~text~~``, HTML
  ``<del>``, ``<s>`` and ``<strike>`` elements, and characters each
  followed by a combining stroke overlay (U+0335, U+0336, U+0338), as
  plain-text editors strike text out;
* **a void heading**: a line that heads a block (it begins the text, follows
  a blank line, or is a Markdown ``#`` heading), is short (at most
  ``HEADING_MAX_WORDS`` words), is no ``key: value`` line with a value
  after its key, no list item and no sentence (it does not end with
  ``.``), and holds
  a *void word* (``VOID_WORDS``: ``cancelled``, ``superseded``,
  ``withdrawn``, ``in error``...) said of itself: the word begins a note
  in brackets or after a dash (``PREVIOUS SHIPMENT (cancelled)``), or
  begins or ends the line's text (``CANCELLED SHIPMENT``). A note that
  names something else first says *that* is void: ``SHIPPING NOTICE
  (replaces the cancelled notice below)`` and ``CORRECTED ENTRY (earlier
  entry in error)`` head the text in force. Its block runs to the next
  blank line after some content (a Markdown heading's: to the next heading
  of the same level or higher);
* **a void note on a line**: a void word that begins a note in brackets
  (``(cancelled)``, ``[superseded by 2.1]``; not ``(GLS cancelled)``) or
  after a dash at the line's end (``— withdrawn``) voids its line: the
  line's value is annotated as no longer in force. A void word that is
  itself a line's value (``Status: Cancelled``) states a status: that line
  is not void.

``live_text`` is the text with void spans blanked (each character but a
line break replaced by a space: offsets, lines and spans of the rest are
unchanged).
"""

from __future__ import annotations

import functools
import re

__all__ = ["HEADING_MAX_WORDS", "VOID_WORDS", "live_text", "void_spans"]

VOID_WORDS = (
    r"cancell?ed", r"superseded", r"withdrawn", r"revoked", r"rescinded", r"retracted",
    r"annull?ed", r"voided", r"void", r"obsolete", r"struck(?:[ -]out| through)?",
    r"in error", r"entered in error", r"no longer (?:valid|applies|in force|current)",
    r"replaced by", r"do not use", r"invalidated",
)
"""The words that say a block or line no longer holds (regular expressions,
matched as whole words, letter case ignored)."""

HEADING_MAX_WORDS = 8
"""Longest line (in words) read as a heading that voids its block."""

_VOID = re.compile(r"(?<![\w-])(?:" + "|".join(VOID_WORDS) + r")(?![\w-])", re.IGNORECASE)
_STRUCK = re.compile(
    r"~~(?=\S)(?:[^~\n]|~(?!~))*?(?<=\S)~~"
    r"|<(del|s|strike)\b[^<>]*>(?:(?!<\1\b).)*?</\1\s*>"
    r"|(?:[^\n][\u0335\u0336\u0338])+", re.IGNORECASE | re.DOTALL)
"""Struck-out text. A struck run holds no ``~~`` and a ``<del>`` element no
second ``<del`` (nor a tag any ``<`` inside it), so a search from an opener
that never closes stops at the next one: linear in the text, never a scan to
the text's end from every opener."""
_NOTE = re.compile(r"[(\[][^)\]\n]*$|[-\u2013\u2014]\s+[^\n]*$")
"""Where a void word stands as a note: inside brackets, or after a dash to the line's end."""
_KEY_VALUE = re.compile(r"^[ \t]*[^\W\d][\w.'-]*(?: [\w.'-]+){0,3}[ \t]*[:=][ \t]*\S")
_MD_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]")
_ITEM = re.compile(r"^[ \t]*(?:[-*+•·‣◦]|[0-9]{1,3}[.)])[ \t]")


def _lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _heading(line: str, after_blank: bool) -> bool:
    """Whether ``line`` reads as a heading that could void its block."""
    body = line.strip()
    if not body or _KEY_VALUE.match(line) or body.endswith(".") or _ITEM.match(line):
        return False
    if len(body.split()) > HEADING_MAX_WORDS:
        return False
    return after_blank or _MD_HEADING.match(line) is not None


def _block_end(text: str, lines: list[tuple[int, int]], i: int) -> int:
    """Where the block headed by line ``i`` ends (an offset of ``text``)."""
    first = text[slice(*lines[i])]
    level = _MD_HEADING.match(first)
    end = lines[i][1]
    content = False
    for j in range(i + 1, len(lines)):  # (no slice: a copy per heading is quadratic)
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


def _note_on_line(line: str, match: re.Match[str]) -> bool:
    """Whether the void word ``match`` on ``line`` is a note about the line
    (in brackets, or after a dash), not the line's whole value."""
    before = line[: match.start()]
    opened = max(before.rfind("("), before.rfind("["))
    if opened >= 0 and before.rfind(")") < opened and before.rfind("]") < opened:
        return bool(line[:opened].strip(" \t-*:"))  # a note beside something else
    dash = max(before.rfind(" - "), before.rfind(" \u2013 "), before.rfind(" \u2014 "))
    return dash >= 0 and bool(line[:dash].strip(" \t-*:")) and (
        not before[dash + 3:].strip())


_EDGE_MARKS = " \t*_:#>+\u2022-"
"""Marks around a line's text or a note's (emphasis, a heading's ``#``, a bullet)."""


def _said_of_line(line: str, match: re.Match[str]) -> bool:
    """Whether the void word ``match`` is said of ``line``'s own text: it
    begins a note in brackets or after a dash (``(cancelled)``, ``—
    withdrawn``), or, outside a note, it begins or ends the line's text
    (``CANCELLED SHIPMENT``, ``ORIGINAL ENTRY IN ERROR``). A note that names
    something else first (``(replaces the cancelled notice below)``,
    ``(earlier notice in error)``) says that the other text is void, not
    this: the line heads the text in force."""
    before = line[: match.start()]
    opened = max(before.rfind("("), before.rfind("["))
    if opened >= 0 and before.rfind(")") < opened and before.rfind("]") < opened:
        return not before[opened + 1:].strip(_EDGE_MARKS)
    dash = max(before.rfind(" - "), before.rfind(" \u2013 "), before.rfind(" \u2014 "))
    if dash >= 0:
        return not before[dash + 3:].strip(_EDGE_MARKS)
    return not before.strip(_EDGE_MARKS) or not line[match.end():].strip(_EDGE_MARKS + ".!")


@functools.lru_cache(maxsize=16)
def void_spans(text: str) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` of each part of ``text`` the document marks as no
    longer in force (see the module docstring), in order, not overlapping."""
    spans: list[tuple[int, int]] = [m.span() for m in _STRUCK.finditer(text)]
    if _VOID.search(text) is not None:
        lines = _lines(text)
        for i, (start, stop) in enumerate(lines):
            line = text[start:stop]
            words = [w for w in _VOID.finditer(line) if _said_of_line(line, w)]
            if not words:
                continue
            after_blank = i == 0 or not text[slice(*lines[i - 1])].strip()
            if _heading(line, after_blank):
                spans.append((start, _block_end(text, lines, i)))
            elif any(_note_on_line(line, w) for w in words):
                spans.append((start, stop))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


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
