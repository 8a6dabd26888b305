"""How deep an HTML page nests, found by a linear scan before any parser sees it.

    html_depth("<div><div><p>x</div></div>")    # 2 (p ends implicitly: not counted)
    check_html_depth(page, name="page.html")    # raises past MAX_HTML_DEPTH

Why: Lexbor (the HTML parser, ``agentflow.documents.html``) does work
proportional to the depth of its open-element stack for each block element it
opens (the HTML Standard's "has a ``p`` element in button scope" check walks the
stack), so a hostile page of 100,000 nested ``<div>`` takes minutes to parse
(170 s measured; ``benchmarks/RESULTS.md``) while a flat page of
the same size takes milliseconds. Real pages nest a few dozen levels; browsers
stop nesting at 512 (Chromium's ``kMaximumHTMLParserDOMTreeDepth``), so a page
deeper than ``MAX_HTML_DEPTH`` is refused with a ``DocumentTooComplexError``
record instead of hanging the batch.

The scan is an upper estimate of the depth the parser reaches, in one pass of a
regular expression with no backtracking across tags: an open tag adds one, its
end tag takes one away. Not counted: void elements (``<br>``, ``<img>``...),
elements whose end tag is optional and which the parser closes by itself
(``<p>``, ``<li>``, ``<td>``, ``<option>``...), self-closing tags inside
``<svg>`` and ``<math>``, and the content of comments and raw-text elements
(``<script>``, ``<style>``, ``<textarea>``, ``<title>``...), which holds no tags.
A page with fewer ``<`` than the cap is not scanned at all.
"""

from __future__ import annotations

import re

from agentflow.errors import DocumentTooComplexError

__all__ = ["MAX_HTML_DEPTH", "check_html_depth", "html_depth"]

MAX_HTML_DEPTH = 1024
"""Deepest element nesting read (the scan's estimate); deeper is a
``DocumentTooComplexError``. Twice the depth at which Chromium's parser stops
nesting (512), so a page any browser shows as nested is read; a page nested
right at the cap reads at about 1 MB/s (``benchmarks/RESULTS.md``)."""

_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
    "param", "source", "track", "wbr", "basefont", "bgsound", "frame", "image",
})
"""Elements that never have content (the HTML Standard's void elements, plus the
legacy ones its parser treats alike)."""

_IMPLIED_END = frozenset({
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot",
    "colgroup", "caption", "rb", "rt", "rp", "rtc", "html", "head", "body",
})
"""Elements whose end tag may be left out: the parser closes them when a sibling
or their parent's end comes, so an unclosed run of them does not nest."""

_FOREIGN = frozenset({"svg", "math"})

_TOKEN = re.compile(
    r"<!--.*?(?:-->|\Z)"                                     # a comment
    r"|<(script|style|textarea|title|xmp|iframe|noembed|noframes|noscript)\b[^<>]*>"
    r".*?(?:</\1\s*>|\Z)"                                    # raw text: no tags inside
    r"|<plaintext\b.*"                                       # the rest is text
    r"|<(/?)([A-Za-z][^\s/<>]*)[^<>]*?(/?)>",                # a start or end tag
    re.S | re.I,
)


def html_depth(html: str, *, stop_at: int | None = None) -> int:
    """The scan's estimate of the deepest element nesting in ``html`` (see the
    module docstring); with ``stop_at``, the scan ends as soon as the depth
    passes it (the result is then ``stop_at + 1``)."""
    depth = deepest = 0
    foreign: list[int] = []  # depths at which an <svg>/<math> was opened
    for match in _TOKEN.finditer(html):
        name = match.group(3)
        if name is None:
            continue  # a comment or raw text
        name = name.lower()
        if match.group(2):  # an end tag
            if name in _VOID or name in _IMPLIED_END:
                continue
            depth = max(0, depth - 1)
            if foreign and depth < foreign[-1]:
                foreign.pop()
            continue
        if name in _VOID or name in _IMPLIED_END or (foreign and match.group(4)):
            continue
        if name in _FOREIGN:
            foreign.append(depth + 1)
        depth += 1
        if depth > deepest:
            deepest = depth
            if stop_at is not None and deepest > stop_at:
                return deepest
    return deepest


def check_html_depth(html: str, *, name: str = "", limit: int = MAX_HTML_DEPTH) -> None:
    """Raise when ``html`` nests deeper than ``limit`` (by ``html_depth``).

    Raises:
        DocumentTooComplexError: the page nests deeper than ``limit``; ``.depth``
            is the depth the scan reached (``limit + 1`` when it stopped early).
    """
    if html.count("<") <= limit:
        return
    depth = html_depth(html, stop_at=limit)
    if depth > limit:
        label = name or "HTML page"
        raise DocumentTooComplexError(
            f"{label}: HTML nested more than {limit} elements deep", path=name, depth=depth,
            reason=f"its elements nest more than {limit} levels deep (real pages nest a few "
                   "dozen; browsers stop at 512); parsing it would take minutes, so it is "
                   "not read. Flatten the markup, or pass its text as a .txt file")
