"""Nesting depth: how many lines a line is indented under.

Formats that nest by indentation (YAML mappings and lists, JSON objects
written one key a line, RFC 822 continuation lines) write a key
at one depth where it is the document's own and deeper where it belongs to
something else: a CITATION.cff's top-level ``version:`` is the software's,
``    version:`` under ``references:`` another work's. A line's **depth**
(``line_depths``) is the number of lines that enclose it: the chain of
nearest earlier lines each indented less than the one after it (``agentflow.
grounding.lines.indent_of``), blank lines skipped. It reads indentation
relative to the document, never absolute: a document indented as a whole
has its outermost lines at depth 0. An INI-style group line (``agentflow.
grounding.groups``: ``[project]``, ``[submodule "x"]``) encloses nothing:
it begins a group at depth 0, and the group's keys are at depth 0 however
it indents them (a TOML or git config group's keys, indented or not, are
its own; the group itself is ``Locator.group``'s). A markup document (XML,
HTML: ``agentflow.grounding.markup``) nests by its tags: a line's depth is
the number of elements open where it begins, whatever its indentation (a
pom's ``<parent>`` children are deeper than its ``<project>`` children
even where only the former are indented); a JSON document by its braces and
brackets (``agentflow.grounding.brackets``: an API response quoted flush
left). A learned locator whose every worked
example writes its label at one depth reads its label at that depth where
the document writes it there (``Locator.depth``).
"""

from __future__ import annotations

from agentflow.grounding.brackets import bracket_paths, is_bracketed
from agentflow.grounding.groups import group_key
from agentflow.grounding.lines import indent_of
from agentflow.grounding.markup import element_paths, is_markup

__all__ = ["depth_at", "line_depths"]


def line_depths(lines: list[str]) -> list[int]:
    """The depth of each of ``lines`` (see the module docstring); a blank
    line's is that of the line before it (``0`` at the top), a group line's
    ``0``; in a markup document, the elements open where it begins; in a
    JSON document, the objects and arrays open where it begins."""
    if is_markup(lines):
        return [len(path) for path in element_paths(lines)]
    if is_bracketed(lines):
        return [len(path) for path in bracket_paths(lines)]
    out = []
    stack: list[int] = []  # indentation of the lines enclosing the current one
    for line in lines:
        if not line.strip():
            out.append(len(stack) - 1 if stack else 0)
            continue
        if line[:1] == "[" and group_key(line):
            out.append(0)
            stack = []  # a group line: its keys are at depth 0, however indented
            continue
        width = indent_of(line)
        while stack and stack[-1] >= width:
            stack.pop()
        out.append(len(stack))
        stack.append(width)
    return out


def depth_at(text: str, at: int) -> int:
    """The depth of the line of ``text`` that offset ``at`` lies on."""
    lines = text.split("\n")
    return line_depths(lines)[text.count("\n", 0, at)]
