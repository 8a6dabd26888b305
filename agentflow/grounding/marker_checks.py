"""The check of an output type's ``Grounded()`` markers, before any request
(``grounding_plan``): each marker on a field that can hold it, each ``after``
naming an earlier sibling that holds one string, each ``longest`` on a field
with an anchored pattern; a JSON Schema output's ``"x-grounded-after"`` /
``"x-grounded-longest"`` held to the same rules (``agentflow.grounding``
documents them)."""

from __future__ import annotations

import re
import typing
from collections.abc import Collection, Mapping, Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from agentflow.errors import SchemaError
from agentflow.grounding.marked_types import (
    allows_marker,
    annotated_pattern,
    is_choice,
    is_text,
    is_union,
    object_fields,
    pattern_in,
    sequence_item,
    type_name,
    unwrap_annotated,
)
from agentflow.grounding.marker import (
    AFTER_KEY,
    GROUNDED_KEY,
    LONGEST_KEY,
    Grounded,
)
from agentflow.grounding.values import schema_marks
from agentflow.output.json_schema import SCHEMA_ATTRIBUTE

__all__ = ["grounding_plan"]


def grounding_plan(output_type: Any) -> bool:
    """Check every ``Grounded()`` marker of ``output_type``; whether it has any.

    Raises:
        SchemaError: a marker on a field that is not ``str``, ``str | None``
            or a list of them; whose ``after`` names no field declared
            before it in the same object, or one that holds no single
            string (a list, an object: it has no one place to follow); or
            ``longest`` on a field without a ``pattern`` that Python can
            read and that is anchored at both ends (``^...$``: a pattern a
            span only has to contain makes every value part of a longer
            one). Names the field, e.g. ``"Invoice.total"``. A JSON Schema
            output (``json_schema_output``) is held to the same rules for
            ``"x-grounded-after"`` and ``"x-grounded-longest"``.
    """
    given = getattr(output_type, SCHEMA_ATTRIBUTE, None)
    if isinstance(given, Mapping):  # a json_schema_output type: "x-grounded" in its schema
        _check_schema_rules(given, type_name(output_type))
        return schema_marks(given)
    found = False
    seen: set[int] = set()

    def visit(tp: Any, where: str, marks: list[Grounded], earlier: tuple[str, ...] = (),
              pattern: str | None = None, single: frozenset[str] = frozenset()) -> None:
        nonlocal found
        pattern = annotated_pattern(tp) or pattern
        if marks:
            if not allows_marker(tp):
                raise SchemaError(
                    where,
                    f"Grounded() applies to str fields (or a Literal/enum of strings) and the "
                    f"items of list[str], not to "
                    f"{type_name(tp)}; remove the marker or change the field's type",
                )
            for marker in marks:
                if marker.after is not None:
                    _check_after(where, marker.after, earlier, single)
                if marker.longest:
                    _check_longest(where, pattern or _item_pattern(tp))
            found = True
        tp, inner = unwrap_annotated(tp)
        if inner:
            visit(tp, where, inner, earlier, pattern, single)
            return
        if is_union(tp):
            for arg in get_args(tp):
                visit(arg, where, [], earlier, None, single)
            return
        item = sequence_item(tp)
        if item is not None:
            visit(item, where, [], earlier, None, single)
            return
        if get_origin(tp) in (dict, Mapping, typing.Mapping) and len(get_args(tp)) == 2:
            visit(get_args(tp)[1], where, [])
            return
        fields = object_fields(tp)
        if fields is None or id(tp) in seen:
            return
        seen.add(id(tp))
        names = tuple(name for name, _, _ in fields)
        strings = frozenset(name for name, ann, _ in fields if _one_string(ann))
        infos = tp.model_fields if isinstance(tp, type) and issubclass(tp, BaseModel) else {}
        for i, (name, ann, field_marks) in enumerate(fields):
            visit(ann, f"{type_name(tp)}.{name}", field_marks, names[:i],
                  pattern_in(infos[name].metadata) if name in infos else None, strings)

    visit(output_type, type_name(output_type), [])
    return found


