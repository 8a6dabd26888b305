"""JSON Schema + source text -> an llguidance Lark grammar whose grounded
strings can only be substrings of the source.

``substring_grammar(schema, source)`` compiles a schema in the ``local``
dialect (objects closed, every property required, in order) whose grounded
string nodes carry ``"x-grounded": true`` (``agentflow.extraction.grounding``):

* a grounded string is ``"`` + a contiguous run of the source's chunks +
  ``"``, where the chunks are the source split into words, single
  whitespace characters and single other characters, each JSON-escaped
  (``substring_chunks``, llguidance docs/syntax.md, "Structured %regex"). A
  value therefore starts and ends at a word boundary, and decodes (JSON) to
  exactly the span it copied: quotes, backslashes, tabs, control characters
  and non-ASCII text included;
* a string marked ``"x-grounded": "whole_tokens"`` (``Grounded(whole_tokens=
  True)``) is the same over the source's *pieces* (``agentflow.extraction.
  tokens``: whole tokens, their trailing ``.:!?`` runs, single whitespace
  characters, single delimiters), so it can only begin and end at token
  boundaries: ``2:1.5.2-1`` whole, never ``1.5.2-1``. One ``SOURCE`` terminal
  per granularity in use (``SOURCE``, ``SOURCE_TOKENS``), each holding the
  document once;
* a grounded string is never empty and never starts or ends with a space;
  its ``pattern``, if any, is intersected with the substring (llguidance
  ``&``), applied to the JSON-escaped text (the same text unless the value
  holds quotes, backslashes or control characters; validation checks the
  decoded value either way). Keep such patterns to simple character classes:
  one like ``[^<>]+ <[^<>]+>`` over a 2,000-character document exceeded
  llguidance's lexer limit ("too many expressions constructed"), and even
  ``>$`` (ends with ``>``) does on some such documents; llguidance then stops
  the reply, which fails as a typed error in the result (``ProviderError``,
  or ``OutputTruncatedError`` when the cut reply ends as ``length``);
* ``enum``/``const`` nodes are the alternatives of their JSON literals;
* objects and arrays that hold grounded strings are spelled out (keys in
  schema order, ``minItems``/``maxItems`` kept, ``null`` where allowed);
  ``$ref`` becomes a named rule (recursion works);
* every other subtree is inlined as ``%json {...}`` and keeps all of its
  JSON Schema (bounds, patterns, formats).

JSON is written with ``separators`` (llguidance's ``key_separator`` /
``item_separator``) and no other whitespace. A source longer than
``MAX_SOURCE_CHARS`` is not constrained (``None`` is returned): the caller
sends the plain schema grammar and the engine's verification still checks
every value. Nothing is cached: a grammar holds its document, and is built
per request (well under a millisecond per kilobyte).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from agentflow.extraction.tokens import pieces

__all__ = ["MAX_SOURCE_CHARS", "has_grounded", "substring_grammar"]

MAX_SOURCE_CHARS = 200_000
"""Longest source held as a substring constraint (characters). Larger ones
fall back to verification after decoding (see the module docstring)."""

_GROUNDED = "x-grounded"
_WHOLE_TOKENS = "whole_tokens"  # agentflow.extraction.grounding.WHOLE_TOKENS
_SOURCE = {True: "SOURCE", _WHOLE_TOKENS: "SOURCE_TOKENS"}
_PLAIN = {"SOURCE": "GROUNDED", "SOURCE_TOKENS": "GROUNDED_TOKENS"}  # without a pattern
_CHUNK = re.compile(r"\w+|\s|[^\w\s]")
_NULL = '"null"'


def has_grounded(schema: Any, root: Any = None, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether any node of ``schema`` is marked grounded (``$ref`` followed
    into ``root["$defs"]``; ``root`` defaults to ``schema``)."""
    root = schema if root is None else root
    if isinstance(schema, dict):
        if schema.get(_GROUNDED) in _SOURCE:
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


def chunks(source: str, whole_tokens: bool = False) -> list[str]:
    """``source`` as JSON-escaped chunks whose concatenation is its JSON
    string body: words, single whitespace characters and single other
    characters; with ``whole_tokens``, the pieces of
    ``agentflow.extraction.tokens.pieces``."""
    split = pieces(source) if whole_tokens else _CHUNK.findall(source)
    return [json.dumps(c, ensure_ascii=False)[1:-1] for c in split]


