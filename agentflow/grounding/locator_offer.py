"""Learned locators in the grammar: a ``local``-dialect JSON Schema whose
located fields offer only the values their locators find in this document
(``agentflow.grounding.locators`` documents the rules).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentflow.grounding.edges import clean_edges
from agentflow.grounding.locate import occurrences
from agentflow.grounding.locator_absence import absence_shown, element_absent
from agentflow.grounding.locator_records import later_record_only
from agentflow.grounding.locator_rule import VALUES_KEY, Locator
from agentflow.grounding.locator_whole import READ_KEY, read_cut
from agentflow.grounding.marker import CLEAN_KEY, LINE_KEY
from agentflow.output.list_bounds import schema_max_items

__all__ = ["apply_locators"]


def apply_locators(schema: Mapping[str, Any], locators: Mapping[str, Locator],
                   source: str, located: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A copy of a ``local``-dialect ``schema`` whose top-level grounded
    string fields with a locator offer only the locator's values in
    ``source``: a string field the first of them (never null: the place the
    rule reads, as each example's value is its first; or null, where the rule
    finds it only in a later record than the examples write it in: ``agentflow.
    grounding.locator_records.later_record_only``), a list field exactly
    them, in document order (a continued list: its first block's items;
    ``VALUES_KEY`` on the string node or on the list); a field whose locator
    finds nothing can only be null (or an empty list) where the document
    shows it empty (``agentflow.grounding.locator_absence.absence_shown``),
    else it keeps its ordinary grounding (any value its rules allow, or
    null): examples never make a field unreachable in another layout; so
    does a field whose locator's ``twins`` read other values in ``source``
    (``Locator.twins_agree``), and one whose label the document writes only
    at a nesting depth, under parent keys or in a ``---`` document no example
    writes it at (``Locator.off_depth``: a nested key; not where the parent
    element the examples write it under holds no such element: ``agentflow.
    grounding.locator_absence.element_absent``, only null).
    A field whose strings are not grounded, or are whole items (unless its
    rule is an ``items`` rule, whose values are whole items), is left as is.
    ``located``: single fields whose value is already known from a larger
    text ``source`` is part of (``LOCATED_KEY``: a long document's chunk, where
    the rule read on the whole document finds its value in this chunk, while
    the chunk alone may not show the label's depth or group): that value is
    offered instead of what the rule reads in ``source``."""
    props = schema.get("properties")
    if not locators or not isinstance(props, Mapping):
        return dict(schema)
    out = dict(schema)
    new_props = dict(props)
    known = {n: v for n, v in (located or {}).items() if n in locators and not locators[n].many}
    for name, rule in locators.items():
        if rule.number:
            continue  # a number field keeps its number grounding (``locator_numbers``)
        prop = props.get(name)
        if isinstance(prop, Mapping) and name in known:
            offered = _allowed(_string_node(prop), [known[name]], source)
            replaced = _offer(prop, offered, False) if offered else None
            if replaced is not None:
                new_props[name] = replaced
            continue
        absent = isinstance(prop, Mapping) and element_absent(rule, source)
        if not isinstance(prop, Mapping) or not rule.twins_agree(source) or (rule.off_depth(
                source) and not absent):  # (twins that read otherwise: the examples cannot
            continue  # say which place; its label only at a depth no example writes it at:
            # a nested key, unless its parent element does not hold it)
        values: list[Any] = [] if absent else (
            rule.blocks(source) if rule.continued and rule.many else rule.values(source))
        if not values and not absence_shown(rule, source):
            continue  # nothing says the field is empty here: its ordinary grounding holds
        if not rule.many:  # only values the field's own rules allow (its pattern, its line)
            values = _allowed(_string_node(prop), values, source)
        if not rule.many or rule.continued:
            values = values[:1]  # the place the rule reads (each example's value is its first)
        later = not rule.many and bool(values) and later_record_only(rule, source)
        replaced = _offer(prop, values, rule.many, whole_items=rule.items, null=later,
                          read=not rule.many and bool(values) and isinstance(values[0], str)
                          and read_cut(rule, values[0], source))
        if replaced is not None:
            new_props[name] = replaced
    out["properties"] = new_props
    return out


