"""An HTML page reduced to the text a reader sees.

    html_to_text(b'<meta charset="windows-1251"><title>Cчёт</title><p>Итого:&nbsp;5</p>')
    # 'Cчёт\\n\\nИтого: 5'

The page is parsed by Lexbor (through ``selectolax``, the ``html`` extra:
``pip install 'agentflow[html]'``), a parser that builds the tree the HTML
Standard prescribes, as browsers do: unclosed ``<p>`` and ``<li>``,
misnested tags, entities (``&amp;``, ``&eacute;``, ``&#8364;``) and stray
``<`` all come out as a browser shows them. Nothing is stripped with regular
expressions. The text follows the rules of the DOM's ``innerText``, which is
what a reader copies off the page:

* dropped: ``<script>``, ``<style>``, ``<noscript>``, ``<template>``,
  ``<head>`` except ``<title>``, comments, form controls' hidden values, and
  elements marked ``hidden`` or ``style="display: none"``;
* the ``<title>`` is the first line (a page's title often names the thing
  extracted);
* block elements (``<div>``, ``<li>``, ``<tr>``, ``<section>``...) start and
  end a line; ``<p>`` and headings are paragraphs (a blank line around);
  ``<br>`` is a line break; table cells are separated by a tab;
* whitespace runs collapse to one space and lines carry no leading or
  trailing spaces, except inside ``<pre>``, ``<textarea>`` and ``<listing>``,
  whose text is kept as written; a no-break space is a space.

Depth: a page nested deeper than ``MAX_HTML_DEPTH`` (1024) elements is refused
with a ``DocumentTooComplexError`` before Lexbor parses it (its parse time grows
with the square of the depth: ``agentflow.documents.nesting``), and so is a page
with an element of more than ``MAX_HTML_ATTRIBUTES`` (1024) attributes (the
same growth: ``agentflow.documents.attributes``).

Encoding (bytes in): a byte-order mark, else a ``<meta charset>`` or
``<meta http-equiv="Content-Type" content="...; charset=...">`` in the first
1024 bytes (the HTML Standard's prescan), else UTF-8 when the bytes are valid
UTF-8, else what ``charset-normalizer`` finds (legacy pages without a
declaration); every step strict, an unknown or lying declaration overruled
and logged, bytes nothing reads a ``DocumentEncodingError``: the order of
``agentflow.documents.encoding``, never replacement characters.

Why Lexbor (selectolax) rather than lxml or BeautifulSoup with html5lib:
lxml parses with libxml2's HTML 4 parser, whose trees differ from a
browser's on misnested and unclosed markup; html5lib builds the standard
tree but in pure Python, about 50 times slower; Lexbor builds the standard
tree in C, ships as a self-contained wheel with type stubs, and does the
standard's encoding prescan. (benchmarks/bench_documents.py measures it.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from agentflow.documents.attributes import check_html_attributes
from agentflow.documents.encoding import codec_for_label, decode_bytes
from agentflow.documents.nesting import check_html_depth
from agentflow.errors import DocumentError

__all__ = ["html_to_text"]

_INSTALL = "install the 'html' extra: pip install 'agentflow[html]'"

_SKIP = frozenset({
    "script", "style", "noscript", "template", "head", "meta", "link", "base", "input", "select",
    "button", "img", "svg", "math", "iframe", "object", "embed", "audio", "video", "canvas",
    "map", "area", "datalist", "param", "source", "track", "frameset", "frame",
})
"""Elements whose content is not text a reader sees (``head`` is walked only for its title)."""

_PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6"})
"""Elements set off by a blank line (``innerText``'s two required line breaks for ``p``;
headings too, so a heading stays apart from its section)."""

_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "header", "hgroup", "hr", "legend", "li", "main", "menu", "nav", "ol", "optgroup", "option",
    "search", "section", "summary", "table", "tbody", "tfoot", "thead", "title", "tr", "ul",
    "html",
})
"""Elements that start and end a line (CSS ``display: block``, ``list-item``,
``table-row``... in the HTML Standard's user-agent style sheet)."""

_CELLS = frozenset({"td", "th"})
_PREFORMATTED = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})
_SPACES = re.compile(r"[ \t\n\r\f\xa0]+")
"""Whitespace CSS collapses (ASCII whitespace), plus the no-break space, made a space."""


