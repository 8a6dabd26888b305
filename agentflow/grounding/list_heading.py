"""The heading a list is written under: where a locator without a label reads.

A list's items often carry no label of their own (``- Fasting sample``,
``1. Mash the bananas.``): a learned locator that reads them
(``agentflow.grounding.locators``: ``- `` items, or every list item of the
document) would read *every* such list of a document, and a document that
writes another list (``Methods:``, ``Decisions:``) but not the field's own
would hand the field the other list. Where every worked example writes the
field's list right under the same heading line (``Notes:``, ``## Action
items``, ``Ingredients``: the nearest line before the first item that is
not blank), that heading is the list's label (``Locator.heading``), and the
rule reads only the lists written under it.

A heading line's **key** (``heading_key``) is its text less Markdown heading
marks and emphasis and a closing ``:`` or ``=``, letter case folded and
spaces folded; a heading is at most ``MAX_WORDS`` words, the first a word
that begins with a letter (``Notes``, ``Action items``), never a sentence.
So ``Notes:``, ``NOTES`` and ``## Notes`` have the key ``notes``. A
document's heading **names** the list (``names``) when its key is the
list's, word for word, punctuation and a plural ``s`` aside (``Note``,
``Action-items``): a heading with a word more or less is another list
(``Closed issues`` is no ``Open issues``, ``Previous action items`` no
``Action items``, ``Actions`` no ``Action items``).

The list **under** a heading (``sections``) is the run of lines after it: a
list item's line (``agentflow.grounding.items``: a bulleted or numbered
line), a line indented deeper than the first item's marker (an item's
continuation, a nested item), and blank lines between them; the first other
line ends it, and so does a blank line followed by a line that is neither.
"""

from __future__ import annotations

import re

from agentflow.grounding.items import ITEM_LINE, indent_width
from agentflow.grounding.spans import merge_spans

__all__ = ["MAX_WORDS", "heading_key", "heading_of", "key_mentioned", "key_written", "names",
           "sections"]

MAX_WORDS = 4
"""Longest heading (words) a list's label may be."""

_WORDS = rf"[^\W\d][\w'’&/.-]*(?: [\w'’&/.-]+){{0,{MAX_WORDS - 1}}}"
_KEY = re.compile(_WORDS + r"\Z")
_KEY_LINE = re.compile(r"[ \t]*(" + _WORDS + r")[ \t]*[:=]")
_WORD = re.compile(r"[^\W_]+")


def heading_key(line: str) -> str:
    """The key of ``line`` read as a heading (see the module docstring), or
    ``""`` when it reads as none (a list item, a sentence, a ``key: value``
    line, more than ``MAX_WORDS`` words)."""
    if ITEM_LINE.match(line):
        return ""
    body = line.strip().lstrip("#").strip().strip("*_").strip()
    if body[-1:] in (":", "="):
        body = body[:-1].rstrip().strip("*_").rstrip()
    body = " ".join(body.split())
    return body.casefold() if _KEY.match(body) else ""


def _words(key: str) -> list[str]:
    """The words of ``key``, letter case folded, each less a plural ``s``."""
    return [w[:-1] if w.endswith("s") and len(w) > 3 else w
            for w in _WORD.findall(key.casefold())]


def names(found: str, key: str) -> bool:
    """Whether a heading of key ``found`` names the list the examples write
    under the key ``key``: the same words (see the module docstring)."""
    return bool(found) and (found == key or _words(found) == _words(key))


def heading_of(text: str, start: int) -> str:
    """The key of the heading of the list whose first item's line begins at
    offset ``start`` of ``text``: the nearest line before it that is not
    blank (``""``: none, or it reads as no heading)."""
    end = text.rfind("\n", 0, start)  # the end of the line before
    while end >= 0:
        begin = text.rfind("\n", 0, end) + 1
        if text[begin:end].strip():
            return heading_key(text[begin:end])
        end = begin - 1
    return ""


def sections(text: str, key: str) -> list[str]:
    """The lists written under a heading that names ``key`` (``names``), in
    document order: each as the text of its lines (see the module docstring).
    Lists that overlap (a heading written inside another's list) are one
    list, never a line twice."""
    lines = text.split("\n")
    keys = [heading_key(line) if line.strip() else "" for line in lines]
    ends: dict[tuple[int, int], int] = {}  # (line, depth) a list took -> where that list ended
    ranges: list[tuple[int, int]] = []
    for i, found in enumerate(keys):
        if not names(found, key):
            continue
        first, end = _section(lines, i + 1, ends)
        if first < end:
            ranges.append((first, end))
    merged = merge_spans(ranges, touching=False)  # (in order of their first lines)
    return ["\n".join(lines[first:end]).rstrip() for first, end in merged]


def _section(lines: list[str], j: int,
             ends: dict[tuple[int, int], int]) -> tuple[int, int]:
    """The lines ``[first, end)`` of the list that begins at or after line
    ``j`` (after blank lines; ``first == end``: none there). A list that reaches a
    line at the depth an earlier list took it at goes on as that one did
    (``ends``, which this one adds its own lines to): each line is read once
    per depth, never once per heading above it."""
    depth: int | None = None
    first = end = j
    path: list[tuple[int, int]] = []
    while j < len(lines):
        other = lines[j]
        if not other.strip():
            j += 1
            continue
        marked = ITEM_LINE.match(other)
        indent = indent_width(other[: len(other) - len(other.lstrip())])
        if depth is None:
            if marked is None:
                break
            depth = indent_width(marked.group(1))
            first = j
        elif (indent <= depth) if marked is None else (indent_width(marked.group(1)) < depth):
            break  # a line that is no item nor inside one, or an item of an outer list
        if (j, depth) in ends:
            end = max(end, ends[j, depth])
            break
        path.append((j, depth))
        end = j + 1
        j += 1
    for place in path:
        ends[place] = end
    return first, end


def key_mentioned(source: str, key: str, heading: str = "") -> bool:
    """Whether ``source`` writes a field's ``key`` (a learned locator's:
    its label less separators and spaces, ``Requires`` of ``Requires: ``)
    somewhere other than as an empty label or the list's ``heading``.

    The key is found as a whole key, letter case ignored, a run of blanks
    between its words any run of spaces and tabs: a longer key that
    begins or ends with it (``Requires.private``, ``libssl`` for ``Libs``)
    is another key, not a mention. A line whose content is the key with
    nothing after it but separators (``Requires:`` with an empty value) is
    evidence *for* null, not a mention either, nor is a heading that names
    ``heading`` (``### Steps``: where a headed rule reads). Any other place
    (the key in prose, or with a separator the locator does not read,
    ``Requires = x``) is."""
    words = r"[ \t]+".join(re.escape(w) for w in re.split(r"[ \t]+", key))  # ``Subsystem\tsftp``
    whole = re.compile(rf"(?<![\w.\-]){words}(?![\w]|[.\-]\w)", re.IGNORECASE)
    for line in source.splitlines():
        if heading and names(heading_key(line), heading):
            continue
        for match in whole.finditer(line):
            if line[:match.start()].strip() or line[match.end():].strip(" \t:=;,"):
                return True
    return False


def key_written(text: str, key: str) -> bool:
    """Whether ``text`` writes a heading that names ``key`` (``names``), or
    such a key of a ``key: value`` line (the list's label with its items on
    its own line: ``Notes: Routine``)."""
    for line in text.split("\n"):
        if names(heading_key(line), key):
            return True
        match = _KEY_LINE.match(line)
        if match is not None and names(" ".join(match.group(1).split()).casefold(), key):
            return True
    return False
