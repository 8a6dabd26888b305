"""The rules of a substring grammar: ``RuleBuilder`` walks a ``local``-dialect
JSON Schema and spells each node as Lark rules over the terminals
``grammar_terminals.TerminalBuilder`` (its base) keeps: references, choices,
``anyOf`` branches, objects (those held to document order too), lists, and
number and date fields (``agentflow.output.grammar`` documents what each
grounded node becomes and assembles the grammar; ``grammar_marks`` holds the
keywords it reads and how text is spelled, ``grammar_values`` lists the
values, ``grammar_places`` finds the fields held to document order and their
places, ``grammar_order`` spells them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from agentflow.output.grammar_marks import (
    _AFTER,
    _CLEAN,
    _DECIMAL,
    _DECIMAL_TEXT,
    _GROUNDED,
    _LINE,
    _LONGEST,
    _NULL,
    _READ,
    _SOURCE,
    _TYPED,
    _TYPED_KINDS,
    _VALUES,
    _WHOLE_ITEMS,
    _WHOLE_TOKENS,
    MAX_SOURCE_CHARS,
    _json_literal,
    _literal,
    chunks,
    has_grounded,
)
from agentflow.output.grammar_order import Slot, list_rule, ordered_fields
from agentflow.output.grammar_places import field_leaf
from agentflow.output.grammar_terminals import TerminalBuilder
from agentflow.output.grammar_typed import TIME, date_literals, number_literals, typed_reason
from agentflow.output.grammar_values import item_chain, item_places, next_items

__all__ = ["MAX_SOURCE_CHARS", "RuleBuilder", "chunks", "has_grounded"]


class RuleBuilder(TerminalBuilder):
    """Builds the rules of one substring grammar (one schema, one source)."""

    def __init__(self, root: Mapping[str, Any], separators: Mapping[str, str],
                 source: str = "", taken: frozenset[tuple[int, int]] = frozenset()) -> None:
        super().__init__(source, taken)
        self.root = root
        self.key_sep = separators.get("key_separator", ": ")
        self.item_sep = separators.get("item_separator", ", ")
        self.rules: dict[str, str] = {}
        self.count = 0
        self.refs: dict[str, str] = {}
        self.missing: list[str] = []  # fields no value of this source can fill
        self.reasons: dict[str, str] = {}  # why, for a missing number or date field
        self.options = {"whitespace_flexible": False, **separators}

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
        leaf, self.leaf = self.leaf, node
        try:
            body = self._body(node, mark, line)
        finally:
            self.clean, self.leaf = outer, leaf
        if body is None:
            return self.rule(_NULL) if nullable else None
        return self.rule(f"{body} | {_NULL}" if nullable else body)

    def _body(self, node: Mapping[str, Any], mark: Any, line: str | None) -> str | None:
        """The body of a rule for ``node`` (``_node``: a node that holds grounded
        strings); ``None`` when no value can match it in this source."""
        values = node.get(_VALUES)
        if mark in _SOURCE and isinstance(values, list) and all(
                isinstance(v, str) for v in values):  # a learned locator's values
            # read where they cut a token (``Port=2022``): whole by the rule's edges
            held = True if node.get(_READ) is True and mark == _WHOLE_TOKENS else mark
            allowed = self.own_rules(values, node, held, line)
            if self.clean:  # clean where they are, as verification reads it
                allowed = [v for v in allowed if self.clean_in_place(v, held, line)]
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
