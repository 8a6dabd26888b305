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
    text = "\n".join(lines)
    tokens = list(_TOKEN.finditer(text))
    stack: list[tuple[str, str]] = []  # open containers: bracket, key
    key: str | None = None  # the key just written, where nothing came after it yet
    out: list[tuple[str, ...]] = []
    k = at = 0
    for line in lines:
        begin = at + len(line) - len(line.lstrip())
        at += len(line) + 1
        if not line.strip():
            out.append(out[-1] if out else ())
            continue
        while k < len(tokens) and tokens[k].start() < begin:
            key = _apply(tokens[k], stack, key)
            k += 1
        path = stack
        head = tokens[k] if k < len(tokens) and tokens[k].start() == begin else None
        if head is not None and head.group() in ("}", "]") and stack:
            path = stack[:-1]
        out.append(tuple(name for _, name in reversed(path)))
    return tuple(out)


def _apply(token: re.Match[str], stack: list[tuple[str, str]], key: str | None) -> str | None:
    """``stack`` (the open containers, outermost first) after ``token``, and
    the key a container opened next would be written under."""
    text = token.group()
    if text in ("{", "["):
        name = key if key is not None else ("-" if stack and stack[-1][0] == "[" else "")
        stack.append((text, name))
        return None
    if text in ("}", "]"):
        if stack:
            stack.pop()
        return None
    return token.group(1).casefold() if token.group(2) else None


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
    stack: list[tuple[str, str, int]] = []  # open containers: bracket, key, start line
    key: str | None = None
    out: list[tuple[str, int, int, int]] = []  # path, start, end, the array's start offset
    arrays: list[int] = []
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in ("{", "["):
            row = text.count("\n", 0, token.start())
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
                out.append((path, row, text.count("\n", 0, token.end()) + 1, arrays[-1]))
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
