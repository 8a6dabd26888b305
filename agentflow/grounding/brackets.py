"""Where a line of a JSON document sits: its open objects and arrays.

A JSON document says what a key belongs to by its braces and brackets, not
by its indentation: ``"name"`` inside ``"assets": [ { ... } ]`` is an
asset's whether the document is indented two spaces a level, four, or not
at all (an API response quoted flush left, a ``package.json`` written by a
tool that does not indent). So for such a document a line's nesting depth
(``agentflow.grounding.depths``) is the number of objects and arrays open
where its content begins, and its parent keys (``agentflow.grounding.
key_paths``) are the keys those containers are written under, nearest first
(``bracket_paths``): ``author`` for ``"author": {``, ``-`` for an object or
array that is an array's item (as YAML's ``- `` list item), ``""`` for one
under no key (the document's own outer ``{``, which ends the chain). A line
that begins by closing a container (``},``) is outside it. Written tidily
(one key a line, each level indented one step deeper) a document has the
same depths by either reading.

Its records are the items of an array (``item_spans``: the objects of a
release's ``"assets": [...]``, of a list endpoint's outer ``[...]``),
whatever the indentation (``agentflow.grounding.sibling_blocks``' ``array``
record kind).

It says a value is empty by writing its key with ``null``, ``[]`` or
``{}`` (``empty_key``): ``"name": null`` says the release has no name,
``"assets": []`` that it has no first asset (``written_empty``: the key of
the value, or of a container the value would be inside, written empty at
its place), as plainly as a label with nothing after it.

A document is **bracketed** (``is_bracketed``) when its first character
that is not whitespace opens an object or an array (``{``; ``[`` alone or
before ``{``, ``[`` or ``"``: never an INI group line, ``[Unit]``), and a later line begins
with a quoted key (``"name":``). Brackets inside strings (``"a[0]"``) open
nothing.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

from agentflow.grounding.lines import row_finder
from agentflow.grounding.open_containers import line_paths

__all__ = ["bracket_paths", "empty_key", "is_bracketed", "item_spans", "written_empty"]

_TOKEN = re.compile(r'"((?:[^"\\\n]|\\.)*)"(\s*:)?|[{}\[\]]')
"""A string (group 1; group 2 where it is a key) or a bracket."""
_OPENS = re.compile(r'[ \t\ufeff]*(?:\{|\[(?:[ \t\r]*\Z|[ \t]*[\[{"]))')
"""A first line that opens an object or an array (never an INI group line, ``[Unit]``)."""
_KEY_LINE = re.compile(r'[ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*:')
_EMPTY = re.compile(r'[ \t]*"((?:[^"\\\n]|\\.)*)"[ \t]*:[ \t]*(?:null|\[[ \t]*\]|\{[ \t]*\})'
                    r"[ \t]*,?[ \t]*\r?\Z")
"""A line that writes a key with nothing: ``"name": null,``, ``"assets": []``."""


def is_bracketed(lines: Sequence[str]) -> bool:
    """Whether ``lines`` are a JSON document (see the module docstring)."""
    body = [line for line in lines if line.strip()]
    return bool(body) and _OPENS.match(body[0]) is not None and any(
        _KEY_LINE.match(line) for line in body[1:])


def bracket_paths(lines: Sequence[str]) -> list[tuple[str, ...]]:
    """For each of ``lines`` of a bracketed document (``is_bracketed``), the
    keys of the containers open where its content begins, nearest first
    (letter case folded; ``-`` an array's item, ``""`` a container under no
    key); a blank line: those of the line before it; a line that begins with
    a closing brace or bracket: those outside the container it closes."""
    return list(_paths(tuple(lines)))


@functools.lru_cache(maxsize=16)
def _paths(lines: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``bracket_paths``, kept: a rule asks it for each line it reads."""
    return line_paths(lines, list(_TOKEN.finditer("\n".join(lines))), _Containers())


