"""Where a nested key sits: the keys of the lines above it, and the document
of a ``---`` stream it is written in.

A key's nesting depth (``agentflow.grounding.depths``) does not say what it
belongs to: ``url`` at depth 2 of a package.json is ``repository.url`` or
``bugs.url``; ``namespace:`` at depth 1 of a Kubernetes stream is the
Deployment's or a later Service's. Two things say it:

* its **parent keys** (``parent_keys``): the keys of the lines that enclose
  its line (the chain ``line_depths`` counts), nearest first, as far as each
  is a key (``"repository": {``, ``metadata:``, YAML's ``- `` list item as
  ``-``; a line that is no key, JSON's opening ``{``, ends the chain); in a
  markup document, the elements open around it, whatever the indentation
  (``<parent>``, ``<project>``: ``agentflow.grounding.markup``); in a JSON
  document, the keys of the objects and arrays open around it, an array's
  item as ``-`` (``agentflow.grounding.brackets``), whatever the
  indentation;
* its **document** of a stream of several ``---`` documents (``agentflow.
  grounding.sibling_blocks``' ``doc`` records), told by the keys it writes
  (``document_keys``): of the keys every example's document of the value
  writes, those no other document of the examples writes
  (``learn_document``: ``replicas``, ``template``, ``containers`` of the
  Deployment beside a Service), and a document's own is the first that
  writes the most of them (``marked_document``), wherever it stands in the
  stream (the examples pick it by what it holds, not by its place).

``agentflow.grounding.locator_parts`` learns both for a rule read after a
label, where every example agrees, and ``agentflow.grounding.
locator_reading`` reads (and pins) the label only there.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from agentflow.grounding.brackets import bracket_paths, is_bracketed
from agentflow.grounding.groups import group_key
from agentflow.grounding.lines import indent_of
from agentflow.grounding.markup import element_paths, is_markup
from agentflow.grounding.sibling_blocks import record_spans

__all__ = ["common_start", "document_keys", "in_document", "learn_document", "line_key",
           "marked_document", "parent_keys"]

_KEY = re.compile(r"[ \t]*[\"']?([^\W\d][\w.-]*)[\"']?[ \t]*[:=]")
"""A line that begins with a key, bare or quoted (``name:``, ``"url": "``, ``Name=``)."""
_ITEM = re.compile(r"[ \t]*-(?:[ \t]|\Z)")
"""A YAML list item's line (``- name: web``, ``-`` alone)."""
_ITEM_KEY = re.compile(r"[ \t]*(?:-[ \t]+)?[\"']?([^\W\d][\w.-]*)[\"']?[ \t]*[:=]")
"""A key, also a list item's first (``- containerPort: 80``): a key a document writes."""


def line_key(line: str) -> str:
    """The key ``line`` opens with as a parent (letter case folded): ``-``
    for a list item, ``""`` for a line that is no key (``{``, prose)."""
    if _ITEM.match(line):
        return "-"
    m = _KEY.match(line)
    return m.group(1).casefold() if m else ""


def parent_keys(lines: Sequence[str], row: int) -> tuple[str, ...]:
    """The keys (``line_key``) of the lines enclosing ``lines[row]``, nearest
    first, up to the first that is no key: each the nearest earlier line
    indented less than the one after it, blank lines skipped (``agentflow.
    grounding.depths``); an INI-style group line ends the chain (its keys are
    at depth 0). In a markup document: the elements open where it begins
    (``agentflow.grounding.markup.element_paths``: ``<parent>``, ``<project>``).
    In a JSON document: the keys of the containers open where it begins, up
    to one under no key (``agentflow.grounding.brackets.bracket_paths``)."""
    if is_markup(lines):
        return element_paths(lines)[row]
    if is_bracketed(lines):
        return tuple(itertools.takewhile(bool, bracket_paths(lines)[row]))
    out: list[str] = []
    width = indent_of(lines[row])
    for j in range(row - 1, -1, -1):
        if width == 0:
            break
        line = lines[j]
        if not line.strip():
            continue
        if line[:1] == "[" and group_key(line):
            break
        if indent_of(line) < width:
            key = line_key(line)
            if not key:
                break
            out.append(key)
            width = indent_of(line)
    return tuple(out)


def common_start(chains: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest chain every one of ``chains`` begins with."""
    if not chains:
        return ()
    out: list[str] = []
    for keys in zip(*chains, strict=False):
        if len(set(keys)) != 1:
            break
        out.append(keys[0])
    return tuple(out)


def document_keys(lines: Sequence[str]) -> set[str]:
    """The keys ``lines`` write (``_ITEM_KEY``, letter case folded)."""
    return {m.group(1).casefold() for line in lines if (m := _ITEM_KEY.match(line))}


def _documents(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The ``[start, end)`` lines of each document of a stream of several."""
    spans = [(a, b) for a, b, _ in record_spans(lines, "doc")]
    return spans if len(spans) > 1 else []


def learn_document(texts: Sequence[tuple[str, int]], key: str) -> tuple[str, ...]:
    """The keys that tell the document the examples write a value in (see the
    module docstring) from ``texts`` (each example's text and the offset of
    its value), less the value's own ``key``: ``()`` unless some example is a
    stream of several documents and each such example's document of the
    value is the one they mark (``marked_document``)."""
    own: list[set[str]] = []
    other: set[str] = set()
    places: list[tuple[list[str], int]] = []
    for text, at in texts:
        lines = text.split("\n")
        row = text.count("\n", 0, at)
        docs = _documents(lines)
        if not docs:
            own.append(document_keys(lines))
            continue
        for a, b in docs:
            if a <= row < b:
                own.append(document_keys(lines[a:b]))
                places.append((lines, a))
            else:
                other |= document_keys(lines[a:b])
    if not places or len(own) != len(texts):
        return ()
    marks = tuple(sorted(set.intersection(*own) - other - {key.casefold()}))
    if not marks or any((marked_document(lines, marks) or (-1,))[0] != a for lines, a in places):
        return ()
    return marks


def marked_document(lines: Sequence[str], marks: Sequence[str]) -> tuple[int, int] | None:
    """The ``[start, end)`` lines of the document of ``lines`` (a stream of
    several) that writes the most of the keys ``marks``, the first of them;
    ``None`` for a text of one document, or where none writes any."""
    best: tuple[int, tuple[int, int]] | None = None
    wanted = set(marks)
    for a, b in _documents(lines):
        count = len(document_keys(lines[a:b]) & wanted)
        if count and (best is None or count > best[0]):
            best = (count, (a, b))
    return best[1] if best else None


def in_document(text: str, span: tuple[int, int]) -> str:
    """``text`` with every line outside the lines ``span`` blanked (each
    character but a line break a space: offsets and lines unchanged)."""
    lines = text.split("\n")
    return "\n".join(line if span[0] <= i < span[1] else " " * len(line)
                     for i, line in enumerate(lines))