def _one_string(tp: Any) -> bool:
    """Whether a field of type ``tp`` holds one string (``str``, a choice of
    strings, or either ``| None``): a value with one place in the source."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not type(None)]
        return bool(args) and all(_one_string(a) for a in args)
    return is_text(tp) or is_choice(tp)


def _item_pattern(tp: Any) -> str | None:
    """The ``pattern`` of the items of a list field (a marker on the list
    grounds each item, and each item's pattern says what it looks like)."""
    item = sequence_item(unwrap_annotated(tp)[0])
    return annotated_pattern(item) if item is not None else None


def _check_after(where: str, after: str, earlier: Sequence[str], single: Collection[str],
                 rule: str = "Grounded(after={!r})") -> None:
    """``after`` must name an earlier sibling that holds one string (``rule``:
    how the message names the declaration)."""
    if after not in earlier:
        raise SchemaError(
            where,
            f"{rule.format(after)} must name a field declared before this one in the "
            f"same object"
            + (f" (those are: {', '.join(earlier)})" if earlier else " (this is its first field)"),
        )
    if after not in single:
        raise SchemaError(
            where,
            f"{rule.format(after)} must name a field that holds one string (str, "
            f"str | None, a Literal or str enum); {after!r} holds a list or an object, which "
            f"has no one place in the document to follow",
        )


def _check_longest(where: str, pattern: str | None, rule: str = "Grounded(longest=True)") -> None:
    """``longest`` needs a pattern Python reads, anchored at both ends (``rule``:
    how the message names the declaration)."""
    if pattern is None:
        raise SchemaError(
            where,
            f"{rule} needs a pattern on the field (Field(pattern=...)) "
            "that says what a whole value looks like",
        )
    try:
        re.compile(pattern)
    except re.error as exc:
        raise SchemaError(
            where,
            f"{rule} needs a pattern Python's re module can read to find "
            f"longer values; {pattern!r} is not one: {exc}",
        ) from None
    if not (pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")):
        raise SchemaError(
            where,
            f"{rule} needs a pattern anchored at both ends ('^...$'): a JSON "
            f"Schema pattern is searched, so {pattern!r} also matches every longer span that "
            f"contains a match, and no value would be whole",
        )


def _check_schema_rules(node: Any, where: str) -> None:
    """The ``"x-grounded-after"`` / ``"x-grounded-longest"`` keywords of a
    JSON Schema output, held to ``Grounded``'s rules (see ``grounding_plan``)."""
    if isinstance(node, list):
        for n in node:
            _check_schema_rules(n, where)
        return
    if not isinstance(node, Mapping):
        return
    props = node.get("properties")
    if isinstance(props, Mapping):
        keys = list(props)
        strings = {k for k, p in props.items() if _schema_string(p)}
        for i, (key, prop) in enumerate(props.items()):
            for leaf in _schema_leaves(prop):
                after = leaf.get(AFTER_KEY)
                if after is not None:
                    if not isinstance(after, str):
                        raise SchemaError(f"{where}.{key}",
                                          f"{AFTER_KEY} must be a property name, not {after!r}")
                    _check_after(f"{where}.{key}", after, keys[:i], strings,
                                 f'"{AFTER_KEY}": {{!r}}')
                if leaf.get(LONGEST_KEY) is True:
                    pattern = leaf.get("pattern")
                    _check_longest(f"{where}.{key}", pattern if isinstance(pattern, str) else None,
                                   f'"{LONGEST_KEY}"')
    for key, value in node.items():
        if key != "properties":
            _check_schema_rules(value, where)
    if isinstance(props, Mapping):
        for key, prop in props.items():
            _check_schema_rules(prop, f"{where}.{key}")


def _schema_leaves(node: Any) -> list[Mapping[str, Any]]:
    """A property's string nodes: itself, its ``anyOf``/``oneOf`` branches,
    its ``items`` (a list's items carry the item's keywords)."""
    if not isinstance(node, Mapping):
        return []
    found = [node] if GROUNDED_KEY in node else []
    for branch in node.get("anyOf", ()) or node.get("oneOf", ()) or ():
        found += _schema_leaves(branch)
    if isinstance(node.get("items"), Mapping):
        found += _schema_leaves(node["items"])
    return found


def _schema_string(node: Any) -> bool:
    """Whether a property's schema holds one string (or null)."""
    if not isinstance(node, Mapping):
        return False
    if "$ref" in node:
        return True  # a named definition (an enum, as pydantic writes one): not looked into
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list):
        return bool(branches) and all(_schema_string(b) for b in branches)
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds} if isinstance(kinds, str) else set()
    choices = node.get("enum", [node["const"]] if "const" in node else None)
    return (kinds <= {"string", "null"} and "string" in kinds) or bool(
        choices and all(isinstance(c, str | None) for c in choices))