class _Containers:
    """A JSON document's open objects and arrays (``open_containers.Opener``)."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []  # open containers, outermost first: bracket, key
        self.key: str | None = None  # the key just written, where nothing came after it yet

    def step(self, token: re.Match[str]) -> None:
        """The open containers after ``token``, and the key a container
        opened next would be written under."""
        text = token.group()
        if text in ("{", "["):
            inside = bool(self.stack) and self.stack[-1][0] == "["
            name = self.key if self.key is not None else ("-" if inside else "")
            self.stack.append((text, name))
            self.key = None
        elif text in ("}", "]"):
            if self.stack:
                self.stack.pop()
            self.key = None
        else:
            self.key = token.group(1).casefold() if token.group(2) else None

    def path(self, head: re.Match[str] | None, at: int) -> tuple[str, ...]:
        """The open containers' keys, nearest first; a line that begins by
        closing one: those outside it (``at``: where the line begins, unused)."""
        path = self.stack
        if head is not None and head.group() in ("}", "]") and path:
            path = path[:-1]
        return tuple(name for _, name in reversed(path))


def item_spans(lines: Sequence[str]) -> list[tuple[str, int, int]]:
    """Each object or array of a bracketed document's ``lines`` that is an
    array's item, written over lines of its own: the path of the array (its
    keys and those of the containers around it, outermost first, joined by
    ``/``: ``assets``, ``releases/-/assets``; ``""`` for the document's own
    outer array), the line the item opens on and the line after the one it
    closes on; in document order. Every item of an array whose items share
    a line (``}, {``, or written on one line) is none: lines cannot tell
    them apart."""
    return list(_items(tuple(line.rstrip("\r\n") for line in lines)))


@functools.lru_cache(maxsize=16)
def _items(lines: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
    """``item_spans``, kept: a rule asks it for each record kind it tries."""
    text = "\n".join(lines)
    row_of = row_finder(text)
    stack: list[tuple[str, str, int]] = []  # open containers: bracket, key, start line
    key: str | None = None
    out: list[tuple[str, int, int, int]] = []  # path, start, end, the array's start offset
    arrays: list[int] = []
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in ("{", "["):
            row = row_of(token.start())
            inside = bool(stack) and stack[-1][0] == "["
            name = key if key is not None else ("-" if inside else "")
            stack.append((bracket, name, row))
            arrays.append(token.start() if bracket == "[" else -1)
            key = None
        elif bracket in ("}", "]"):
            if not stack:
                continue
            _, _, row = stack.pop()
            arrays.pop()
            if stack and stack[-1][0] == "[":
                path = "/".join(name for _, name, _ in stack)
                out.append((path, row, row_of(token.end()) + 1, arrays[-1]))
            key = None
        else:
            key = token.group(1).casefold() if token.group(2) else None
    by_array: dict[int, list[tuple[int, int]]] = {}
    for _, start, end, array in out:
        by_array.setdefault(array, []).append((start, end))
    apart = {array for array, spans in by_array.items()
             if all(a[1] <= b[0] for a, b in itertools.pairwise(spans))}
    return tuple(sorted(((path.lstrip("/"), start, end) for path, start, end, array in out
                         if array in apart), key=lambda span: span[1]))


def empty_key(line: str) -> str | None:
    """The key ``line`` writes with ``null``, ``[]`` or ``{}`` alone
    (letter case folded), or ``None``."""
    m = _EMPTY.match(line)
    return m.group(1).casefold() if m else None


def written_empty(lines: Sequence[str], chain: Sequence[str], depth: int) -> bool:
    """Whether a bracketed document's ``lines`` write a value's key, or the
    key of a container it would be inside, empty (``empty_key``) at its
    place: ``chain`` the value's key and its parent keys, nearest first
    (``-``: an array's item), ``depth`` the value's depth; its key at
    ``depth`` under the rest of the chain, a parent's one level up for each
    link (``"assets": []`` for an asset's ``name`` at depth 3 under ``-``
    under ``assets``)."""
    paths = bracket_paths(lines)
    for line, path in zip(lines, paths, strict=True):
        key = empty_key(line)
        if key is None:
            continue
        parents = tuple(itertools.takewhile(bool, path))
        for j, name in enumerate(chain):
            if name == key and len(path) == depth - j and (
                    parents[:len(chain) - j - 1] == tuple(chain[j + 1:])):
                return True
    return False
