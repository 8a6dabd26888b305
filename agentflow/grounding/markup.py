"""Where a line of a tag-structured document sits: its open elements.

A document written in markup (XML: a Maven ``pom.xml``, a ``.csproj``, an
``AndroidManifest.xml``, an RSS feed, a property list; HTML) says what a
line belongs to by its tags, not by its indentation: ``<groupId>`` inside
``<parent>`` ... ``</parent>`` is the parent's whether or not the parent's
children are indented deeper than the project's (a pom pasted with its
``<project>`` children flush left and its ``<parent>`` children indented
reads the other way round by indentation). So for such a document a line's
nesting depth (``agentflow.grounding.depths``) is the number of elements
open where its content begins, and its parent keys (``agentflow.grounding.
key_paths``) are those elements, nearest first, each written ``<name>``
(``element_paths``). A line that begins by closing an element
(``</parent>``) is outside it.

A document is **markup** (``is_markup``) when its first line that is not
blank begins with a tag, an XML declaration, a comment or a doctype
(``<project``, ``<?xml``, ``<!--``, ``<!DOCTYPE``), at least half its
lines that are not blank begin with ``<`` or inside a tag written over
lines (an Android manifest's ``<application`` with an attribute a line; not
a Markdown page that opens with an HTML comment or a centred logo), and it
closes some element (``</x>`` or ``<x/>``). Comments, CDATA sections,
processing instructions and declarations open nothing; an empty element
(``<x .../>``) holds only its own tag's lines (an ``<activity`` written
over lines up to ``/>``: its attribute lines are inside it, as those of a
start tag written over lines are); a closing tag closes the nearest open
element of its name and every element opened inside it that is still open
(markup that does not close them), and one of no open element's name is
ignored. In an HTML document (its root ``<html>`` or an HTML doctype) the
void elements (``<br>``, ``<meta>``, ``<img>``...) open nothing.

A markup document writes its records as elements (``element_spans``): an
RSS feed's ``<item>``s, an Atom feed's ``<entry>``s, a pom's
``<dependency>``s, each from its start tag to its end tag, or an empty
element (an Android manifest's ``<uses-permission .../>``s, a ``.csproj``'s
``<PackageReference .../>``s, NuGet's ``<package .../>``s) from its tag's
first line to its last, whatever the blank lines or indentation around
them (``agentflow.grounding.sibling_blocks``' ``element`` record kind).
Its comments (``<!-- <item> ... </item> -->``) are no part of the
document's content, as an XML parser drops them: a rule never reads an
element written inside one (``uncommented``, ``agentflow.grounding.
locator_reading``). What an element holds (``element_children``: its
child elements' names, and the text each child that holds no element
holds) is read from its tags, whatever its lines: a child written on its
parent's line (``<version>1</version><packaging>jar</packaging>``) is one.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Sequence

from agentflow.grounding.lines import row_finder
from agentflow.grounding.open_containers import MAX_DEPTH, line_paths
from agentflow.grounding.token_scans import Marks, Walks

__all__ = ["element_children", "element_paths", "element_spans", "is_markup", "tag_attributes",
           "uncommented"]

_START = re.compile(r"[ \t\ufeff]*<[?!A-Za-z_]")
"""The first line of a markup document: a tag, declaration, comment, doctype."""
_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
    r"|<(?P<close>/?)(?P<name>[A-Za-z_][\w.:-]*)(?P<rest>(?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S)
"""One markup token: a comment, CDATA, processing instruction, declaration, or
an element's start or end tag (``name``; ``close`` for an end tag; ``rest``
ending in ``/`` for an empty element); found by ``_tokens``."""
_NAME = re.compile(r"</?[A-Za-z_][\w.:-]*")
_TAG_LINE = re.compile(r"[ \t\ufeff]*<(?P<name>[A-Za-z_][\w.:-]*)"
                       r"(?P<rest>(?:[^>\"'\n]|\"[^\"\n]*\"|'[^'\n]*')*)")
"""A line whose content begins with a start tag: its name, its attributes on the line."""
_ATTRIBUTE = re.compile(r"(?<![ \t])[ \t]+([A-Za-z_][\w.:-]*[ \t]*=[ \t]*)"
                        r"(\"[^\"]*\"|'[^']*'|[^\s\"'>/]+)")
"""An attribute of a start tag: its name and ``=`` (group 1), its value (its
spaces from the first: never tried again from each space of a long run)."""
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_CLOSES = re.compile(r"</[A-Za-z_]|/>")
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "param", "source", "track", "wbr"})
"""HTML's void elements: no end tag, nothing inside (HTML documents only)."""
_HTML = re.compile(r"<!doctype\s+html|<html[\s>]", re.I)