class _Text:
    """The text being built: inline pieces, pending line breaks, collapsed spaces
    (``innerText``'s "required line break count" items, resolved as they come)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.breaks = 0          # required line breaks before the next text
        self.space = False       # a collapsed space before the next text
        self.line_start = True   # nothing yet on the current line

    def _flush(self) -> None:
        if self.breaks and self.parts:
            self.parts.append("\n" * self.breaks)
            self.line_start = True
        self.breaks = 0

    def inline(self, text: str) -> None:
        collapsed = _SPACES.sub(" ", text)
        if not collapsed:
            return
        if collapsed[0] == " ":
            self.space = True
        body = collapsed.strip(" ")
        if body:
            self._flush()
            if self.space and not self.line_start:
                self.parts.append(" ")
            self.parts.append(body)
            self.line_start = False
            self.space = collapsed[-1] == " "

    def verbatim(self, text: str) -> None:
        if not text:
            return
        self._flush()
        if self.space and not self.line_start:
            self.parts.append(" ")
        self.parts.append(text.replace("\xa0", " "))
        self.line_start = text.endswith("\n")
        self.space = False

    def line_break(self) -> None:
        """``<br>``: a line break that does not collapse with others."""
        self._flush()
        self.parts.append("\n")
        self.line_start = True
        self.space = False

    def tab(self) -> None:
        self._flush()
        self.parts.append("\t")
        self.line_start = False
        self.space = False

    def block(self, count: int) -> None:
        self.breaks = max(self.breaks, count)
        self.space = False

    def result(self) -> str:
        return "".join(self.parts)


def _hidden(node: Any) -> bool:
    attrs = node.attributes
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    return bool(style) and "display:none" in "".join(str(style).lower().split())


def _walk(root: Any, out: _Text, hidden: frozenset[int]) -> None:
    """Every node under ``root`` into ``out``, depth first, without recursion (a page
    nested 100,000 deep must not overflow the stack); elements whose ``mem_id`` is
    in ``hidden`` are left out with their content."""
    stack: list[Iterator[Any] | Callable[[], None]] = [root.iter(include_text=True)]
    pre = 0  # depth of preformatted elements around the current node
    cell_in_row: list[int] = []

    def leave_pre() -> None:
        nonlocal pre
        pre -= 1
        out.block(1)

    def leave_row() -> None:
        cell_in_row.pop()
        out.block(1)

    while stack:
        top = stack[-1]
        if callable(top):
            stack.pop()
            top()
            continue
        node = next(top, None)
        if node is None:
            stack.pop()
            continue
        tag = node.tag
        if tag == "-text":
            text = node.text_content or ""
            if pre:
                out.verbatim(text)
            else:
                out.inline(text)
            continue
        if not isinstance(tag, str) or tag.startswith("-") or tag in _SKIP or (
                hidden and node.mem_id in hidden):
            continue  # comments, doctype, and what a reader does not see
        if tag == "br":
            out.line_break()
            continue
        if tag in _CELLS:
            if cell_in_row and cell_in_row[-1]:
                out.tab()
            if cell_in_row:
                cell_in_row[-1] += 1
            stack.append(node.iter(include_text=True))
            continue
        if tag == "tr":
            out.block(1)
            cell_in_row.append(0)
            stack.append(leave_row)
            stack.append(node.iter(include_text=True))
            continue
        if tag in _PREFORMATTED:
            out.block(1)
            pre += 1
            stack.append(leave_pre)
            stack.append(node.iter(include_text=True))
            continue
        count = 2 if tag in _PARAGRAPHS else 1 if tag in _BLOCKS else 0
        if count:
            out.block(count)
            stack.append(functools.partial(out.block, count))
        stack.append(node.iter(include_text=True))


_CHARSET = re.compile(r"charset\s*=\s*[\"']?\s*([^\"';\s]+)", re.I)


def _declared_charset(raw: bytes, parser: Any) -> str | None:
    """The encoding label a ``<meta charset>`` or ``<meta http-equiv="Content-Type"
    content="...; charset=...">`` in the first 1024 bytes declares (read by the
    parser on the bytes as Latin-1, which keeps ASCII markup intact), or ``None``.
    As the Standard's prescan, a label that names no encoding
    (``codec_for_label``: ``utf-7``...) is passed over for a later ``<meta>``'s;
    with none known, the first label is given (for the reader to log it)."""
    head = parser(raw[:1024].decode("latin-1"), scripting=True)
    first: str | None = None
    for meta in head.css("meta"):
        attrs = meta.attributes
        label = str(attrs.get("charset") or "") or None
        if label is None and str(attrs.get("http-equiv") or "").lower() == "content-type":
            found = _CHARSET.search(str(attrs.get("content") or ""))
            label = found.group(1) if found else None
        if label is not None:
            if codec_for_label(label) is not None:
                return label
            first = first or label
    return first


def _markup(html: str | bytes) -> str:
    """``html`` as a string good enough to scan for tags: bytes in UTF-16 (by
    their BOM) decoded, any other bytes read as Latin-1 (markup is ASCII in
    every encoding a page may declare, except UTF-16)."""
    if isinstance(html, str):
        return html
    if html.startswith((b"\xff\xfe", b"\xfe\xff")):
        return html.decode("utf-16", errors="replace")
    return html.decode("latin-1")


def _parse(html: str | bytes, name: str = "") -> Any:
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:
        raise DocumentError("reading HTML needs selectolax",
                            reason=f"selectolax is not installed; {_INSTALL}") from None
    markup = _markup(html)
    check_html_depth(markup, name=name)
    check_html_attributes(markup, name=name)
    if isinstance(html, bytes):
        declared = None if html.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) else (
            _declared_charset(html, LexborHTMLParser))
        html = decode_bytes(html, name=name, declared=declared).text
    try:
        return LexborHTMLParser(html, scripting=True)
    except Exception as exc:  # SelectolaxError: Lexbor's parse fails only when it cannot allocate
        raise MemoryError(f"{name}: the HTML parser ran out of memory ({exc})") from None


def html_to_text(html: str | bytes, *, name: str = "") -> str:
    """The text of the HTML page ``html`` (``bytes``: decoded as the module
    docstring says), as a reader sees it: see the module docstring. ``name``
    (the file's) names it in errors.

    Raises:
        DocumentTooComplexError: the page nests deeper than
            ``agentflow.documents.nesting.MAX_HTML_DEPTH``, or an element carries
            more than ``agentflow.documents.attributes.MAX_HTML_ATTRIBUTES``
            (refused before parsing: Lexbor's parse time grows with the square
            of either).
        DocumentEncodingError: bytes that no encoding in the documented order
            decodes (``agentflow.documents.encoding``).
        DocumentError: selectolax (the ``html`` extra) is not installed.
        MemoryError: the page needs more memory than there is (or than the work
            budget's ``memory_bytes``, ``agentflow.documents.budget``, allows).
    """
    tree = _parse(html, name)
    out = _Text()
    head = tree.head
    title = head.css_first("title") if head is not None else None
    if title is not None:
        out.inline(title.text(deep=True))
        out.block(2)
    root = tree.body or tree.root
    if root is not None:  # hidden elements found by Lexbor's selector engine, not per node
        hidden = frozenset(node.mem_id for node in root.css("[hidden], [style*=display i]")
                           if _hidden(node))
        _walk(root, out, hidden)
    return out.result()
