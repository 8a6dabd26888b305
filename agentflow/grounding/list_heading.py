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
list's, or when the two share a word of at least ``STEM_MIN`` letters, a
plural ``s`` aside (``Actions`` names ``Action items``, ``Features`` names
``Key features``; ``Methods`` does not name ``Notes``). Where a document
writes the list's key itself (a heading ``Notes:``, or a line ``Notes:
none``), only that heading names it: ``Internal notes`` or ``Driver notes``
beside it is another list.

The list **under** a heading (``sections``) is the run of lines after it: a
list item's line (``agentflow.grounding.items``: a bulleted or numbered
line), a line indented deeper than the first item's marker (an item's
continuation, a nested item), and blank lines between them; the first other
line ends it, and so does a blank line followed by a line that is neither.
"""

from __future__ import annotations

import re

__all__ = ["MAX_WORDS", "STEM_MIN", "heading_key", "heading_of", "key_written", "names",
           "sections"]

MAX_WORDS = 4
"""Longest heading (words) a list's label may be."""
STEM_MIN = 4
"""Shortest word (letters, a plural ``s`` aside) two headings may share to name one list."""

_MARKED = re.compile(r"([^\S\n]*)(?:[-*+•·‣◦]|[0-9]{1,3}[.)])[^\S\n]+\S")
_WORDS = rf"[^\W\d][\w'’&/.-]*(?: [\w'’&/.-]+){{0,{MAX_WORDS - 1}}}"
_KEY = re.compile(_WORDS + r"\Z")
_KEY_LINE = re.compile(r"[ \t]*(" + _WORDS + r")[ \t]*[:=]")


def _width(indent: str) -> int:
    return len(indent.expandtabs(8))


def heading_key(line: str) -> str:
    """The key of ``line`` read as a heading (see the module docstring), or
    ``""`` when it reads as none (a list item, a sentence, a ``key: value``
    line, more than ``MAX_WORDS`` words)."""
    if _MARKED.match(line):
        return ""
    body = line.strip().lstrip("#").strip().strip("*_").strip()
    if body[-1:] in (":", "="):
        body = body[:-1].rstrip().strip("*_").rstrip()
    body = " ".join(body.split())
    return body.casefold() if _KEY.match(body) else ""


def _stems(key: str) -> set[str]:
    words = (w.strip("'’&/.-") for w in key.split())
    stems = {w[:-1] if w.endswith("s") and len(w) > STEM_MIN else w for w in words}
    return {w for w in stems if len(w) >= STEM_MIN and w.isalpha()}


def names(found: str, key: str) -> bool:
    """Whether a heading of key ``found`` names the list the examples write
    under the key ``key`` (see the module docstring)."""
    return bool(found) and (found == key or bool(_stems(found) & _stems(key)))


def heading_of(text: str, start: int) -> str:
    """The key of the heading of the list whose first item's line begins at
    offset ``start`` of ``text``: the nearest line before it that is not
    blank (``""``: none, or it reads as no heading)."""
    before = text[:start].split("\n")[:-1]
    for line in reversed(before):
        if line.strip():
            return heading_key(line)
    return ""


def sections(text: str, key: str) -> list[str]:
    """The lists written under a heading that names ``key`` (``names``), in
    document order: each as the text of its lines (see the module docstring).
    Lists that overlap (a heading written inside another's list) are one
    list, never a line twice."""
    lines = text.split("\n")
    keys = [heading_key(line) if line.strip() else "" for line in lines]
    own = key in keys or any(_line_key(line) == key for line in lines)
    ends: dict[tuple[int, int], int] = {}  # (line, depth) a list took -> where that list ended
    ranges: list[tuple[int, int]] = []
    for i, found in enumerate(keys):
        if not (found == key if own else names(found, key)):
            continue  # (where the document writes the key itself, only it names the list)
        first, end = _section(lines, i + 1, ends)
        if first < end:
            ranges.append((first, end))
    merged: list[tuple[int, int]] = []
    for first, end in ranges:  # (in order of their first lines)
        if merged and first < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((first, end))
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
        marked = _MARKED.match(other)
        indent = _width(other[: len(other) - len(other.lstrip())])
        if depth is None:
            if marked is None:
                break
            depth = _width(marked.group(1))
            first = j
        elif (indent <= depth) if marked is None else (_width(marked.group(1)) < depth):
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


def key_written(text: str, key: str) -> bool:
    """Whether ``text`` writes a heading that names ``key`` (``names``), or
    such a key of a ``key: value`` line (the list's label with its items on
    its own line: ``Notes: Routine``)."""
    return any(names(heading_key(line), key) or names(_line_key(line), key)
               for line in text.split("\n"))


def _line_key(line: str) -> str:
    """The key of a ``key: value`` line (``notes`` of ``Notes: none``), or ``""``."""
    match = _KEY_LINE.match(line)
    return " ".join(match.group(1).split()).casefold() if match is not None else ""
