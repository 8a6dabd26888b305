"""Records written as brace blocks: a line that names the block and ends in
``{``, its lines, and a lone ``}`` that closes it.

Configuration formats write their records so, one after another, each
opened by a line of its own name: logrotate's stanzas (``/var/log/a.log
{``), nginx's ``location /a {`` and ``server {``, HCL's ``resource "x" "a"
{``, BIND's ``zone "a" {`` (closed by ``};``), dhcpd's ``host a {``, CSS
rules. The name differs from block to block (``agentflow.grounding.
locator_records._reopened`` wants the same opening line), and a block's
last line is a lone ``}``, no key line (``_blank_end`` wants one). A
**braced record** (``braced_end``) is a block opened at the top level (no
block open around it) by a line ending in ``{`` (its name on that line or
on the line above: ``{`` alone) and closed by a line that is a lone ``}``
(``};`` and ``},`` too), where another such block opens after it: the
first record ends with its closing line. Blocks inside it (an nginx
``server``'s ``location`` blocks) are its own, and a blank line inside an
open block ends no record (``open_depths``). A brace written inside a line
(``location / { return 404; }``, roff's ``\\{``, a ``${var}``) opens and
closes nothing here, nor does a JSON document's brace (``agentflow.
grounding.brackets``: its records are an array's items).

A block **opened by a keyword** (``opener_words``: ``server {``,
``resource "aws_instance" "web" {``, ``zone "a.example" {``; never an
attribute's map, ``tags = {``, nor a ``key: {``) has a **kind**: its
keyword, or its keyword and first label (HCL's block type,
``resource "aws_instance"``). ``kind_spans`` gives each block of one kind,
at any depth, from its opening line to its closing ``}``: the records a
field's examples show its value in (``agentflow.grounding.
locator_siblings``: an nginx file's ``server`` blocks after its
``upstream`` ones, the ``aws_instance`` resources among a Terraform file's
other blocks, BIND's ``zone`` blocks after ``options``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentflow.grounding.brackets import is_bracketed

__all__ = ["brace_kinds", "braced_end", "kind_spans", "open_depths", "opener_words", "openers"]

_CLOSER = re.compile(r"[ \t]*\}[ \t]*[;,]?[ \t]*\Z")
"""A line that is a lone ``}`` (``};`` of BIND, ``},``)."""
_OPENER = re.compile(r"[ \t]*([^\W\d][\w.-]*)((?:[ \t]+[^\s{}]+)*?)[ \t]*\{[ \t]*\Z")
"""A line that opens a block by a keyword, its labels after it: ``resource "a" "b" {``."""
_ASSIGNS = ("=", ":")


def _opens(line: str) -> bool:
    """Whether ``line`` ends in a ``{`` that opens a block (never ``\\{``,
    ``${``), and begins by closing none (``} else {``)."""
    text = line.rstrip()
    return text.endswith("{") and text[-2:-1] not in ("\\", "$") and not text.lstrip(
        ).startswith("}")


def open_depths(lines: Sequence[str]) -> list[int]:
    """For each of ``lines``, how many brace blocks are open where it begins
    (a line opening one: those around it; a lone ``}``: those around the
    block it closes)."""
    out: list[int] = []
    depth = 0
    for line in lines:
        if _CLOSER.match(line.rstrip("\r\n")):
            depth = max(depth - 1, 0)
            out.append(depth)
            continue
        out.append(depth)
        if _opens(line):
            depth += 1
    return out


def braced_end(lines: Sequence[str]) -> int | None:
    """The index of the line after the lone ``}`` that closes the first
    block ``lines`` open at the top level, where another block opens at the
    top level after it (a braced record, see the module docstring); else
    ``None``."""
    if is_bracketed(lines):
        return None
    depth = 0
    end = None
    for i, line in enumerate(lines):
        if _CLOSER.match(line.rstrip("\r\n")):
            if depth == 1 and end is None:
                end = i + 1
            depth = max(depth - 1, 0)
        elif _opens(line):
            if not depth and end is not None:
                return end
            depth += 1
    return None


def opener_words(line: str) -> list[str] | None:
    """The keyword (letter case folded) and labels (as written) of ``line``
    where it opens a brace block by a keyword (``location /api {``:
    ``["location", "/api"]``); ``None`` where it does not (``tags = {``, an
    attribute's map; ``} else {``; a path, ``/var/log/a.log {``)."""
    m = _OPENER.match(line.rstrip("\r\n"))
    if m is None:
        return None
    labels = m.group(2).split()
    if labels and labels[-1].endswith(_ASSIGNS):
        return None
    return [m.group(1).casefold(), *labels]


def openers(lines: Sequence[str]) -> list[tuple[int, int, list[str]]]:
    """Each block ``lines`` open by a keyword (``opener_words``): the line
    that names it, the line of its ``{`` (the next one where ``{`` stands
    alone under its name: ``server`` then ``{``), and its words; ``[]`` for
    a JSON document."""
    if is_bracketed(lines):
        return []
    out: list[tuple[int, int, list[str]]] = []
    for i, line in enumerate(lines):
        if (words := opener_words(line)) is not None:
            out.append((i, i, words))
        elif line.strip() == "{" and i and (words := opener_words(
                lines[i - 1].rstrip("\r\n") + " {")) is not None:
            out.append((i - 1, i, words))
    return out


def brace_kinds(lines: Sequence[str]) -> list[str]:
    """The kinds of the blocks ``lines`` open by a keyword (``openers``), in
    order: each block's keyword, and its keyword and first label
    (``server``; ``resource`` and ``resource "aws_instance"``), one word
    apart by a space."""
    out: list[str] = []
    for _, _, words in openers(lines):
        out += [" ".join(words[:n]) for n in (1, 2) if len(words) >= n]
    return list(dict.fromkeys(out))


def kind_spans(lines: Sequence[str], kind: str) -> list[tuple[int, int, str]]:
    """``[start, end)`` line indexes of each block of ``kind`` (``brace_kinds``)
    ``lines`` open, at any depth, from the line that names it to the line
    after its closing ``}`` (the end of ``lines`` where none closes it), and
    the labels its opening line writes past the kind's."""
    want = kind.split(" ")
    out: list[tuple[int, int, str]] = []
    for start, brace, words in openers(lines):
        if words[:len(want)] != want:
            continue
        depth, end = 0, len(lines)
        for j in range(brace, len(lines)):
            if _CLOSER.match(lines[j].rstrip("\r\n")):
                depth -= 1
                if depth <= 0:
                    end = j + 1
                    break
            elif _opens(lines[j]):
                depth += 1
        out.append((start, end, " ".join(words[len(want):])))
    return out
