"""Values a document writes escaped: what the user means is the parser's text.

A format that escapes its text writes a value otherwise than it is: XML
writes ``Salt & Pepper`` as ``Salt &amp; Pepper`` and a link's
``?p=412&lang=en`` as ``?p=412&amp;lang=en`` (entity and character
references, ``&#8217;``); JSON, YAML and TOML double-quoted strings write
``Say "hi"`` as ``Say \\"hi\\"`` and ``Café`` as ``Caf\\u00e9``. What the
user means is the text a parser gives. So in a markup document
(``agentflow.grounding.markup.is_markup``) and a JSON one (``agentflow.
grounding.brackets.is_bracketed``):

* a learned locator (``agentflow.grounding.locators``) reads a value with
  its escapes read (``read_escaped``), and the grammar offers that;
* grounding finds such a value where the document writes it escaped
  (``unescaped``: the source with its escapes read, each character mapped
  to the source span it comes from; the last step of "verbatim",
  ``agentflow.grounding.locate``).

Elsewhere (a YAML or TOML double-quoted string, whose format no reader
here tells), a value a rule reads with an escape in it is never pinned
(``written_escaped``: ``agentflow.extraction.confidence`` scores it as if
the field had no rule). A CDATA section is no escape but a wrapper
(``unwrap_cdata``): ``<![CDATA[Croissants & Coffee]]>`` holds
``Croissants & Coffee`` as written, so a rule reads the value out of it, as
out of quotes, and reads no escape inside it.
"""

from __future__ import annotations

import functools
import html
import re

from agentflow.grounding.brackets import is_bracketed
from agentflow.grounding.markup import is_markup

__all__ = ["read_escaped", "unescaped", "unwrap_cdata", "written_escaped"]

_REFERENCE = re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")
"""An XML or HTML entity or character reference (``&amp;``, ``&#8217;``)."""
_BACKSLASH = re.compile(r'\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})')
"""A JSON (and YAML, TOML) double-quoted string's escape (``\\"``, ``\\u00e9``)."""
_JSON_ESCAPE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                "t": "\t"}
_CDATA = re.compile(r"[ \t]*<!\[CDATA\[(.*)\]\]>[ \t]*\Z", re.S)


def unwrap_cdata(raw: str) -> str:
    """``raw`` less one CDATA wrapper that holds all of it (``<![CDATA[x]]>``:
    ``x``); else ``raw``."""
    m = _CDATA.match(raw)
    return m.group(1) if m and "]]>" not in m.group(1) else raw


def written_escaped(value: str, source: str) -> bool:
    """Whether ``source`` writes ``value`` (a text a rule read there) with an
    escape in it (see the module docstring): a reference in a markup
    document (``agentflow.grounding.markup.is_markup``), a backslash escape
    in a double-quoted string (``"`` before or after the value)."""
    if _REFERENCE.search(value) and is_markup(source.splitlines()):
        return True
    return bool(_BACKSLASH.search(value)) and (f'"{value}' in source or f'{value}"' in source)


def _decode(escape: str) -> str:
    """The text one escape (``&amp;``, ``\\u00e9``) stands for."""
    if escape[0] == "&":
        return html.unescape(escape)
    if escape[1] == "u":
        return chr(int(escape[2:], 16))
    return _JSON_ESCAPE[escape[1]]


def _pattern(text: str) -> re.Pattern[str] | None:
    """The escapes ``text``'s format writes (see the module docstring): a
    markup document's references, a JSON document's backslash escapes;
    ``None`` for any other text."""
    lines = text.splitlines()
    if "&" in text and is_markup(lines):
        return _REFERENCE
    if "\\" in text and is_bracketed(lines):
        return _BACKSLASH
    return None


def read_escaped(value: str, source: str) -> str:
    """``value`` (a text read in ``source``) as ``source``'s format means it:
    its escapes read (``Salt &amp; Pepper`` in XML: ``Salt & Pepper``;
    ``Say \\"hi\\"`` in JSON: ``Say "hi"``); ``value`` itself outside
    markup and JSON."""
    pattern = _pattern(source)
    if pattern is None or not pattern.search(value):
        return value
    return pattern.sub(lambda m: _decode(m.group()), value)


@functools.lru_cache(maxsize=4)
def unescaped(source: str) -> tuple[str, tuple[int, ...], tuple[int, ...]] | None:
    """``source`` with its format's escapes read (``read_escaped``), with
    the source span each character of it comes from (an escape's whole
    span for the character it stands for); ``None`` where ``source`` is
    neither markup nor JSON, or writes no escape."""
    pattern = _pattern(source)
    if pattern is None:
        return None
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for m in pattern.finditer(source):
        out.append(source[at:m.start()])
        starts.extend(range(at, m.start()))
        ends.extend(range(at + 1, m.start() + 1))
        char = _decode(m.group())
        out.append(char)
        starts.extend([m.start()] * len(char))
        ends.extend([m.end()] * len(char))
        at = m.end()
    if not out:
        return None
    out.append(source[at:])
    starts.extend(range(at, len(source)))
    ends.extend(range(at + 1, len(source) + 1))
    return "".join(out), tuple(starts), tuple(ends)