_SPAN_CHECK_CHARS = 20_000
"""Sources up to this long get the exact check of whole-token spans in
``_never_matches`` (values up to ``_SPAN_CHECK_VALUE`` characters); longer ones
only the search for any match (a sound, weaker check)."""
_SPAN_CHECK_VALUE = 200


def _never_matches(pattern: str, source: str, escaped: str,
                   cuts: Callable[[], list[int]] | None = None) -> bool:
    """Whether no text of ``source`` (raw, or ``escaped``: its JSON string
    body) that a grounded string may take matches ``pattern``, so such a
    string has no legal value. With ``cuts`` (whole-token fields: the piece
    boundaries of ``source``, asked for only when needed) and a source up to
    ``_SPAN_CHECK_CHARS``, only spans between those boundaries count.
    ``False`` when Python cannot read the pattern (then nothing is assumed)."""
    core = pattern[1:] if pattern.startswith("^") else pattern
    core = core[:-1] if core.endswith("$") and not core.endswith("\\$") else core
    try:
        regex = re.compile(core)
    except re.error:
        return False
    if regex.search(source) is None and regex.search(escaped) is None:
        return True
    if cuts is None or len(source) > _SPAN_CHECK_CHARS or escaped != source:
        return False
    bounds = cuts()
    for i, start in enumerate(bounds):
        if source[start:start + 1].isspace():
            continue
        for end in bounds[i + 1:]:
            if end - start > _SPAN_CHECK_VALUE:
                break
            if regex.fullmatch(source, start, end):
                return False
    return True


