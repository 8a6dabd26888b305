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
without its continuation lines, never two items at once. The grammar
(``agentflow.output.grammar``) lists the items as the only values of such
fields, and verification (``agentflow.grounding.locate``) refuses any other
span: the same rule on every model.
"""

from __future__ import annotations

import re

__all__ = ["item_at", "item_spans", "items", "outer_item_spans", "outer_items"]

_MARKED = re.compile(
    r"(?P<indent>[^\S\n]*)(?:[-*+•·‣◦]|[0-9]{1,3}[.)])[^\S\n]+(?P<content>[^\s])"
)


def _width(indent: str) -> int:
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
        match = _MARKED.match(text, start, end)
        if match is None:
            continue
        depth = _width(match.group("indent"))
        last = end
        for s, e in lines[i + 1:]:
            line = text[s:e]
            if not line.strip():
                continue  # a blank line: part of the item only if a deeper line follows
            if _width(line[: len(line) - len(line.lstrip())]) <= depth:
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


def outer_item_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each list item of ``text`` that lies inside no
    other item (``item_spans`` less the nested items), in order: the items
    that hold every line of a list between them."""
    out: list[tuple[int, int]] = []
    for start, end in item_spans(text):
        if out and start < out[-1][1]:
            continue  # nested in the last outer item (outer items come first)
        out.append((start, end))
    return out


def outer_items(text: str) -> list[str]:
    """The text of each list item of ``text`` nested in no other, in order
    (``outer_item_spans``)."""
    return [text[s:e] for s, e in outer_item_spans(text)]
