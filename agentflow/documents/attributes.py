"""How many attributes an HTML element carries, found before any parser sees it.

    check_html_attributes(page, name="page.html")   # raises past MAX_HTML_ATTRIBUTES

Why: Lexbor (the HTML parser, ``agentflow.documents.html``) checks each new
attribute of an element against those it already holds, so its parse time
grows with the square of one element's attribute count: 20,000 attributes on
one ``<div>`` (150 KB) take 1 s, 40,000 take 6 s, and a megabyte of them would
take an hour (the work budget's CPU limit would stop it after a minute of a
worker). Real elements carry a few dozen; a page whose element carries more
than ``MAX_HTML_ATTRIBUTES`` is refused with a ``DocumentTooComplexError``
record (``limit`` ``"attributes"``) instead.

The scan is cheap: an attribute takes at least two characters (a space and a
name), so only a start tag longer than twice the cap is looked into, found by
one regular expression over the page; in it, attributes are counted as the
HTML Standard's tokenizer splits them (a name, then ``=`` and a value, quoted
or not). A page shorter than twice the cap is not scanned at all. The scan
is linear: a tag ends it at its first ``<`` or ``>``, so a ``>`` quoted in a
value ends it early (an under-count: such a page is left to the work
budget's CPU limit, ``agentflow.documents.budget``).
"""

from __future__ import annotations

import functools
import re

from agentflow.errors import DocumentTooComplexError

__all__ = ["MAX_HTML_ATTRIBUTES", "check_html_attributes", "most_attributes"]

MAX_HTML_ATTRIBUTES = 1024
"""Most attributes read on one element; more is a ``DocumentTooComplexError``.
At the cap, Lexbor parses an element in about 4 ms."""

_ATTRIBUTE = re.compile(r"""[^\s/>"'=][^\s/>=]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]*))?""")


@functools.lru_cache(maxsize=8)
def _long_tag(limit: int) -> re.Pattern[str]:
    """A start tag long enough to hold more than ``limit`` attributes."""
    return re.compile(r"<[A-Za-z][^\s/<>]*([^<>]{" + str(2 * limit) + r",})>")


def most_attributes(html: str, *, limit: int = MAX_HTML_ATTRIBUTES) -> int:
    """The most attributes the scan finds on one element of ``html``, counting
    only tags long enough to hold more than ``limit`` (0 when none is)."""
    if len(html) <= 2 * limit:
        return 0
    return max((len(_ATTRIBUTE.findall(match.group(1)))
                for match in _long_tag(limit).finditer(html)), default=0)


def check_html_attributes(html: str, *, name: str = "",
                          limit: int = MAX_HTML_ATTRIBUTES) -> None:
    """Raise when an element of ``html`` carries more than ``limit`` attributes.

    Raises:
        DocumentTooComplexError: ``limit`` ``"attributes"``; ``measured`` is the
            count the scan found.
    """
    count = most_attributes(html, limit=limit)
    if count > limit:
        label = name or "HTML page"
        raise DocumentTooComplexError(
            f"{label}: an HTML element with {count:,} attributes (limit {limit:,})",
            path=name, limit="attributes", measured=count, cap=limit,
            reason=f"one of its elements carries {count:,} attributes (real elements carry a "
                   "few dozen); parsing it would take time growing with the square of that, "
                   "so it is not read. Check the file, or pass its text as a .txt file")
