"""Fenced blocks: the part of a document between two equal fence lines.

Many formats set a block of a document apart between two **fence lines**:
a line that is one punctuation character written three times or more and
nothing else (a Markdown page's YAML front matter between ``---`` lines,
Hugo's TOML front matter between ``+++`` lines, a code block between
```````` lines, which may name a language after the opening one). Inside,
the block may be written in another language than the rest: a key of the
front matter is a page's field, the same key written in a code block of its
body is an example. A learned locator (``agentflow.grounding.locators``)
whose every worked example writes the field inside such a block reads only
inside blocks of that fence (``Locator.fence``): a document that writes its
key outside them gives the rule nothing, never the outside value.

A fenced block opens at a fence line and closes at the next fence line of
the same text (``---`` and ``---``; a fence line of another text inside it
is its content); a block that never closes is none. Its **key**
(``fence_key``) is the fence's text (``---``), ``^`` before it where the
block opens on the text's first line that is not blank (front matter: only
the block the document opens with).
"""

from __future__ import annotations

import functools
import re

__all__ = ["fence_key", "fence_of", "in_fence"]

_FENCE = re.compile(r"([-+=*_~`])\1{2,}")
_INFO = re.compile(r"[\w.+-]*\Z")


def fence_key(line: str) -> str:
    """The fence of ``line`` (``---`` of ``---``, ```````` of ````` ``yaml``),
    ``""`` when ``line`` is no fence line (see the module docstring)."""
    body = line.strip().lstrip("\ufeff")
    match = _FENCE.match(body)
    if match is None or not _INFO.match(body, match.end()):
        return ""
    return match.group(0)


def _blocks(lines: list[str]) -> list[tuple[str, int, int]]:
    """``(key, opening, closing)`` line indexes of each fenced block of
    ``lines``: fence lines at the line's start, a closing one bare (no
    language after it)."""
    out = []
    first = next((i for i, line in enumerate(lines) if line.strip(" \t\r\ufeff")), -1)
    opened: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        fence = fence_key(line) if line[:1] not in " \t" else ""
        if not fence:
            continue
        if opened is None:
            opened = (fence, i)
        elif fence == opened[0] and line.strip() == fence:
            out.append((("^" if opened[1] == first else "") + fence, opened[1], i))
            opened = None
    return out


def fence_of(text: str, at: int) -> str:
    """The key of the fenced block whose inside holds offset ``at`` of
    ``text`` (``^---`` of a front matter's line); ``""`` where none does."""
    row = text.count("\n", 0, at)
    for key, opening, closing in _blocks(text.split("\n")):
        if opening < row < closing:
            return key
    return ""


@functools.lru_cache(maxsize=16)
def in_fence(text: str, key: str) -> str:
    """``text`` with every line outside the fenced blocks of key ``key``
    blanked, each character but a line break replaced by a space (offsets and
    line numbers unchanged), their fence lines kept (read again, the same);
    a ``^`` key only the block the text opens with. A text without such a
    block is all blank."""
    lines = text.split("\n")
    inside: set[int] = set()
    for found, opening, closing in _blocks(lines):
        if found == key:
            inside.update(range(opening, closing + 1))
    return "\n".join(line if i in inside else " " * len(line) for i, line in enumerate(lines))