def _offer(node: Mapping[str, Any], values: list[Any], many: bool,
           whole_items: bool = False, null: bool = False,
           read: bool = False) -> dict[str, Any] | None:
    """``node`` with its grounded string nodes offering only ``values`` (none:
    the node's null branch, or an empty list); ``None`` when it has no such
    node to change (``null``: a single value's null branch kept beside
    ``values``). A list's ``values`` are its items, or (a continued
    locator's blocks) lists of items: exactly one of them. Under
    ``Grounded(clean=True)`` each value is offered with clean edges
    (``_clean_all``), so verification never refuses what the grammar offers.
    ``read``: a single value the rule reads where it cuts a token
    (``locator_whole.read_cut``): marked ``READ_KEY``, offered as it is."""
    mark = {READ_KEY: True} if read else {}
    if many:
        items = node.get("items")
        if node.get("type") != "array" or not isinstance(items, Mapping) or not (
                _grounded_string(items, whole_items)):
            return None
        if items.get(CLEAN_KEY) is True:
            values = [_clean_all(v) if isinstance(v, list) else v for v in _clean_all(values)]
        high = schema_max_items(node)
        low = int(node.get("minItems", 0))
        if values and all(isinstance(v, list) for v in values):
            if high is not None:
                values = [v[:high] for v in values]
            values = [v for v in values if len(v) >= low]
            return {**node, VALUES_KEY: values} if values else None  # one block's items
        if high is not None:  # the schema's own bound (the local dialect's only keeps
            values = values[:high]  # a reply finite: a list of located items is finite as it is)
        if len(values) < low:
            return None
        return {**node, VALUES_KEY: values}  # exactly these items, in document order
    branches = node.get("anyOf")
    if isinstance(branches, list):
        strings = [b for b in branches if isinstance(b, Mapping) and _grounded_string(b)]
        if len(strings) != 1:
            return None
        if strings[0].get(CLEAN_KEY) is True:
            values = _clean_all(values)
        if not values:
            rest = [b for b in branches if b is not strings[0]]
            return {**node, "anyOf": rest} if rest else None
        if null:  # found only in a later record: null (the first record's) beside it
            return {**node, "anyOf": [{**b, VALUES_KEY: values, **mark} if b is strings[0] else b
                                      for b in branches]}
        return {**strings[0], VALUES_KEY: values, **mark}  # found: one of them, never null
    if _grounded_string(node):
        if node.get(CLEAN_KEY) is True:
            values = _clean_all(values)
        return {**node, VALUES_KEY: values, **mark} if values else None
    return None


def _string_node(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The grounded string node of a single field: ``node`` itself, or its one
    grounded string branch of an ``anyOf``."""
    if _grounded_string(node):
        return node
    branches = node.get("anyOf")
    strings = [b for b in branches if isinstance(b, Mapping) and _grounded_string(b)] if (
        isinstance(branches, list)) else []
    return strings[0] if len(strings) == 1 else None


def _allowed(node: Mapping[str, Any] | None, values: list[Any], source: str) -> list[Any]:
    """The ``values`` the string ``node``'s own rules allow: its ``pattern``
    (unless Python cannot read it) and its line rule (``LINE_KEY``: the value
    occurs in ``source`` on such a line). A located value the field could
    never take is not offered (a part of a long document without the
    field's line: its null stays possible)."""
    if node is None:
        return values
    pattern, line = node.get("pattern"), node.get(LINE_KEY)
    if isinstance(pattern, str) and pattern:
        try:
            regex = re.compile(pattern)
            values = [v for v in values if not isinstance(v, str) or regex.search(v)
                      or regex.search(clean_edges(v))]  # (clean edges come later, in _offer)
        except re.error:
            pass
    if isinstance(line, str) and line:
        values = [v for v in values if not isinstance(v, str) or occurrences(v, source, line=line)]
    return values


def _clean_all(values: list[Any]) -> list[Any]:
    """``values`` under ``Grounded(clean=True)``: each string less the separator
    punctuation at its edges (``agentflow.grounding.edges``: ``Acme Ltd.,`` of
    a line that lists holders one a line is ``Acme Ltd.``), the empty ones
    dropped; lists (blocks) are left to the caller."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, str):
            value = clean_edges(value)
            if not value:
                continue
        out.append(value)
    return out


def _grounded_string(node: Mapping[str, Any], whole_items: bool = False) -> bool:
    """Whether ``node`` is a grounded string a locator may fix (a whole item
    only under an ``items`` rule, whose values are whole items)."""
    mark = node.get("x-grounded")
    marks = ("whole_tokens", "whole_lines", "whole_items") if whole_items else (
        "whole_tokens", "whole_lines")
    return node.get("type") == "string" and (mark is True or mark in marks) and (
        "enum" not in node)
