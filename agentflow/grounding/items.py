"""List items of a source text: the values a ``Grounded(whole_items=True)``
value may take.

An **item** is an entry of a bulleted or numbered list: a line whose content
follows a list marker (``*``, ``-``, ``+``, ``•``, ``·``, ``‣``, ``◦``, or a
number of up to three digits with ``.`` or ``)``, each followed by
whitespace; the markers of ``agentflow.grounding.lines``), together with
its **continuation lines**: the lines after it that are indented deeper than
its marker, blank lines between them included, nested items included. The
item's text runs from its content's first character to the last
non-whitespace character of its last continuation line. So in::

      * Fix the build with GCC 14.
        Thanks to Jane.
        + Also on arm64.
      * Update the watch file.
     -- Jane <j@x.org>

the items are ``Fix the build with GCC 14.\\n    Thanks to Jane.\\n    +
Also on arm64.``, ``Also on arm64.`` (a nested item is an item too) and
``Update the watch file.``. A line at the marker's own indentation or less
ends the item (``-- Jane`` and a ``[ Jane ]`` line at the same indentation
are not part of it); so does the end of the text. A line that starts with
``--`` or ``**`` has no marker. Lazy continuation lines (not indented deeper
than the marker) are not part of an item. Tabs count as advancing to the
next multiple of 8 columns.

A whole-item value is exactly one item: never the first line of an item
without its continuation lines, never two items at once; an item that holds
nested items may also be taken as its **own text** (``own_item_spans``: its
lines up to the first nested item), the nested items then being values of
their own. The grammar
(``agentflow.output.grammar``) lists the items as the only values of such
fields, and verification (``agentflow.grounding.locate``) refuses any other
span: the same rule on every model.
"""

from __future__ import annotations

import re

__all__ = ["ITEM_LINE", "indent_width", "item_at", "item_spans", "items", "own_item_spans",
           "own_items"]

ITEM_LINE = re.compile(
    r"(?P<indent>[^\S\n]*)(?:[-*+•·‣◦]|[0-9]{1,3}[.)])[^\S\n]+(?P<content>[^\s])"
)
"""A list item's line (``match`` it at a line's start): its indentation
(group ``indent``, also group 1), a bullet or a number marker, and the first
character of its text (``content``)."""


def indent_width(indent: str) -> int:
    """Columns of leading whitespace (tabs to the next multiple of 8)."""
    return len(indent.expandtabs(8))


def item_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each list item of ``text`` (see the module
    docstring), in the order their marker lines occur; an outer item comes
    before the items nested in it."""
    lines: list[tuple[int, int]] = []  # [start, end) of each line, newline excluded
    pos = 0
    while True:
        end = text.find("\n", pos)
        if end < 0:
            lines.append((pos, len(text)))
            break
        lines.append((pos, end))
        pos = end + 1
    spans: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(lines):
        match = ITEM_LINE.match(text, start, end)
        if match is None:
            continue
        depth = indent_width(match.group("indent"))
        last = end
        for j in range(i + 1, len(lines)):  # (no slice: a copy of the rest per item is quadratic)
            s, e = lines[j]
            line = text[s:e]
            if not line.strip():
                continue  # a blank line: part of the item only if a deeper line follows
            if indent_width(line[: len(line) - len(line.lstrip())]) <= depth:
                break
            last = e
        stop = last
        while stop > start and text[stop - 1].isspace():
            stop -= 1
        spans.append((match.start("content"), stop))
    return spans


def items(text: str) -> list[str]:
    """The text of each list item of ``text``, in order (see ``item_spans``)."""
    return [text[s:e] for s, e in item_spans(text)]


def item_at(text: str, start: int, end: int) -> str | None:
    """The first item that ``[start, end)`` overlaps, or ``None``; for error
    messages ("... is not a whole item, the item is ...")."""
    for s, e in item_spans(text):
        if s < end and start < e:
            return text[s:e]
    return None



def own_item_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each list item's **own text**, in the order of
    ``item_spans``: an item without nested items whole; an item that holds
    nested items up to the end of its last non-blank line before the first
    of them (its marker line and its own continuation lines). Each line of
    a list belongs to one own text at most: ``Fix the build.`` and
    ``Also on arm64.`` of the module docstring's example, never the two at
    once. Verification takes an own text as a whole item (a nested list's
    items are then values of their own)."""
    spans = item_spans(text)
    out: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(spans):
        if i + 1 < len(spans) and start < spans[i + 1][0] < end:  # the first nested item
            end = text.rfind("\n", start, spans[i + 1][0])
            while end > start and text[end - 1].isspace():
                end -= 1
        out.append((start, end))
    return out


def own_items(text: str) -> list[str]:
    """The own text of each list item of ``text``, in order (``own_item_spans``)."""
    return [text[s:e] for s, e in own_item_spans(text)]
