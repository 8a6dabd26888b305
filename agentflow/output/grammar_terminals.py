"""The terminals of a substring grammar: which values of the source a
grounded string may copy, and their Lark spelling. ``TerminalBuilder`` keeps
them for one schema and one source: a grounded string over a source terminal
(with its ``pattern`` intersected or its matches listed), the values a learned
locator found, a grounded choice's labels, a field held to lines or to whole
items, the maximal spans of a ``longest`` field, and the places a field held to
document order may copy (``grammar_rules.RuleBuilder``, built on it, walks the
schema and spells the rules that use them; ``grammar_marks`` holds the keywords
and how text is spelled, ``grammar_values`` lists the values)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agentflow.grounding.edges import END, START, edge_problem, label_at
from agentflow.grounding.locate import locate, occurrences
from agentflow.grounding.tokens import pieces
from agentflow.output.grammar_cost import PATTERN_FACTOR, affordable
from agentflow.output.grammar_marks import (
    _CHUNK,
    _CLEAN_EDGES,
    _EDGES,
    _LINE_EDGES,
    _NULL,
    _PLAIN,
    _WHOLE_ITEMS,
    _WHOLE_LINES,
    _WHOLE_TOKENS,
    MAX_SOURCE_CHARS,
    _json_literal,
    _literal,
    chunks,
)
from agentflow.output.grammar_places import leaf_places
from agentflow.output.grammar_values import (
    MAX_CANDIDATES,
    Place,
    candidates,
    item_values,
    line_values,
    never_matches,
)

__all__ = ["TerminalBuilder", "clean_value"]


def clean_value(value: str) -> bool:
    """Whether a listed value has clean edges (``agentflow.grounding.edges``,
    read off the value alone: no separator at an edge, no label first)."""
    text = value.strip()
    return bool(text) and text[0] not in START and text[-1] not in END and (
        label_at(text) is None)


class TerminalBuilder:
    """The terminals of one substring grammar (one source): each value set
    gets one terminal, named ``GROUNDED_<n>`` and reused for the same key;
    ``terminals`` spells them all at the end."""

    def __init__(self, source: str = "",
                 taken: frozenset[tuple[int, int]] = frozenset()) -> None:
        self.source = source
        self.taken = taken  # list items found by an earlier pass: not offered again
        self.escaped = json.dumps(source, ensure_ascii=False)[1:-1]
        self._cuts: dict[bool, list[int]] = {}
        self.patterns: dict[tuple[Any, ...], str] = {}  # "" when no value is possible
        self.intersections: dict[str, tuple[str, str, bool]] = {}
        self.listed: dict[str, list[str]] = {}
        self.path: list[str] = []  # field names down to the node being built
        self.sources: set[str] = set()
        self.clean_sources: set[str] = set()  # sources used with clean edges
        self.clean = False  # the node being built says Grounded(clean=True)
        self.leaf: Mapping[str, Any] = {}  # the grounded node being built
        self._affordable: dict[int, bool] = {}

    def cuts(self, whole_tokens: bool) -> list[int]:
        """Offsets where the source's chunks (``whole_tokens``: pieces) begin
        and end (computed once each)."""
        if whole_tokens not in self._cuts:
            split = pieces(self.source) if whole_tokens else _CHUNK.findall(self.source)
            offsets = [0]
            for part in split:
                offsets.append(offsets[-1] + len(part))
            self._cuts[whole_tokens] = offsets
        return self._cuts[whole_tokens]
    def grounded(self, source: str, pattern: Any) -> str | None:
        """The terminal of a grounded string over the ``source`` terminal
        (``SOURCE`` or ``SOURCE_TOKENS``), with its ``pattern`` if any;
        ``None`` when the pattern matches nothing in the document."""
        clean = self.clean  # (whole lines too: ``environment:`` is a line, and no clean value)
        if not isinstance(pattern, str) or not pattern:
            if not self.affordable(1):
                return self.unsourced()
            self.sources.add(source)
            if clean:
                self.clean_sources.add(source)
                return _PLAIN[source] + "_CLEAN"
            return _PLAIN[source]
        name = self.patterns.get((source, pattern, clean))
        if name is not None:
            return name or None
        values = (None if source == "SOURCE_LINES" else
                  candidates(pattern, self.source, self.cuts(source != "SOURCE")))
        if values is not None and clean:
            values = [v for v in values if clean_value(v)]
        if values == [] or (values is None and never_matches(pattern, self.source, self.escaped)):
            self.patterns[source, pattern, clean] = ""
            return None
        if values is None and not self.affordable(PATTERN_FACTOR):
            return self.unsourced()
        name = self.patterns[source, pattern, clean] = f"GROUNDED_{len(self.patterns)}"
        if values is None:
            self.sources.add(source)
            self.intersections[name] = (source, pattern, clean)
        else:
            self.listed[name] = values
        return name

    def affordable(self, factor: int) -> bool:
        """Whether llguidance's lexer can hold this source as a substring
        terminal ``factor`` times as costly as a plain one
        (``grammar_cost.affordable``; computed once per factor)."""
        if factor not in self._affordable:
            self._affordable[factor] = affordable(self.escaped, factor)
        return self._affordable[factor]

    def unsourced(self) -> str:
        """The rule of the grounded string being built (``leaf``) when its
        source terminal would cost llguidance's lexer too much (``affordable``):
        its plain JSON Schema (bounds and ``pattern`` kept), so the model is
        not held to the source and verification decides, as for a source over
        ``MAX_SOURCE_CHARS``."""
        plain = {k: v for k, v in self.leaf.items() if not k.startswith("x-grounded")}
        return self.json({**plain, "type": "string"})

    def json(self, node: Mapping[str, Any]) -> str:
        """A rule matching ``node`` by its JSON Schema (``RuleBuilder`` spells it)."""
        raise NotImplementedError

    def own_rules(self, values: list[str], node: Mapping[str, Any], mark: Any,
                  line: str | None) -> list[str]:
        """The located ``values`` the node's own rules also allow (its
        ``pattern``, searched as JSON Schema does; whole tokens; its ``line``),
        each once: a locator narrows what a schema says, never widens it."""
        pattern = node.get("pattern")
        try:
            regex = re.compile(pattern) if isinstance(pattern, str) and pattern else None
        except re.error:  # a pattern Python cannot read: llguidance's intersection decides
            return []
        return [v for v in dict.fromkeys(values)
                if (regex is None or regex.search(v))
                and locate(v, self.source, whole_tokens=mark == _WHOLE_TOKENS,
                           whole_lines=mark == _WHOLE_LINES, line=line) is not None]

    def clean_in_place(self, value: str, mark: Any, line: str | None) -> bool:
        """Whether ``value`` has clean edges at some place of the source its
        rules allow (``agentflow.grounding.edges.edge_problem``, the check
        verification makes: a label counts only where the line's content
        begins, so ``Version 590: 03 Jun 2021`` inside a quoted argument is
        clean)."""
        return any(edge_problem(value, self.source, span) is None for span in occurrences(
            value, self.source, whole_tokens=mark == _WHOLE_TOKENS,
            whole_lines=mark == _WHOLE_LINES, line=line))

    def choices(self, values: list[Any], mark: Any, line: str | None) -> str | None:
        """The alternatives of a grounded choice (a ``Literal``/enum marked
        ``Grounded``): the labels that occur in the source, letter case
        ignored (as whole tokens, on a ``line``, when the mark says so);
        ``None`` when none does."""
        found = [v for v in values if isinstance(v, str) and locate(
            v, self.source, case_sensitive=False, whole_tokens=mark == _WHOLE_TOKENS,
            whole_lines=mark == _WHOLE_LINES, whole_items=mark == _WHOLE_ITEMS,
            line=line) is not None]
        return " | ".join(_json_literal(v) for v in found) if found else None

    def on_lines(self, source: str, pattern: Any, line: str) -> str | None:
        """The terminal of a grounded string held to the lines ``line``
        matches: its values listed (``grammar_values.line_values``); ``None``
        when there are none; without the line rule (verification decides)
        when there are too many to list."""
        key = (source, pattern if isinstance(pattern, str) else "", line, self.clean)
        name = self.patterns.get(key)
        if name is not None:
            return name or None
        values = line_values(self.source, line, pattern, self.cuts(source != "SOURCE"),
                             whole_lines=source == "SOURCE_LINES")
        if values is None:
            return self.grounded(source, pattern)
        return self.list_values(key, values)

    def whole_items(self, pattern: Any, line: str | None = None) -> str | None:
        """The terminal of a whole-item grounded string: the source's list
        items its ``pattern`` (and ``line``) allows, listed; ``None`` when
        there are none; the whole-line terminal when there are too many to
        list."""
        key = ("ITEMS", pattern if isinstance(pattern, str) else "", line, "[]" in self.path,
               self.clean)
        name = self.patterns.get(key)
        if name is not None:
            return name or None
        taken = self.taken if "[]" in self.path else frozenset()  # list items only
        values = list(dict.fromkeys(item_values(self.source, pattern, line, taken)))
        if len(values) > MAX_CANDIDATES or sum(map(len, values)) > MAX_SOURCE_CHARS:
            return self.grounded("SOURCE_LINES", pattern)
        return self.list_values(key, values)

    def list_values(self, key: tuple[Any, ...], values: list[str]) -> str | None:
        """A terminal listing ``values`` (its name, kept under ``key``: the
        one terminal of a key asked for again, as two fields that offer the
        same values ask); ``None`` (kept as ``""``) when there are none.
        Under ``clean`` only the values with clean edges (``clean_value``)
        are listed."""
        if self.clean:
            values = [v for v in values if clean_value(v)]
            key = (*key, "CLEAN")
        found = self.patterns.get(key)
        if found is not None:  # (named anew, it took the next terminal's name: the next
            return found or None  # field's values were offered for both)
        if not values:
            self.patterns[key] = ""
            return None
        name = self.patterns[key] = f"GROUNDED_{len(self.patterns)}"
        self.listed[name] = values
        return name

    def terminals(self, source_text: str) -> list[str]:
        lines = []
        for source in sorted(self.sources):
            lines.append(f'{_PLAIN[source]}: "\\"" ({source} & {_EDGES[source]}) "\\""')
        for source in sorted(self.clean_sources):  # clean edges are trimmed ones: one intersection
            lines.append(f'{_PLAIN[source]}_CLEAN: "\\"" ({source} & CLEAN_EDGES) "\\""')
        for name, (source, pattern, clean) in self.intersections.items():
            full = pattern[1:] if pattern.startswith("^") else ".*" + pattern
            full = full[:-1] if full.endswith("$") and not full.endswith("\\$") else full + ".*"
            regex = f"(?:{full})".replace("/", "\\/")
            edges = "CLEAN_EDGES" if clean else _EDGES[source]
            lines.append(f'{name}: "\\"" ({source} & {edges} & /{regex}/) "\\""')
        for name, values in self.listed.items():
            spelled = " | ".join(_literal(json.dumps(v, ensure_ascii=False)[1:-1]) for v in values)
            lines.append(f'{name}: "\\"" ({spelled}) "\\""')
        lines.append("TRIMMED: /[^ ]|[^ ].*[^ ]/")
        if self.clean_sources or any(c for _, _, c in self.intersections.values()):
            lines.append(_CLEAN_EDGES)
        if "SOURCE_LINES" in self.sources:
            lines.append(_LINE_EDGES)
        for source in sorted(self.sources):
            split = chunks(source_text, whole_tokens=source == "SOURCE_TOKENS",
                           whole_lines=source == "SOURCE_LINES")
            lines.append(f"{source}: %regex "
                         + json.dumps({"substring_chunks": split}, ensure_ascii=False))
        return lines
    def places(self, leaf: Mapping[str, Any], in_list: bool = False) -> list[Place] | None:
        """Where a grounded leaf's values may be copied from
        (``grammar_places.leaf_places``; a whole item ``in_list`` or in a
        list: less the items an earlier pass took)."""
        taken = self.taken if in_list or "[]" in self.path else frozenset()
        return leaf_places(leaf, self.source, self.cuts, taken)

    def longest(self, leaf: Mapping[str, Any]) -> str | None:
        """The terminal of a ``longest`` grounded string: the maximal spans
        its rules and pattern allow, listed (``""`` when there are none);
        ``None`` when they cannot be listed (then it is built as without
        ``longest``, and verification decides)."""
        found = self.places(leaf)
        if found is None:
            return None
        values = list(dict.fromkeys(v for v, _, _ in found))
        return self.patterns.get(("LONGEST", *values, self.clean)) or self.list_values(
            ("LONGEST", *values, self.clean), values) or ""

    def order_terminal(self, values: list[str]) -> str:
        """A terminal listing ``values`` (reused for the same list)."""
        key = ("ORDER", *values)
        return self.patterns.get(key) or self.list_values(key, values) or _NULL