class _Builder:
    def __init__(self, root: Mapping[str, Any], separators: Mapping[str, str],
                 source: str = "") -> None:
        self.root = root
        self.source = source
        self.escaped = json.dumps(source, ensure_ascii=False)[1:-1]
        self._cuts: list[int] | None = None
        self.key_sep = separators.get("key_separator", ": ")
        self.item_sep = separators.get("item_separator", ", ")
        self.rules: dict[str, str] = {}
        self.refs: dict[str, str] = {}
        self.patterns: dict[tuple[str, str], str] = {}
        self.sources: set[str] = set()
        self.options = {"whitespace_flexible": False, **separators}

    def cuts(self) -> list[int]:
        """Offsets where the source's whole-token pieces begin and end (computed once)."""
        if self._cuts is None:
            self._cuts = [0]
            for piece in pieces(self.source):
                self._cuts.append(self._cuts[-1] + len(piece))
        return self._cuts

    def rule(self, body: str) -> str:
        name = f"n{len(self.rules)}"
        self.rules[name] = body
        return name

    def json(self, node: Mapping[str, Any]) -> str:
        schema = dict(node)
        if "$defs" in self.root and "$ref" in json.dumps(schema):
            schema["$defs"] = self.root["$defs"]
        schema["x-guidance"] = self.options
        return self.rule("%json " + json.dumps(schema, ensure_ascii=False))

    def node(self, node: Mapping[str, Any]) -> str | None:
        """The name of a rule matching ``node``; ``None`` when no value can
        match it in this source (a required grounded string whose ``pattern``
        matches nothing in the document, or an object/list that needs one):
        the grammar then leaves that branch out (an empty list, ``null``, the
        other ``anyOf`` branches) instead of letting the model start a value
        it cannot finish."""
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.split("/")[-1]
            if key not in self.refs:
                if not has_grounded(node, self.root):
                    return self.json(node)
                self.refs[key] = name = f"d{len(self.refs)}"
                self.rules[name] = ""  # reserved: recursion refers to it
                target = self.node(self.root["$defs"][key])
                if target is None:
                    del self.rules[name]
                    self.refs[key] = ""
                    return None
                self.rules[name] = target
            return self.refs[key] or None
        if not has_grounded(node, self.root):
            if node.get("type") == "null":
                return self.rule(_NULL)
            if "enum" in node or "const" in node:
                values = node["enum"] if "enum" in node else [node["const"]]
                return self.rule(" | ".join(_json_literal(v) for v in values))
            return self.json(node)
        kinds = node.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else {kinds}
        nullable = "null" in kinds
        mark = node.get(_GROUNDED)
        body: str | None
        if mark in _SOURCE:
            body = self.grounded(_SOURCE[mark], node.get("pattern"))
        elif "anyOf" in node or "oneOf" in node:
            branches = [self.node(b) for b in node.get("anyOf") or node.get("oneOf") or []]
            possible = [b for b in branches if b is not None]
            body = " | ".join(possible) if possible else None
        elif "properties" in node:
            body = self.object(node)
        elif "items" in node:
            body = self.array(node)
        else:
            return self.json(node)
        if body is None:
            return self.rule(_NULL) if nullable else None
        return self.rule(f"{body} | {_NULL}" if nullable else body)

    def grounded(self, source: str, pattern: Any) -> str | None:
        """The terminal of a grounded string over the ``source`` terminal
        (``SOURCE`` or ``SOURCE_TOKENS``), with its ``pattern`` if any;
        ``None`` when the pattern matches nothing in the document."""
        if not isinstance(pattern, str) or not pattern:
            self.sources.add(source)
            return _PLAIN[source]
        whole = source != "SOURCE"
        if _never_matches(pattern, self.source, self.escaped, self.cuts if whole else None):
            return None
        self.sources.add(source)
        name = self.patterns.get((source, pattern))
        if name is None:
            name = self.patterns[source, pattern] = f"GROUNDED_{len(self.patterns)}"
        return name

    def terminals(self, source_text: str) -> list[str]:
        lines = []
        for source in sorted(self.sources):
            lines.append(f'{_PLAIN[source]}: "\\"" ({source} & TRIMMED) "\\""')
        for (source, pattern), name in self.patterns.items():
            full = pattern[1:] if pattern.startswith("^") else ".*" + pattern
            full = full[:-1] if full.endswith("$") and not full.endswith("\\$") else full + ".*"
            regex = f"(?:{full})".replace("/", "\\/")
            lines.append(f'{name}: "\\"" ({source} & TRIMMED & /{regex}/) "\\""')
        lines.append("TRIMMED: /[^ ]|[^ ].*[^ ]/")
        for source in sorted(self.sources):
            split = chunks(source_text, whole_tokens=source != "SOURCE")
            lines.append(f"{source}: %regex "
                         + json.dumps({"substring_chunks": split}, ensure_ascii=False))
        return lines

    def object(self, node: Mapping[str, Any]) -> str | None:
        parts = []
        for i, (key, prop) in enumerate(node["properties"].items()):
            sep = _literal(self.item_sep) + " " if i else ""
            value = self.node(prop)
            if value is None:  # every property is required in this dialect
                return None
            parts.append(f"{sep}{_json_literal(key)} {_literal(self.key_sep)} {value}")
        return '"{" ' + " ".join(parts) + ' "}"'

    def array(self, node: Mapping[str, Any]) -> str | None:
        item = self.node(node["items"])
        low, high = int(node.get("minItems", 0)), node.get("maxItems")
        if item is None:
            return None if low >= 1 else '"[" "]"'
        rest = f"{{{max(low - 1, 0)},{int(high) - 1 if high is not None else ''}}}"
        if high is not None and int(high) == 0:
            return '"[" "]"'
        more = f"({_literal(self.item_sep)} {item}){rest}"
        # llguidance rejects the range {0,0}: one item at most is the item alone
        inner = item if high is not None and int(high) == 1 else f"{item} {more}"
        return f'"[" {inner} "]"' if low >= 1 else f'"[" ({inner})? "]"'


def substring_grammar(
    schema: Mapping[str, Any], source: str, separators: Mapping[str, str]
) -> str | None:
    """An llguidance Lark grammar for ``schema`` whose grounded strings are
    substrings of ``source``; ``None`` when nothing is grounded or the source
    is longer than ``MAX_SOURCE_CHARS``, or when no output can be built from
    this source (a required grounded field whose ``pattern`` matches nothing
    in it): then use the plain schema grammar, and verification decides.

    Args:
        schema: a ``local``-dialect JSON Schema with ``x-grounded`` marks.
        source: the text grounded strings are copied from.
        separators: ``{"key_separator": ": ", "item_separator": ", "}``.
    """
    if len(source) > MAX_SOURCE_CHARS or not has_grounded(schema):
        return None
    builder = _Builder(schema, separators, source)
    start = builder.node(schema)
    if start is None:
        return None
    lines = ["%llguidance {}", f"start: {start}"]
    lines += [f"{name}: {body}" for name, body in builder.rules.items()]
    lines += builder.terminals(source)
    return "\n".join(lines) + "\n"
