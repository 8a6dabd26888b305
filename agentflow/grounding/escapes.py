"""Values a document writes escaped: the text a rule reads is not the value.

A format that escapes its text writes a value otherwise than it is: XML
writes ``Salt & Pepper`` as ``Salt &amp; Pepper`` and a link's
``?p=412&lang=en`` as ``?p=412&amp;lang=en`` (entity and character
references, ``&#8217;``); JSON, YAML and TOML double-quoted strings write
``Say "hi"`` as ``Say \\"hi\\"`` and ``Café`` as ``Caf\\u00e9``. What the
user means is the parser's text, so a learned locator (``agentflow.
grounding.locators``), which reads the document's own characters, never
pins a value it reads with such an escape in it (``written_escaped``:
``agentflow.extraction.confidence`` scores it as if the field had no
rule). A CDATA section is no escape but a wrapper (``unwrap_cdata``):
``<![CDATA[Croissants & Coffee]]>`` holds ``Croissants & Coffee`` as
written, so a rule reads the value out of it, as out of quotes.
"""

from __future__ import annotations

import re

from agentflow.grounding.markup import is_markup

__all__ = ["unwrap_cdata", "written_escaped"]

_REFERENCE = re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")
"""An XML or HTML entity or character reference (``&amp;``, ``&#8217;``)."""
_BACKSLASH = re.compile(r'\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})')
"""A JSON (and YAML, TOML) double-quoted string's escape (``\\"``, ``\\u00e9``)."""
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
