"""The grounded strings of a validated output (``grounded_values``), found
by walking it along its type (pydantic models, dataclasses, TypedDicts,
lists, unions) or its JSON Schema. What the type's annotations say (markers,
unions, fields) is read by ``agentflow.grounding.marked_types``, once per
annotation (``agentflow.grounding.type_reading``)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from agentflow._lru import LRU, per_type
from agentflow._slots_init import slot_init
from agentflow.grounding.marked_types import (
    NONE_TYPE,
    is_derived,
    object_fields,
    pattern_in,
)
from agentflow.grounding.marker import (
    AFTER_KEY,
    CLEAN_KEY,
    DERIVED_KEY,
    GROUNDED_KEY,
    LINE_KEY,
    LONGEST_KEY,
    MARKS,
    WHOLE_ITEMS,
    WHOLE_LINES,
    WHOLE_TOKENS,
    Grounded,
)
from agentflow.grounding.type_reading import reading
from agentflow.grounding.typed_leaves import TypedValue, is_typed, schema_typed

__all__ = ["GroundedValue", "TypedValue", "grounded_values", "schema_marks"]


@slot_init
@dataclass(frozen=True, slots=True)
class GroundedValue:
    """One grounded string of an output: its field path, value and rules.

    ``optional``: ``None`` was allowed where this value stands.
    ``pattern``: the field's JSON Schema ``pattern`` (``Field(pattern=...)``,
    ``StringConstraints``), read only when ``marker.longest`` needs it.
    """

    path: str
    value: str
    marker: Grounded
    optional: bool = False
    pattern: str | None = None


_COLLECTIONS = (list, tuple, set, frozenset)
"""The sequences the walk goes into (a tuple, not ``list | tuple | ...``: no
union made per leaf)."""


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def grounded_values(
    value: Any, output_type: Any, default: Grounded | None = None,
    typed: list[TypedValue] | None = None,
) -> list[GroundedValue]:
    """The grounded strings of a validated output, in schema order.

    Args:
        value: the validated output (an instance of ``output_type``).
        output_type: the type it was validated as.
        default: the marker applied to every free-text string leaf not
            marked itself (``None``: only marked fields are grounded).
        typed: under ``default``, gets every number and date leaf not
            ``Derived()`` (``TypedValue``; a JSON Schema output: a node the
            default marks ``TYPED_KEY``), in schema order.
    """
    out: list[GroundedValue] = []
    numbers = typed if default is not None else None

    def walk(v: Any, tp: Any, path: str, marker: Grounded | None, optional: bool,
             pattern: str | None = None) -> None:
        if v is None:
            return
        read = reading(tp)  # what the annotation says, read once per annotation
        marks = read.marks
        marker = marks[-1] if marks else marker
        if marker is not None and marker.longest and read.annotated:
            pattern = read.pattern or pattern  # read only when needed
        if read.branches is not None:
            for arg in read.branches:
                if arg is not NONE_TYPE and reading(arg).matches(v):
                    walk(v, arg, path, marker, optional or read.nullable, pattern)
                    return
            return
        kind = type(v)
        if numbers is not None and read.by_value and is_typed(v, read.bare):
            numbers.append(TypedValue(path or "result", v, optional))
            return
        if kind is str or isinstance(v, str):
            chosen = marker or default
            if chosen is not None and read.text and not isinstance(v, Enum):
                out.append(GroundedValue(path or "result", v, chosen, optional,
                                         pattern if chosen.longest else None))
            elif marker is not None and read.choice:  # only a marker grounds a choice
                label = v.value if isinstance(v, Enum) else v
                out.append(GroundedValue(path or "result", label,
                                         dataclasses.replace(marker, case_sensitive=False),
                                         optional))
            return
        if isinstance(v, _COLLECTIONS):
            item, places = read.item, read.places  # a fixed-length tuple: each place its own
            for i, x in enumerate(v):
                walk(x, places[i] if i < len(places) else item, f"{path}[{i}]", marker, False)
            return
        if isinstance(v, dict):
            vt = read.value
            for k, x in v.items():
                walk(x, vt, _join(path, str(k)), None, False)
            return
        given = reading(kind).schema  # (a pydantic class's own getattr raises when absent)
        if given is not None and isinstance(given, Mapping) and isinstance(v, BaseModel):
            out.extend(_schema_values(v.model_extra or {}, given, path, default, numbers))
            return
        steps = _steps(read.bare if read.typeddict else kind)
        if steps is None:
            return
        for name, ann, own, pattern in steps:
            child = v.get(name) if isinstance(v, dict) else getattr(v, name, None)
            walk(child, ann, _join(path, name), own, False, pattern)

    plan = _model_plan(output_type) if value.__class__ is output_type else None
    if plan is None:
        walk(value, output_type, "", None, False)
        return out
    for name, ann, own, pattern, leaf in plan:  # a model's own fields, as ``walk`` reads them
        child = getattr(value, name, None)
        if child is None:
            continue
        if leaf is not None and child.__class__ is str:  # a text leaf: read in the plan
            marker, optional, leaf_pattern = leaf
            chosen = marker or default
            if chosen is not None:
                out.append(GroundedValue(name, child, chosen, optional,
                                         leaf_pattern if chosen.longest else None))
            continue
        walk(child, ann, name, own, False, pattern)
    return out


_Step = tuple[str, Any, Grounded | None, str | None]
_Leaf = tuple[Grounded | None, bool, str | None]
_PLANS: LRU[Any, tuple[Any, tuple[tuple[str, Any, Grounded | None, str | None, _Leaf | None],
                                  ...] | None]] = LRU(256)


def _model_plan(cls: Any) -> tuple[tuple[str, Any, Grounded | None, str | None, _Leaf | None],
                                   ...] | None:
    """The fields ``grounded_values`` walks into on an output that is exactly
    ``cls`` (a pydantic model whose annotation carries no marker, union or
    schema of its own), each with what ``walk`` would read for a ``str``
    value there when that takes no look at the value (``_text_leaf``);
    ``None`` for any other type (walked whole). Kept per type."""
    return per_type(_PLANS, cls, _read_plan)


def _read_plan(cls: Any) -> tuple[tuple[str, Any, Grounded | None, str | None, _Leaf | None],
                                  ...] | None:
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or issubclass(
            cls, (*_COLLECTIONS, dict, str)):
        return None
    read = reading(cls)
    if (read.marks or read.branches is not None or read.by_value or read.text
            or read.typeddict or read.schema is not None):
        return None
    steps = _steps(cls)
    if steps is None:
        return None
    return tuple((*step, _text_leaf(*step)) for step in steps)


def _text_leaf(name: str, ann: Any, own: Grounded | None, pattern: str | None) -> _Leaf | None:
    """What ``walk`` does with a ``str`` value (exactly ``str``: no enum) of a
    field annotated ``ann`` (own marker ``own``): its marker (before the
    default), whether ``None`` was allowed, its pattern; ``None`` unless
    the annotation is free text (``str``, annotated or not) or a union of
    it with ``None`` only (the walk then takes the text branch)."""
    read = reading(ann)
    marker = read.marks[-1] if read.marks else own
    if marker is not None and marker.longest and read.annotated:
        pattern = read.pattern or pattern
    optional = False
    if read.branches is not None:
        others = [arg for arg in read.branches if arg is not NONE_TYPE]
        if len(others) != 1:
            return None
        optional = read.nullable
        read = reading(others[0])
        if read.match != ("type", str):
            return None  # the walk asks the branch whether the value is of it
        marker = read.marks[-1] if read.marks else marker
        if marker is not None and marker.longest and read.annotated:
            pattern = read.pattern or pattern
    if read.branches is not None or not read.text or read.by_value:
        return None
    return marker, optional, pattern


_STEPS: LRU[Any, tuple[Any, tuple[tuple[str, Any, Grounded | None, str | None], ...] | None]] = (
    LRU(256))


def _steps(cls: Any) -> tuple[tuple[str, Any, Grounded | None, str | None], ...] | None:
    """The fields ``grounded_values`` walks into on an object of type ``cls``:
    ``(name, annotation, own marker, pattern)`` each (the pattern only where
    the own marker is ``longest``), without those ``Derived()`` leaves out
    (not copied, so the default does not ground them); ``None``: not an
    object type. Kept per type, as ``object_fields``."""
    return per_type(_STEPS, cls, _read_steps)


def _read_steps(cls: Any) -> tuple[tuple[str, Any, Grounded | None, str | None], ...] | None:
    fields = object_fields(cls)
    if fields is None:
        return None
    infos = cls.model_fields if isinstance(cls, type) and issubclass(cls, BaseModel) else {}
    hints = _raw_hints(cls) if not infos else {}
    steps = []
    for name, ann, field_marks in fields:
        own = field_marks[-1] if field_marks else None
        if own is None and is_derived(infos[name].annotation if name in infos
                                      else hints.get(name),
                                      infos[name].metadata if name in infos else ()):
            continue
        pattern = (pattern_in(infos[name].metadata) if own is not None and own.longest
                   and name in infos else None)
        steps.append((name, ann, own, pattern))
    return tuple(steps)


def _raw_hints(tp: Any) -> dict[str, Any]:
    """A dataclass's or TypedDict's annotations with their ``Annotated`` extras."""
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:  # an unresolvable forward reference: no markers read
        return {}


def schema_marks(node: Any) -> bool:
    """Whether a JSON Schema marks any node ``"x-grounded"``."""
    if isinstance(node, Mapping):
        return node.get(GROUNDED_KEY) in MARKS or any(
            schema_marks(v) for v in node.values())
    if isinstance(node, list):
        return any(schema_marks(v) for v in node)
    return False


def _schema_marker(node: Mapping[str, Any], inherited: Grounded | None) -> Grounded | None:
    mark = node.get(GROUNDED_KEY)
    if mark in MARKS:
        line = node.get(LINE_KEY)
        after = node.get(AFTER_KEY)
        return Grounded(whole_tokens=mark == WHOLE_TOKENS, whole_lines=mark == WHOLE_LINES,
                        whole_items=mark == WHOLE_ITEMS,
                        line=line if isinstance(line, str) else None,
                        after=after if isinstance(after, str) and after.isidentifier() else None,
                        longest=node.get(LONGEST_KEY) is True, clean=node.get(CLEAN_KEY) is True)
    return inherited


def _schema_values(value: Any, root: Mapping[str, Any], path: str,
                   default: Grounded | None,
                   typed: list[TypedValue] | None = None) -> list[GroundedValue]:
    """The grounded strings of an output validated against the JSON Schema
    ``root`` (a ``json_schema_output`` type): each string whose schema node
    says ``"x-grounded"`` (``true``, ``"whole_tokens"``, ``"whole_lines"`` or
    ``"whole_items"``), and under
    ``default`` every free-text string (not ``enum``/``const``); ``$ref`` to
    ``#/$defs`` or ``#/definitions`` and ``anyOf``/``oneOf`` are followed."""
    out: list[GroundedValue] = []

    def resolve(node: Any, depth: int = 0) -> Mapping[str, Any]:
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and depth < 32:
            ref = node["$ref"]
            target: Any = root
            for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            node, depth = target if ref.startswith("#/") else {}, depth + 1
        return node if isinstance(node, Mapping) else {}

    def kind_of(v: Any) -> str:
        return ("null" if v is None else "string" if isinstance(v, str) else
                "array" if isinstance(v, list) else "object" if isinstance(v, dict) else
                "boolean" if isinstance(v, bool) else
                "integer" if isinstance(v, int) else "number" if isinstance(v, float) else "")

    def walk(v: Any, node: Any, where: str, optional: bool) -> None:
        if isinstance(node, Mapping) and node.get(DERIVED_KEY) is True and not schema_marks(node):
            return  # Derived(): the default leaves it alone
        node = resolve(node)
        branches = node.get("anyOf") or node.get("oneOf")
        if isinstance(branches, list):
            nullable = any(resolve(b).get("type") == "null" for b in branches)
            for branch in map(resolve, branches):
                kinds = branch.get("type")
                kinds = kinds if isinstance(kinds, list) else [kinds]
                kind = kind_of(v)
                if kind in kinds or (kind == "integer" and "number" in kinds) or (
                        None in kinds and v is not None):
                    walk(v, branch, where, optional or nullable)
                    return
            return
        if typed is not None and default is not None and schema_typed(v, node, where, optional,
                                                                        typed):
            return
        if isinstance(v, str):
            marker = _schema_marker(node, default)
            if marker is not None and "enum" not in node and "const" not in node:
                pattern = node.get("pattern")
                out.append(GroundedValue(where or "result", v, marker, optional,
                                         pattern if isinstance(pattern, str) else None))
            elif node.get(GROUNDED_KEY) in MARKS and marker is not None:  # a marked choice
                out.append(GroundedValue(where or "result", v,
                                         dataclasses.replace(marker, case_sensitive=False),
                                         optional))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, node.get("items", {}), f"{where}[{i}]", False)
        elif isinstance(v, dict):
            props = node.get("properties", {})
            extra = node.get("additionalProperties", {})
            required = set(node.get("required", ()))
            for k, x in v.items():
                walk(x, props.get(k, extra if isinstance(extra, Mapping) else {}),
                     _join(where, str(k)), k not in required)

    walk(value, root, path, False)
    return out

