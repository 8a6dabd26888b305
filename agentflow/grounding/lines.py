"""Lines of a source text: the units a ``Grounded(whole_lines=True)`` value
may not cut.

A line's **content** is the line less its leading whitespace, a list marker
that follows it (``*``, ``-``, ``+``, ``•``, ``·``, ``‣``, ``◦``, or a number
of up to three digits with ``.`` or ``)``, each followed by whitespace), and
its trailing whitespace. A line with no content (blank, or a marker alone)
has none. A **whole-line** value starts where a line's content starts and
ends where a line's content ends (the same line's or a later one's), so it
holds one or more whole lines and what lies between them: the newlines,
indentation and markers of the lines inside it. So in::

      * Fix the build with GCC 14.
        Thanks to Jane.
      * Update the watch file.

``Fix the build with GCC 14.``, ``Thanks to Jane.`` and ``Fix the build
with GCC 14.\\n    Thanks to Jane.`` are whole lines; ``Fix the build`` and
``* Update the watch file.`` are not. A line that starts with ``--`` or
``**`` has no marker (``-- Jane <j@x.org>`` is its content).

The grammar (``agentflow.output.grammar``) splits a source into contents
and the gaps between them for such fields, and verification
(``agentflow.grounding.locate``) refuses a match that cuts a line: the same
rule on every model.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable

from agentflow.grounding.quotes import QUOTES, past_escaped, past_quote

__all__ = [
    "KEY_LINE",
    "arguments_after",
    "continuation",
    "continuation_to_key",
    "cuts_line",
    "indent_of",
    "key_column",
    "line_arguments",
    "line_around",
    "line_at",
    "line_pieces",
    "line_spans",
    "paragraph_continuation",
    "row_finder",
    "unfolded_to",
    "word_after",
]

_LINE = re.compile(
    r"[^\S\n]*"  # indentation
    r"(?:(?:[-*+•·‣◦]|[0-9]{1,3}[.)])(?=[^\S\n])[^\S\n]*)?"  # a list marker
    r"(?P<content>[^\n]*?)"
    r"[^\S\n]*(?:\n|\Z)"
)


def row_finder(text: str) -> Callable[[int], int]:
    """A function giving the line (0-based) of an offset of ``text``, as
    ``text.count("\\n", 0, at)`` does, in ``O(log n)`` a call after one pass
    over ``text``: a scan that asks it for each of a document's tokens stays
    linear in the document's size (counting from the start each time was
    quadratic: minutes for a feed of a few MB)."""
    breaks = [m.start() for m in re.finditer("\n", text)]
    return functools.partial(bisect.bisect_left, breaks)


def line_around(text: str, at: int) -> tuple[int, int]:
    """``[start, end)`` of the line of ``text`` that holds offset ``at``: from
    after the ``\n`` before it to its line ending, which is not part of the
    line (``\n``, or ``\r\n`` as Windows files and e-mail write it), so a
    ``line`` rule's ``$`` matches at the end of the line's text either way."""
    lo = text.rfind("\n", 0, at) + 1
    hi = text.find("\n", at)
    hi = len(text) if hi < 0 else hi
    return lo, hi - 1 if hi > lo and text[hi - 1] == "\r" else hi


def line_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each line's content in ``text`` (see the module
    docstring), in order; lines without content have none."""
    spans = []
    pos = 0
    while pos < len(text):
        match = _LINE.match(text, pos)
        assert match is not None  # every position starts a (possibly empty) line
        start, end = match.span("content")
        if end > start:
            spans.append((start, end))
        if match.end() == pos:  # pragma: no cover - an empty match only at the end
            break
        pos = match.end()
    return spans


