"""What the walk of ``agentflow.grounding.values`` reads of one annotation
(``reading``): its ``Annotated`` markers and pattern, its union branches,
whether it is free text, a choice, a number or date type, a sequence (its
item type, a fixed-length tuple's places), a mapping's value type, a
TypedDict. All of it depends on the annotation only, so it is read once per
annotation object and kept (an output's walk then costs a lookup per leaf,
not a reading of ``typing`` per leaf and per document).

Kept by identity (``id``, with the annotation held so the id is not reused),
never by equality: two annotations that compare equal (``Annotated[str, 1]``
and ``Annotated[str, True]``) are still read each for itself, and an
unhashable one is kept all the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from typing_extensions import is_typeddict

from agentflow.grounding.marked_types import (
    NONE_TYPE,
    annotated_pattern,
    is_choice,
    is_text,
    is_union,
    sequence_item,
    tuple_places,
    unwrap_annotated,
)
from agentflow.grounding.marker import Grounded
from agentflow.grounding.typed_leaves import reads_by_value
from agentflow.output.json_schema import SCHEMA_ATTRIBUTE

__all__ = ["TypeReading", "reading"]

_MAX_KEPT = 4096
"""Annotations kept at most; past that the cache starts again (a program that
makes fresh types per request keeps no more than this)."""


@dataclass(frozen=True, slots=True)
class TypeReading:
    """One annotation as ``grounded_values`` walks it.

    Attributes:
        bare: the annotation without ``Annotated``.
        marks: the ``Grounded`` markers its ``Annotated`` layers carry.
        annotated: it has an ``Annotated`` layer.
        pattern: the ``pattern`` of its ``Annotated`` metadata (outermost first).
        branches: a union's members (``None``: not a union).
        nullable: a union with ``None`` among its members.
        text: free text (``marked_types.is_text``).
        choice: a choice of strings (``marked_types.is_choice``).
        by_value: a number or date type (``typed_leaves.reads_by_value``).
        item: a sequence's item type (``Any`` when it names none).
        places: a fixed-length tuple's place types (``()`` otherwise).
        value: a mapping's value type (``Any`` when it names none).
        typeddict: a ``TypedDict`` (walked by its own fields).
        schema: the JSON Schema a ``json_schema_output`` class carries
            (``SCHEMA_ATTRIBUTE``; ``None`` for any other annotation).
        match: how a value is of this union branch (``matches``): ``("literal",
            values)``, ``("any", None)``, ``("type", origin)`` or ``("none", None)``.
    """

    bare: Any
    marks: tuple[Grounded, ...]
    annotated: bool
    pattern: str | None
    branches: tuple[Any, ...] | None
    nullable: bool
    text: bool
    choice: bool
    by_value: bool
    item: Any
    places: tuple[Any, ...]
    value: Any
    typeddict: bool
    schema: Any
    match: tuple[str, Any]

    def matches(self, v: Any) -> bool:
        """Whether a validated ``v`` is of this annotation as a union branch."""
        kind, what = self.match
        if kind == "type":
            return isinstance(v, what)
        if kind == "literal":
            return v in what
        return kind == "any"


def _read(tp: Any) -> TypeReading:
    bare, marks = unwrap_annotated(tp)
    args = get_args(bare)
    origin = get_origin(bare) or bare
    if origin is Literal:
        match: tuple[str, Any] = ("literal", args)
    elif bare is Any:
        match = ("any", None)
    elif isinstance(origin, type):
        match = ("type", origin)
    else:
        match = ("none", None)
    union = is_union(bare)
    return TypeReading(
        bare=bare, marks=tuple(marks), annotated=bare is not tp,
        pattern=annotated_pattern(tp) if bare is not tp else None,
        branches=args if union else None, nullable=union and NONE_TYPE in args,
        text=is_text(bare), choice=is_choice(bare), by_value=reads_by_value(bare),
        item=sequence_item(bare) or Any, places=tuple_places(bare),
        value=args[1] if len(args) == 2 else Any, typeddict=is_typeddict(bare),
        schema=getattr(bare, SCHEMA_ATTRIBUTE, None) if isinstance(bare, type) else None,
        match=match)


_KEPT: dict[int, tuple[Any, TypeReading]] = {}


def reading(tp: Any) -> TypeReading:
    """``tp`` as the walk reads it, read once per annotation object (see the
    module docstring). Shared: not to be changed by the caller."""
    kept = _KEPT.get(id(tp))
    if kept is not None and kept[0] is tp:
        return kept[1]
    read = _read(tp)
    if len(_KEPT) >= _MAX_KEPT:
        _KEPT.clear()
    _KEPT[id(tp)] = (tp, read)
    return read