def is_markup(lines: Sequence[str]) -> bool:
    """Whether ``lines`` are a markup document (see the module docstring)."""
    body = [line.lstrip(" \t\ufeff") for line in lines if line.strip()]
    if not body or not _START.match(body[0]) or not any(_CLOSES.search(line) for line in body):
        return False
    tagged = sum(line[:1] == "<" for line in body)
    return (2 * tagged >= len(body) or 2 * (tagged + _attribute_lines(tuple(lines))) >= len(body)
            ) and not _too_deep(tuple(lines))


@functools.lru_cache(maxsize=16)
def _too_deep(lines: tuple[str, ...]) -> bool:
    """Whether more than ``open_containers.MAX_DEPTH`` elements of ``lines``
    are open at once (the walk stops there: linear in the text)."""
    text = "\n".join(lines)
    elements = _Elements(bool(_HTML.search(text[:2000])))
    for token in _tokens(text):
        elements.step(token)
        if len(elements.stack) > MAX_DEPTH:
            return True
    return False


@functools.lru_cache(maxsize=16)
def _attribute_lines(lines: tuple[str, ...]) -> int:
    """How many of ``lines`` that are not blank begin inside a tag written
    over lines (an ``<application`` with an attribute a line)."""
    text = "\n".join(lines)
    row_of = row_finder(text)
    count = 0
    for token in _tokens(text):
        if token.group("name") is None or token.group("close"):
            continue
        first, last = row_of(token.start()), row_of(token.end())
        count += sum(1 for line in lines[first + 1:last + 1] if line.strip())
    return count


def _tokens(text: str) -> Iterator[re.Match[str]]:
    """``_TOKEN.finditer(text)``, in time linear in ``text``
    (``agentflow.grounding.token_scans``): an opener without its closer
    (``<x`` and no ``>``, ``<!--`` and no ``-->``) is one bisection, not a
    scan to the end of the text."""
    comment, cdata = Marks(text, r"(?=-->)"), Marks(text, r"(?=\]\]>)")
    instruction, gt = Marks(text, r"(?=\?>)"), Marks(text, ">")
    quotes = {'"': Marks(text, '"'), "'": Marks(text, "'")}

    def step(place: int) -> tuple[bool, int]:  # a tag's scan at a ``>`` or a quote
        if text[place] == ">":
            return True, place + 1
        closer = quotes[text[place]].after(place + 1)
        return closer < 0, closer + 1 if closer >= 0 else -1

    tag = Walks(Marks(text, "[>\"']"), step)
    at = 0
    while (start := text.find("<", at)) >= 0:
        end = _token_end(text, start, comment, cdata, instruction, gt, tag)
        token = _TOKEN.match(text, start, end) if end > 0 else None
        if token is None:
            at = start + 1
            continue
        yield token
        at = token.end()


def _token_end(text: str, start: int, comment: Marks, cdata: Marks, instruction: Marks,
               gt: Marks, tag: Walks) -> int:
    """Where ``_TOKEN``'s match at ``start`` (a ``<``) ends, trying its
    alternatives in its order; ``-1``: none matches there."""
    closers = ((comment, "<!--", 3), (cdata, "<![CDATA[", 3), (instruction, "<?", 2), (gt, "<!", 1))
    for marks, opener, width in closers:
        if text.startswith(opener, start):
            closer = marks.after(start + len(opener))
            if closer >= 0:
                return closer + width
    name = _NAME.match(text, start)
    return tag.end(name.end()) if name is not None else -1


