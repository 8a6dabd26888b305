"""What a substring grammar reads off a ``local``-dialect JSON Schema and how it
spells text: the ``x-grounded`` keywords and their values, the source
terminals, Lark literals, and the source's chunks (``agentflow.output.grammar``
documents the grammar; ``grammar_rules`` builds it)."""

from __future__ import annotations

import json
import re
from typing import Any

from agentflow.grounding.lines import line_pieces
from agentflow.grounding.tokens import pieces

__all__ = ["MAX_SOURCE_CHARS", "chunks", "has_grounded"]

MAX_SOURCE_CHARS = 200_000
"""Longest source held as a substring constraint (characters). Larger ones
fall back to verification after decoding (see the module docstring)."""

_GROUNDED = "x-grounded"
_WHOLE_TOKENS = "whole_tokens"  # agentflow.grounding.WHOLE_TOKENS
_WHOLE_LINES = "whole_lines"  # agentflow.grounding.WHOLE_LINES
_WHOLE_ITEMS = "whole_items"  # agentflow.grounding.WHOLE_ITEMS
_LINE = "x-grounded-line"  # agentflow.grounding.LINE_KEY
_AFTER = "x-grounded-after"  # agentflow.grounding.marker.AFTER_KEY
_LONGEST = "x-grounded-longest"  # agentflow.grounding.marker.LONGEST_KEY
_CLEAN = "x-grounded-clean"  # agentflow.grounding.marker.CLEAN_KEY
_VALUES = "x-grounded-values"  # agentflow.grounding.locators.VALUES_KEY
_READ = "x-grounded-read"  # agentflow.grounding.locator_whole.READ_KEY
_TYPED = "x-grounded-typed"  # agentflow.grounding.marker.TYPED_KEY
_TYPED_KINDS = ("number", "date", "date-time")  # agentflow.grounding.marker.TYPED
_DECIMAL = "x-grounded-decimal"  # agentflow.grounding.marker.DECIMAL_KEY
_DECIMAL_TEXT = {"type": "string", "pattern": "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$"}
"""A ``Decimal``'s string branch when the source writes too many numbers to
list: any plain decimal numeral (verification decides)."""
_S = r'[^\s"\\]|\\["\\\/]'  # one JSON string unit that is not whitespace
_U = r'[^"\\]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4}'  # any JSON string unit
_FIRST = r'[^\s"\\:;,=)\]}]|\\["\\\/]'  # not whitespace, not agentflow.grounding.edges.START
_LAST = r'[^\s"\\:;,=(\[{]|\\["\\\/]'  # not whitespace, not agentflow.grounding.edges.END
_ONLY = r'[^\s"\\:;,=()\[\]{}]|\\["\\\/]'  # a one-unit value: neither
_CLEAN_EDGES = f"CLEAN_EDGES: /(?:{_ONLY})|(?:{_FIRST})(?:{_U})*(?:{_LAST})/"
"""A JSON string body whose first unit is neither whitespace (a space, an
escaped newline or tab: ``\\n``), ``: ; , =`` nor a closing bracket, and whose
last unit is neither whitespace, ``: ; , =`` nor an opening bracket (read unit
by unit, so the ``n`` of an escaped newline is never taken for text): the
edges ``agentflow.grounding.edges.edge_problem`` checks once the value is
stripped, the edges of a ``Grounded(clean=True)`` value. (Spelled by
characters, ``environment:`` + newline ended with ``n`` and was offered, then
refused.)"""
_SOURCE = {True: "SOURCE", _WHOLE_TOKENS: "SOURCE_TOKENS", _WHOLE_LINES: "SOURCE_LINES"}
_MARKS = (*_SOURCE, _WHOLE_ITEMS)  # every value of "x-grounded"
_PLAIN = {"SOURCE": "GROUNDED", "SOURCE_TOKENS": "GROUNDED_TOKENS",
          "SOURCE_LINES": "GROUNDED_LINES"}  # without a pattern
_EDGES = {"SOURCE": "TRIMMED", "SOURCE_TOKENS": "TRIMMED", "SOURCE_LINES": "LINE_EDGES"}
_LINE_EDGES = f"LINE_EDGES: /(?:{_S})(?:(?:{_U})*(?:{_S}))?/"
"""A JSON string body that neither begins nor ends with whitespace (read
unit by unit, so the ``n`` of an escaped newline is never taken for text):
with ``SOURCE_LINES`` a value then starts and ends on a line's content."""
_CHUNK = re.compile(r"\w+|\s|[^\w\s]")
_NULL = '"null"'


def has_grounded(schema: Any, root: Any = None, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether any node of ``schema`` is marked grounded (a string, or a
    number or date read by value: ``_TYPED``; ``$ref`` followed into
    ``root["$defs"]``; ``root`` defaults to ``schema``)."""
    root = schema if root is None else root
    if isinstance(schema, dict):
        if schema.get(_GROUNDED) in _MARKS or schema.get(_TYPED) in _TYPED_KINDS:
            return True
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in _seen:
            defs = root.get("$defs", {}) if isinstance(root, dict) else {}
            if has_grounded(defs.get(ref.split("/")[-1]), root, _seen | {ref}):
                return True
        return any(has_grounded(v, root, _seen) for k, v in schema.items() if k != "$defs")
    if isinstance(schema, list):
        return any(has_grounded(v, root, _seen) for v in schema)
    return False


def _literal(text: str) -> str:
    """A Lark string literal matching ``text`` exactly."""
    return json.dumps(text, ensure_ascii=False)


def _json_literal(value: Any) -> str:
    """A Lark string literal matching ``value`` written as JSON."""
    return _literal(json.dumps(value, ensure_ascii=False))


def chunks(source: str, whole_tokens: bool = False, whole_lines: bool = False) -> list[str]:
    """``source`` as JSON-escaped chunks whose concatenation is its JSON
    string body: words, single whitespace characters and single other
    characters; with ``whole_tokens``, the pieces of
    ``agentflow.grounding.tokens.pieces``."""
    split = ([p for p, _ in line_pieces(source)] if whole_lines else
             pieces(source) if whole_tokens else _CHUNK.findall(source))
    return [json.dumps(c, ensure_ascii=False)[1:-1] for c in split]
