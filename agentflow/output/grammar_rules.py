"""The rules of a substring grammar: ``RuleBuilder`` walks a ``local``-dialect
JSON Schema and spells each node as Lark rules and terminals over the source
(``agentflow.output.grammar`` documents what each grounded node becomes and
assembles the grammar; ``grammar_marks`` holds the keywords it reads and how
text is spelled, ``grammar_values`` lists the values, ``grammar_places``
finds the fields held to document order and their places, ``grammar_order``
spells them)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from agentflow.grounding.edges import END, START, edge_problem, label_at
from agentflow.grounding.locate import locate, occurrences
from agentflow.grounding.tokens import pieces
from agentflow.output.grammar_marks import (
    _AFTER,
    _CHUNK,
    _CLEAN,
    _CLEAN_EDGES,
    _DECIMAL,
    _DECIMAL_TEXT,
    _EDGES,
    _GROUNDED,
    _LINE,
    _LINE_EDGES,
    _LONGEST,
    _NULL,
    _PLAIN,
    _SOURCE,
    _TYPED,
    _TYPED_KINDS,
    _VALUES,
    _WHOLE_ITEMS,
    _WHOLE_LINES,
    _WHOLE_TOKENS,
    MAX_SOURCE_CHARS,
    _json_literal,
    _literal,
    chunks,
    has_grounded,
)
from agentflow.output.grammar_order import Slot, list_rule, ordered_fields
from agentflow.output.grammar_places import field_leaf, leaf_places
from agentflow.output.grammar_typed import TIME, date_literals, number_literals, typed_reason
from agentflow.output.grammar_values import (
    MAX_CANDIDATES,
    Place,
    candidates,
    item_chain,
    item_places,
    item_values,
    line_values,
    never_matches,
    next_items,
)

__all__ = ["MAX_SOURCE_CHARS", "RuleBuilder", "chunks", "has_grounded"]


def clean_value(value: str) -> bool:
    """Whether a listed value has clean edges (``agentflow.grounding.edges``,
    read off the value alone: no separator at an edge, no label first)."""
    text = value.strip()
    return bool(text) and text[0] not in START and text[-1] not in END and (
        label_at(text) is None)


class RuleBuilder:
    """Builds the rules of one substring grammar (one schema, one source)."""

    def __init__(self, root: Mapping[str, Any], separators: Mapping[str, str],
                 source: str = "", taken: frozenset[tuple[int, int]] = frozenset()) -> None:
        self.root = root
        self.source = source
        self.taken = taken  # list items found by an earlier pass: not offered again
        self.escaped = json.dumps(source, ensure_ascii=False)[1:-1]
        self._cuts: dict[bool, list[int]] = {}
        self.key_sep = separators.get("key_separator", ": ")
        self.item_sep = separators.get("item_separator", ", ")
        self.rules: dict[str, str] = {}
        self.count = 0
        self.refs: dict[str, str] = {}
        self.patterns: dict[tuple[Any, ...], str] = {}  # "" when no value is possible
        self.intersections: dict[str, tuple[str, str, bool]] = {}
        self.listed: dict[str, list[str]] = {}
        self.path: list[str] = []  # field names down to the node being built
        self.missing: list[str] = []  # fields no value of this source can fill
        self.reasons: dict[str, str] = {}  # why, for a missing number or date field
        self.sources: set[str] = set()
        self.clean_sources: set[str] = set()  # sources used with clean edges
        self.clean = False  # the node being built says Grounded(clean=True)
        self.options = {"whitespace_flexible": False, **separators}

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

    def rule(self, body: str) -> str:
        name = f"n{self.count}"  # a counter: reserved rules may be dropped from ``rules``
        self.count += 1
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
        it cannot finish. ``missing`` keeps only the fields of impossible
        values: what a possible value passed over (an empty list, ``null``)
        is dropped from it."""
        mark = len(self.missing)
        name = self._node(node)
        if name is not None:
            del self.missing[mark:]
        return name

    def _node(self, node: Mapping[str, Any]) -> str | None:
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
        if node.get(_TYPED) in _TYPED_KINDS:  # a number or a date: the source's own
            typed = self.typed(node, node[_TYPED])
            if typed is None:
                return self.rule(_NULL) if nullable else None
            return self.rule(f"{typed} | {_NULL}" if nullable else typed)
        mark = node.get(_GROUNDED)
        body: str | None
        line = node.get(_LINE) if isinstance(node.get(_LINE), str) else None
        outer, self.clean = self.clean, mark is not None and node.get(_CLEAN) is True
        try:
            body = self._body(node, mark, line)
        finally:
            self.clean = outer
        if body is None:
            return self.rule(_NULL) if nullable else None
        return self.rule(f"{body} | {_NULL}" if nullable else body)

    def _body(self, node: Mapping[str, Any], mark: Any, line: str | None) -> str | None:
        """The body of a rule for ``node`` (``_node``: a node that holds grounded
        strings); ``None`` when no value can match it in this source."""
        values = node.get(_VALUES)
        if mark in _SOURCE and isinstance(values, list) and all(
                isinstance(v, str) for v in values):  # a learned locator's values
            allowed = self.own_rules(values, node, mark, line)
            if self.clean:  # clean where they are, as verification reads it
                allowed = [v for v in allowed if self.clean_in_place(v, mark, line)]
            outer, self.clean = self.clean, False
            try:
                listed = self.list_values(("VALUES", *allowed), allowed)
            finally:
                self.clean = outer
            if listed:
                return listed
            # none of them is allowed: the field is grounded as if it had no locator
        if mark is not None and ("enum" in node or "const" in node):
            body = self.choices(node["enum"] if "enum" in node else [node["const"]], mark, line)
        elif mark == _WHOLE_ITEMS:
            body = self.whole_items(node.get("pattern"), line)
        elif mark in _SOURCE and node.get(_LONGEST) is True and (
                longest := self.longest(node)) is not None:
            body = longest or None
        elif mark in _SOURCE and line is not None:
            body = self.on_lines(_SOURCE[mark], node.get("pattern"), line)
        elif mark in _SOURCE:
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
        return body

    def typed(self, node: Mapping[str, Any], kind: str) -> str | None:
        """The alternatives of a number or date node (``TYPED_KEY``): the
        numbers (days) the source writes, as JSON (``grammar_typed``; a
        ``Decimal``'s string branch, ``DECIMAL_KEY``: the numbers as JSON
        strings, within its number branch's bounds);
        ``None`` when it writes none; the node's plain schema when there
        are too many to list (verification decides)."""
        body = self._typed(node, kind)
        if body is None and not isinstance(node.get(_DECIMAL), Mapping):  # its number branch says
            # why, if the field cannot be left out (``missing``)
            self.reasons[".".join(self.path).replace(".[]", "[]")] = typed_reason(
                node, kind, self.source)
        return body

    def _typed(self, node: Mapping[str, Any], kind: str) -> str | None:
        bounds = node.get(_DECIMAL)
        if kind == "number" and isinstance(bounds, Mapping):  # a Decimal's string branch
            values = number_literals({**bounds, "type": "number"}, self.source)
            if values is None:
                return self.json(_DECIMAL_TEXT)
            return " | ".join(_json_literal(v) for v in values) or None
        if kind == "number":
            values = number_literals(node, self.source)
            if values is None:
                return self.json({k: v for k, v in node.items() if k != _TYPED})
            return " | ".join(_literal(v) for v in values) or None
        days = date_literals(kind, self.source)
        if days is None:
            return self.json({k: v for k, v in node.items() if k != _TYPED})
        if kind == "date":
            return " | ".join(_literal(f'"{d}"') for d in days) or None
        if not days:
            return None
        opened = " | ".join(_literal(f'"{d}') for d in days)
        return f"({opened}) {TIME} {_literal(chr(34))}"

    def grounded(self, source: str, pattern: Any) -> str | None:
        """The terminal of a grounded string over the ``source`` terminal
        (``SOURCE`` or ``SOURCE_TOKENS``), with its ``pattern`` if any;
        ``None`` when the pattern matches nothing in the document."""
        clean = self.clean and source != "SOURCE_LINES"
        if not isinstance(pattern, str) or not pattern:
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
        name = self.patterns[source, pattern, clean] = f"GROUNDED_{len(self.patterns)}"
        if values is None:
            self.sources.add(source)
            self.intersections[name] = (source, pattern, clean)
        else:
            self.listed[name] = values
        return name

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
        """A new terminal listing ``values`` (its name, kept under ``key``);
        ``None`` (kept as ``""``) when there are none. Under ``clean`` only
        the values with clean edges (``clean_value``) are listed."""
        if self.clean:
            values = [v for v in values if clean_value(v)]
            key = (*key, "CLEAN")
            found = self.patterns.get(key)
            if found is not None:
                return found or None
        if not values:
            self.patterns[key] = ""
            return None
        name = self.patterns[key] = f"GROUNDED_{len(self.patterns)}"
        self.listed[name] = values
        return name

    def item_chain(self, node: Mapping[str, Any]) -> str | None:
        """A list of whole items in document order, each item of the source
        at most once (``grammar_values.item_chain``), or ``None`` when
        ``node`` is not a plain list of whole-item strings or the chain would
        be too large: then ``array`` builds the list as any other."""
        item = node.get("items")
        if not (isinstance(item, Mapping) and item.get(_GROUNDED) == _WHOLE_ITEMS
                and item.get("type") == "string" and "anyOf" not in item):
            return None
        low, high = int(node.get("minItems", 0)), node.get("maxItems")
        line = item.get(_LINE) if isinstance(item.get(_LINE), str) else None
        found = item_places(self.source, item.get("pattern"), line, self.taken)
        chain = item_chain([text for text, _, _ in found], low,
                           None if high is None else int(high), _literal(self.item_sep),
                           f"n{self.count}", next_items(found))
        if chain is None:
            return None
        self.count += 1
        rules, first = chain
        self.rules.update(rules)
        body = f'"[" {first} "]"'
        return body if low == 1 else f'{body} | "[" "]"'

    def terminals(self, source_text: str) -> list[str]:
        lines = []
        for source in sorted(self.sources):
            lines.append(f'{_PLAIN[source]}: "\\"" ({source} & {_EDGES[source]}) "\\""')
        for source in sorted(self.clean_sources):
            lines.append(f'{_PLAIN[source]}_CLEAN: "\\"" ({source} & {_EDGES[source]} '
                         f'& CLEAN_EDGES) "\\""')
        for name, (source, pattern, clean) in self.intersections.items():
            full = pattern[1:] if pattern.startswith("^") else ".*" + pattern
            full = full[:-1] if full.endswith("$") and not full.endswith("\\$") else full + ".*"
            regex = f"(?:{full})".replace("/", "\\/")
            edges = f"{_EDGES[source]} & CLEAN_EDGES" if clean else _EDGES[source]
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

    def object(self, node: Mapping[str, Any]) -> str | None:
        ordered = self.ordered_object(node)
        if ordered is not None:
            return ordered or None
        parts = []
        possible = True
        top = not self.path  # the output itself: name every field that cannot be filled
        for i, (key, prop) in enumerate(node["properties"].items()):
            sep = _literal(self.item_sep) + " " if i else ""
            self.path.append(key)
            value = self.node(prop)
            if value is None:  # every property is required in this dialect
                self.missing.append(".".join(self.path).replace(".[]", "[]"))
                possible = False
            self.path.pop()
            if not possible:
                if not top:
                    return None  # a nested object: its branch is left out, build no more
                continue
            parts.append(f"{sep}{_json_literal(key)} {_literal(self.key_sep)} {value}")
        return '"{" ' + " ".join(parts) + ' "}"' if possible else None

    def ordered_object(self, node: Mapping[str, Any]) -> str | None:
        """The body of an object some of whose fields say ``after`` (see
        ``agentflow.output.grammar_order``), ``""`` when no value of it is
        possible; ``None`` when no bound applies (no field says ``after``,
        or neither of a pair's places can be listed, or too many rules):
        ``object`` then builds it as any other. The fields held in order are
        grounded strings, grounded choices (their labels' places) and whole
        items, one each or (the later field only) a list of them."""
        props = list(node["properties"].items())
        keys = [k for k, _ in props]
        leaves = [field_leaf(prop, self.root, _literal(self.item_sep)) for _, prop in props]
        follows: dict[int, int] = {}  # field -> the earlier field it follows
        for k, leaf in enumerate(leaves):
            after = leaf[0].get(_AFTER) if leaf is not None else None
            if isinstance(after, str) and after in keys[:k]:
                follows[k] = keys.index(after)
        listed = {k: self.places(leaf[0], in_list=leaf[2] is not None)
                  for k, leaf in enumerate(leaves)
                  if leaf is not None and (k in follows or k in follows.values())}
        lists = {k for k, leaf in enumerate(leaves) if leaf is not None and leaf[2] is not None}
        follows = {k: j for k, j in follows.items()  # a list is never followed: plan-checked
                   if listed[k] is not None and listed[j] is not None and j not in lists}
        if not follows:
            return None
        slots = []
        for i, (key, prop) in enumerate(props):
            head = (_literal(self.item_sep) + " " if i else "") + \
                f"{_json_literal(key)} {_literal(self.key_sep)}"
            found, leaf = listed.get(i), leaves[i]
            if found is not None and leaf is not None and (i in follows
                                                           or i in follows.values()):
                shape = leaf[2]
                if shape is not None:  # a prefix for its chain's rules
                    shape = dataclasses.replace(shape, prefix=f"n{self.count}")
                    self.count += 1
                slots.append(Slot(head, None, tuple(found), leaf[1], follows.get(i), shape))
                continue
            self.path.append(key)
            value = self.node(prop)
            if value is None:
                self.missing.append(".".join(self.path).replace(".[]", "[]"))
            self.path.pop()
            slots.append(Slot(head, None if value is None else value, None, False, None))
        rules, count = dict(self.rules), self.count
        patterns, terms = dict(self.patterns), dict(self.listed)
        try:
            body = ordered_fields(slots, self.order_terminal, self.rule,
                                  self.rules.__setitem__)
        except OverflowError:  # none of its rules or listed values stays in the grammar
            self.rules, self.count = rules, count
            self.patterns, self.listed = patterns, terms
            return None
        if body is None:  # blame the fields with no place at all, else the ones held after
            held = sorted({*follows, *follows.values()})
            blamed = [k for k in held if not listed[k]] or sorted(follows)
            self.missing += [".".join([*self.path, keys[k]]).replace(".[]", "[]")
                             for k in blamed]
            return ""
        return f'"{{" {body} "}}"'

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

    def array(self, node: Mapping[str, Any]) -> str | None:
        fixed = node.get(_VALUES)
        sep = " " + _literal(self.item_sep) + " "
        if isinstance(fixed, list) and all(isinstance(v, str) for v in fixed):
            # a learned locator's items (agentflow.grounding.locators): exactly these
            return ('"[" ' + sep.join(_json_literal(v) for v in fixed) + ' "]"' if fixed
                    else '"[" "]"')
        if isinstance(fixed, list) and fixed and all(
                isinstance(b, list) and all(isinstance(v, str) for v in b) for b in fixed):
            # a continued locator's blocks: exactly the items of one of them
            return " | ".join(dict.fromkeys(
                '"[" ' + sep.join(_json_literal(v) for v in b) + ' "]"' if b else '"[" "]"'
                for b in fixed))
        chain = self.item_chain(node)
        if chain is not None:
            return chain
        self.path.append("[]")
        item = self.node(node["items"])
        self.path.pop()
        high = node.get("maxItems")
        return list_rule(item, int(node.get("minItems", 0)),
                         int(high) if high is not None else None, _literal(self.item_sep))