def element_paths(lines: Sequence[str]) -> list[tuple[str, ...]]:
    """For each of ``lines`` of a markup document (``is_markup``), the
    elements open where its content begins, nearest first, each ``<name>``
    as written (a blank line: those of the line before it); a line that
    begins with an end tag: those outside the element it closes."""
    return list(_paths(tuple(lines)))


@functools.lru_cache(maxsize=16)
def _paths(lines: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``element_paths``, kept: a rule asks it for each line it reads."""
    text = "\n".join(lines)
    html = bool(_HTML.search(text[:2000]))
    return line_paths(lines, list(_tokens(text)), _Elements(html))


class _Elements:
    """A markup document's open elements (``open_containers.Opener``)."""

    def __init__(self, html: bool) -> None:
        self.stack: list[str] = []  # open elements, outermost first
        self.html = html  # an HTML document: its void elements open nothing
        self.empty: tuple[str, int] | None = None  # the last token, an empty element: name, end

    def step(self, token: re.Match[str]) -> None:
        """The open elements after ``token``."""
        self.empty = None
        name = token.group("name")
        if name is None:
            return  # a comment, CDATA, processing instruction or declaration
        if token.group("close"):
            if name in self.stack:
                del self.stack[len(self.stack) - 1 - self.stack[::-1].index(name):]
            return
        if _empty(token):
            self.empty = (name, token.end())
            return
        if self.html and name.casefold() in _VOID:
            return
        self.stack.append(name)

    def path(self, head: re.Match[str] | None, at: int) -> tuple[str, ...]:
        """The open elements, nearest first, each ``<name>``, where a line's
        content begins at offset ``at``; a line that begins with an end tag:
        those outside the element it closes; a line inside an empty
        element's tag (``<activity`` ... ``/>`` over lines): inside it too,
        as inside an element's start tag."""
        path = self.stack
        if head is not None and head.group("close") and head.group("name") in path:
            path = path[:len(path) - 1 - path[::-1].index(head.group("name"))]
        if self.empty is not None and self.empty[1] > at:
            path = [*path, self.empty[0]]
        return tuple(f"<{name}>" for name in reversed(path))


def _empty(token: re.Match[str]) -> bool:
    """Whether ``token`` (a start tag) is an empty element's: ``<x .../>``."""
    return token.group("rest").rstrip().endswith("/")


def element_spans(lines: Sequence[str]) -> list[tuple[str, int, int]]:
    """Each element of a markup document's ``lines`` (``is_markup``) written
    over lines of its own: its path (``rss/channel/item``: its own name after
    those of the elements it is inside, outermost first), the line its start
    tag is on and the line after the one its end tag is on (an empty
    element's, ``<x .../>``: after its tag's last line); in the order of
    their start tags. An element never closed is none, and so is every
    element of a path where one is closed on a line another of that path
    begins on (``</item><item>``: lines cannot tell them apart)."""
    return list(_spans(tuple(line.rstrip("\r\n") for line in lines)))


@functools.lru_cache(maxsize=16)
def _spans(lines: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
    """``element_spans``, kept: a rule asks it for each record kind it tries."""
    text = "\n".join(lines)
    row_of = row_finder(text)
    html = bool(_HTML.search(text[:2000]))
    stack: list[tuple[str, int]] = []  # open elements: name, start line
    out: list[tuple[str, int, int]] = []
    for token in _tokens(text):
        name = token.group("name")
        if name is None:
            continue
        row = row_of(token.start())
        if token.group("close"):
            names = [n for n, _ in stack]
            if name in names:
                at = len(names) - 1 - names[::-1].index(name)
                path = "/".join([*names[:at], name])
                out.append((path, stack[at][1], row_of(token.end()) + 1))
                del stack[at:]
            continue
        if _empty(token):  # ``<x .../>``: an element from its tag's first line to its last
            out.append(("/".join([*(n for n, _ in stack), name]), row, row_of(token.end()) + 1))
            continue
        if html and name.casefold() in _VOID:
            continue
        stack.append((name, row))
    out.sort(key=lambda span: span[1])
    by_path: dict[str, list[tuple[int, int]]] = {}
    for path, start, end in out:
        by_path.setdefault(path, []).append((start, end))
    apart = {path for path, spans in by_path.items()
             if all(a[1] <= b[0] for a, b in itertools.pairwise(spans))}
    return tuple(span for span in out if span[0] in apart)


def tag_attributes(line: str, name: str, label: str) -> list[int]:
    """Where ``line``, whose content begins with a start tag of element
    ``name`` (``<activity android:name=".Splash" android:theme="@style/S"
    />``, or the first line of one written over lines), writes an attribute
    as ``label`` (its name, ``=`` and opening quote: ``android:name="``)
    begins it: the offset after ``label``, one per attribute; ``[]`` where
    it does not (another element's tag, ``label`` no attribute's)."""
    tag = _TAG_LINE.match(line)
    if tag is None or tag.group("name") != name:
        return []
    return [m.start(1) + len(label) for m in _ATTRIBUTE.finditer(line, tag.start("rest"),
                                                                tag.end("rest"))
            if line.startswith(label, m.start(1)) and m.start(1) + len(label) <= m.end()]


def uncommented(text: str) -> str:
    """``text`` with each comment blanked (``<!-- ... -->``, one never closed
    to the end; every character but a line break a space: offsets and lines
    unchanged) where it is a markup document (``is_markup``); else
    ``text``."""
    if "<!--" not in text or not is_markup(text.splitlines()):
        return text
    return _COMMENT.sub(lambda m: re.sub(r"[^\r\n]", " ", m.group()), text)



def element_children(text: str, parents: Sequence[str], depth: int
                     ) -> list[list[tuple[str, str]]] | None:
    """For each element of ``text`` (a markup document, ``is_markup``; its
    comments no part of it) that is open, with the elements around it, as
    ``depth`` elements where a child of it begins, and whose path (itself,
    then the elements around it, nearest first, each ``<name>``) begins with
    ``parents``: what it holds, in order: each child element's name (as
    written) and the text the child holds where it holds no element (else
    ``""``), and its own text between its children as ``("", text)``;
    ``None`` where such an element is never closed (a long document's chunk
    cut inside it: what it holds is not all there)."""
    html = bool(_HTML.search(text[:2000]))
    frames: list[tuple[str, bool, list[tuple[str, str]], list[str]]] = []
    # (name, matched, children, own text) of each open element, outermost first
    out: list[list[tuple[str, str]]] = []
    path: list[str] = []

    def close(n: int) -> None:  # the innermost ``n`` open elements end
        for _ in range(n):
            name, matched, children, own = frames.pop()
            path.pop()
            held = "".join(own)
            if matched:
                out.append([*children, ("", held)])
            if frames:
                frames[-1][2].append((name, "" if any(c for c, _ in children) else held))

    at = 0
    for token in _tokens(text):
        if frames:
            frames[-1][3].append(text[at:token.start()])
        at = token.end()
        name = token.group("name")
        if name is None:
            if frames and token.group().startswith("<![CDATA["):
                frames[-1][3].append(token.group()[9:-3])
            continue
        if token.group("close"):
            if name in path:
                close(path[::-1].index(name) + 1)
            continue
        if _empty(token) or (html and name.casefold() in _VOID):
            if frames:
                frames[-1][2].append((name, ""))
            continue
        chain = (f"<{name}>", *(f"<{n}>" for n in reversed(path)))
        frames.append((name, len(chain) == depth and chain[:len(parents)] == tuple(parents),
                       [], []))
        path.append(name)
    if any(matched for _, matched, _, _ in frames):
        return None
    return out
