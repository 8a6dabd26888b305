"""The grounded leaves of an object's fields that a grammar can hold in
document order (``Grounded(after=...)``, ``agentflow.output.grammar_order``),
and where each leaf's values may be copied from: the places a bound is read
from and applied to. Pure functions of the schema and the source
(``grammar_rules.RuleBuilder.ordered_object`` spells the rules)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from agentflow.grounding.locate import occurrences
from agentflow.grounding.longest import maximal
from agentflow.output.grammar_marks import (
    _GROUNDED,
    _LINE,
    _LONGEST,
    _MARKS,
    _SOURCE,
    _WHOLE_ITEMS,
    _WHOLE_LINES,
    _WHOLE_TOKENS,
)
from agentflow.output.grammar_order import ListShape
from agentflow.output.grammar_values import MAX_CANDIDATES, Place, item_places, places

__all__ = ["field_leaf", "leaf_places", "resolve"]


def field_leaf(prop: Mapping[str, Any], root: Mapping[str, Any], item_sep: str
               ) -> tuple[Mapping[str, Any], bool, ListShape | None] | None:
    """The grounded leaf of a field that may be held in order: its node
    (a grounded string, a grounded choice, a whole item; ``$ref``
    followed), whether the field allows ``null``, and for a list of
    such leaves its shape (``item_sep``: the Lark literal between items);
    ``None`` for any other field."""
    resolved = functools.partial(resolve, root)
    prop = resolved(prop)
    one = _leaf(prop, resolved)
    if one is not None:
        return one[0], one[1], None
    kinds = prop.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    branches = prop.get("anyOf") or prop.get("oneOf")
    nullable = "null" in kinds
    if isinstance(branches, list) and len(branches) == 2:
        lists = [resolved(b) for b in branches
                 if isinstance(b, Mapping) and b.get("type") != "null"]
        if len(lists) != 1 or len(branches) - len(lists) != 1:
            return None
        prop, kinds, nullable = lists[0], {lists[0].get("type")}, True
    item = prop.get("items")
    if "array" not in kinds or not isinstance(item, Mapping):
        return None
    inner = _leaf(resolved(item), resolved)
    if inner is None or inner[1]:
        return None  # items that may be null: built as any other list
    high = prop.get("maxItems")
    in_order = (inner[0].get(_GROUNDED) == _WHOLE_ITEMS and "enum" not in inner[0]
                and "const" not in inner[0])
    shape = ListShape(int(prop.get("minItems", 0)), int(high) if high is not None else None,
                      item_sep, in_order)
    return inner[0], nullable, shape


def resolve(root: Mapping[str, Any], node: Any) -> Mapping[str, Any]:
    """``node`` with a ``$ref`` into ``$defs`` followed (a grounded enum's
    marks are on its definition)."""
    for _ in range(32):
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
            break
        node = root.get("$defs", {}).get(ref.split("/")[-1], {})
    return node if isinstance(node, Mapping) else {}


def leaf_places(leaf: Mapping[str, Any], source: str, cuts: Callable[[bool], list[int]],
                taken: frozenset[tuple[int, int]]) -> list[Place] | None:
    """Where a grounded leaf's values may be copied from, ``None`` when
    they cannot be listed: a string's (``grammar_values.places``; under
    ``longest``, only the maximal ones), a choice's labels where they
    occur (``locate.occurrences``, letter case ignored, under its marks),
    a whole item's items (less ``taken``: those an earlier pass took);
    more than ``MAX_CANDIDATES`` places: ``None``. ``cuts(whole_tokens)``:
    the offsets of the source's chunks (pieces)."""
    mark = leaf.get(_GROUNDED)
    line = leaf.get(_LINE) if isinstance(leaf.get(_LINE), str) else None
    if "enum" in leaf or "const" in leaf:
        labels = leaf["enum"] if "enum" in leaf else [leaf["const"]]
        found = sorted(((label, a, b) for label in labels if isinstance(label, str)
                        for a, b in occurrences(
                            label, source, case_sensitive=False,
                            whole_tokens=mark == _WHOLE_TOKENS,
                            whole_lines=mark == _WHOLE_LINES,
                            whole_items=mark == _WHOLE_ITEMS, line=line)),
                       key=lambda p: (p[1], p[2]))
    elif mark == _WHOLE_ITEMS:
        found = item_places(source, leaf.get("pattern"), line, taken)
    elif mark in _SOURCE:
        listed = places(source, cuts(mark is not True), leaf.get("pattern"), line,
                        whole_lines=mark == _WHOLE_LINES)
        if listed is None:
            return None
        return maximal(listed) if leaf.get(_LONGEST) is True else listed
    else:
        return None
    return found if len(found) <= MAX_CANDIDATES else None


def _leaf(prop: Mapping[str, Any], resolve: Callable[[Any], Mapping[str, Any]]
          ) -> tuple[Mapping[str, Any], bool] | None:
    """The grounded leaf of a field that holds one value (a grounded string,
    a grounded choice of strings, a whole item; ``str | None`` and the like)
    and whether it allows ``null``; ``None`` for any other field."""
    kinds = prop.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    mark = prop.get(_GROUNDED)
    choices = prop.get("enum", [prop["const"]] if "const" in prop else None)
    if isinstance(choices, list) and choices and mark in _MARKS:
        strings = [c for c in choices if c is not None]
        if strings and all(isinstance(c, str) for c in strings):
            return prop, "null" in kinds or None in choices
        return None
    if mark in _MARKS and "string" in kinds and kinds <= {"string", "null"}:
        return prop, "null" in kinds
    branches = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(branches, list) and len(branches) == 2:
        resolved = [resolve(b) for b in branches]
        strings = [b for b in resolved if b.get("type") != "null"]
        if len(strings) == 1 and len(resolved) - len(strings) == 1:
            inner = _leaf(strings[0], resolve)
            return (inner[0], True) if inner is not None else None
    return None