def line_pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` as alternating gaps and contents: ``(piece, is_content)``,
    no piece empty; ``"".join`` of the pieces is ``text``. Every content
    piece begins and ends with a character that is not whitespace."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for start, end in line_spans(text):
        if start > pos:
            out.append((text[pos:start], False))
        out.append((text[start:end], True))
        pos = end
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def cuts_line(text: str, start: int, end: int) -> bool:
    """Whether ``[start, end)`` of ``text`` does not begin where a line's
    content begins and end where a line's content ends."""
    spans = line_spans(text)
    return not (any(s == start for s, _ in spans) and any(e == end for _, e in spans))


def line_at(text: str, start: int, end: int) -> str:
    """The content of the line around ``start`` if the span does not begin a
    line's content, else of the line around ``end``; for error messages."""
    spans = line_spans(text)
    if not any(s == start for s, _ in spans):
        at = start
    elif not any(e == end for _, e in spans):
        at = max(end - 1, start)
    else:
        return text[start:end]
    for s, e in spans:
        if s <= at < e or at < s:
            return text[s:e]
    return text[start:end]


def indent_of(line: str) -> int:
    """The width of ``line``'s leading whitespace (a tab to the next multiple
    of 8 columns, as terminals and RFC 822 readers count it)."""
    body = line.lstrip(" \t")
    return len(line[: len(line) - len(body)].expandtabs(8))


def continuation(lines: list[str], i: int) -> list[str]:
    """The **continuation lines** of ``lines[i]``: the lines right after it
    that are not blank and are indented deeper than it, up to the first that
    is not (RFC 822 / deb822 headers, DEP-5 fields, e-mail headers and YAML
    block scalars continue a long value so; a blank line ends it, as it ends
    a deb822 paragraph). ``[]`` when the next line is not indented deeper."""
    depth = indent_of(lines[i])
    out = []
    for j in range(i + 1, len(lines)):  # (no slice: a copy of the rest per line is quadratic)
        line = lines[j]
        if not line.strip() or indent_of(line) <= depth:
            break
        out.append(line)
    return out


_KEY_START = re.compile(r"[^\W\d][\w.-]*[ \t]*[:=]")


def key_column(line: str) -> int:
    """The column where ``line``'s first word begins (tabs to multiples of 8):
    its key's column, past a list marker (``uses`` of ``  - uses: x`` is at
    column 4); the line's width when it writes no word."""
    match = re.search(r"\w", line)
    return len((line if match is None else line[:match.start()]).expandtabs(8))


def continuation_to_key(lines: list[str], i: int) -> list[str]:
    """``continuation(lines, i)`` up to the first line that begins with a key
    (``name:``, ``name =``) at or left of the column of ``lines[i]``'s own
    first word (``key_column``): a sibling key of the same mapping, not a
    part of the value (YAML ``- uses: x`` / ``  with:`` under it: ``with``
    is the list item's next key, as ``uses`` is; a folded RFC 822 header's
    continuation lines are all right of its key's column, so it keeps
    them all)."""
    column = key_column(lines[i])
    out = continuation(lines, i)
    for n, line in enumerate(out):
        if indent_of(line) <= column and _KEY_START.match(line.strip()):
            return out[:n]
    return out

_FIRST_WORD = re.compile(r"\s*(\w+(?:[.-]\w+)*)")
_MARKED = re.compile(r"[^\S\n]*(?:[-*+•·‣◦]|[0-9]{1,3}[.)])[^\S\n]")  # a list marker (_LINE's)


def word_after(text: str, at: int) -> str:
    """The word (after whitespace, a whole token: runs of word characters
    joined by ``-`` or ``.``) that ``text`` writes at offset ``at``, letter case
    folded; ``""`` where none does (the word a learned right context is
    followed by: ``see`` of ``, see LICENSE.``; ``bookworm-backports`` is not
    ``bookworm``, nor ``MIT-0`` ``MIT``)."""
    match = _FIRST_WORD.match(text, at)
    return match.group(1).casefold() if match is not None else ""


def unfolded_to(lines: list[str], i: int, start: int, end: str, *, word: str = "",
                quoted: bool = False) -> str | None:
    """The text of ``lines[i]`` from offset ``start`` up to ``end`` where
    ``end`` is on its continuation lines (``continuation``), read as one line
    with them, as RFC 822 unfolds a header (``From: A Long Name`` / ``
    <a@x.org>``: ``A Long Name``, up to `` <``); a space of ``end`` matches
    any whitespace there (a line break and the next line's indentation).
    Only up to a continuation line that begins with a key or a list marker
    (``name: x`` / ``- y``: a nested field or list, not a folded value).
    ``word``: only an ``end`` this word follows, whole, letter case ignored
    (``agentflow.grounding.locator_places.right_end``); ``quoted``: ``end``
    is looked for past a quoted string the value begins with
    (``agentflow.grounding.quotes.past_quote``); an ``end`` that begins with
    a quote the value escapes is not its end. ``None`` where ``end`` is
    on neither (or on ``lines[i]`` itself)."""
    more = []
    for line in continuation(lines, i):
        if _KEY_START.match(line.strip()) or _MARKED.match(line):
            break
        more.append(line)
    if not more:
        return None
    line = lines[i]
    text = "\n".join([line, *more])
    pattern = "".join(r"\s+" if not p.strip() else re.escape(p)
                      for p in re.split(r"(\s+)", end) if p)
    for match in re.compile(pattern).finditer(text, past_quote(text, start) if quoted else start):
        if end[:1] in QUOTES and past_escaped(text, match.start(), start) != match.start():
            continue  # a quote the value escapes (``\\"``, ``""``): the value's own
        if not word or word_after(text, match.end()) == word:
            return text[start:match.start()] if match.end() > len(line) else None
    return None


KEY_LINE = re.compile(r"^[ \t]*([^\W\d][\w.-]*(?: [\w.-]+){0,3})[ \t]*[:=]", re.MULTILINE)
"""A line that begins with a key of one to four words (``Shipped:``, ``Apply
by:``, ``ExecStart=``); group 1 is the key. ``MULTILINE``: ``finditer`` over
a text finds each such line."""


def paragraph_continuation(lines: list[str], i: int) -> list[str]:
    """The lines right after ``lines[i]`` that go on with its paragraph of
    text: up to the first that is blank, begins with neither a letter nor a
    digit (markup such as a roff request ``.SH``, a comment ``#``, a section
    ``[x]``, a list marker), or begins with a key (``Name:``, ``Key=``). A
    value that the examples show wrapping onto a plain next line (``name \\-
    a summary that\nwraps``) runs on so. ``[]`` when the next line does not."""
    out = []
    for j in range(i + 1, len(lines)):
        line = lines[j]
        body = line.strip()
        if not body or not body[0].isalnum() or _KEY_START.match(body):
            break
        out.append(line)
    return out


_ARGUMENT = re.compile(r'"([^"\n]*)"|(\S+)')


def line_arguments(line: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each argument of ``line``, in order: a run of
    non-whitespace characters, or the text between two double quotes (the
    quotes not part of it), as shell lines, roff requests (``.TH NAME "1"
    "May 2023" "pkg 1.0"``) and many command and record formats write
    arguments. A quote that does not close is part of a plain argument."""
    return [m.span(1) if m.group(1) is not None else m.span(2)
            for m in _ARGUMENT.finditer(line)]


_PROTOCOL_VERSION = re.compile(r"(?<![\w/])([^\W\d][\w+-]*/)\d+(?:\.\d+)*(?![\w.])")
"""A product or protocol token's version (``HTTP/1.1``, ``SIP/2.0``,
``Mozilla/5.0``): group 1 the name and its ``/``."""


def _versions_aside(text: str) -> str:
    """``text`` with each product or protocol token's version written ``#``
    (``HTTP/#`` of ``HTTP/1.1`` and of ``HTTP/2``): the same token whatever
    version a document writes."""
    return _PROTOCOL_VERSION.sub(r"\1#", text)


def arguments_after(line: str, head: str) -> list[tuple[int, int]] | None:
    """The arguments of ``line`` (``line_arguments``) after its first ones,
    where those spell ``head`` (joined by one space: ``.TH``; ``We recommend
    that you upgrade your``), a product or protocol token's version aside
    (``_versions_aside``: ``HTTP/2 200`` and ``HTTP/1.0 301`` begin with
    ``HTTP/1.1``, as a status line of any version), else ``None``."""
    args = line_arguments(line)
    head = _versions_aside(head)
    words: list[str] = []
    for k, span in enumerate(args):
        words.append(line[slice(*span)])
        joined = _versions_aside(" ".join(words))
        if joined == head:
            return args[k + 1:]
        if not head.startswith(joined + " "):
            return None
    return None
