"""What an output type says to grounding: its annotations read for the
``Grounded()`` and ``Derived()`` markers they carry (``Annotated`` unwrapped,
unions, free-text strings, choices of strings, sequences and their items,
fixed-length tuples), an object type's fields with their markers (pydantic
models, dataclasses, TypedDicts; kept per type), and the ``pattern`` a field
declares. Shared by the walk of ``agentflow.grounding.values``,
``grounding_plan`` (``marker_checks``), the locators and the hand rules."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import is_typeddict

from agentflow._lru import LRU, per_type
from agentflow.grounding.marker import Derived, Grounded

__all__ = [
    "NONE_TYPE",
    "allows_marker",
    "annotated_pattern",
    "field_markers",
    "is_choice",
    "is_derived",
    "is_text",
    "is_union",
    "object_fields",
    "pattern_in",
    "sequence_item",
    "tuple_places",
    "type_name",
    "unwrap_annotated",
]

NONE_TYPE = type(None)
"""The type of ``None``: the branch an optional field's union adds."""
_SEQUENCES = (list, tuple, set, frozenset, Sequence, typing.Sequence)


def unwrap_annotated(tp: Any) -> tuple[Any, list[Grounded]]:
    """``tp`` without ``Annotated``, and the ``Grounded`` markers it carried."""
    markers: list[Grounded] = []
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        markers += [m for m in args[1:] if isinstance(m, Grounded)]
        tp = args[0]
    return tp, markers


def is_union(tp: Any) -> bool:
    """Whether ``tp`` is a union (``Union[a, b]``, ``a | b``, ``Optional[a]``)."""
    return get_origin(tp) in (Union, types.UnionType)


def is_text(tp: Any) -> bool:
    """A free-text string type: ``str`` or a subclass, never an enum."""
    return isinstance(tp, type) and issubclass(tp, str) and not issubclass(tp, Enum)


def is_choice(tp: Any) -> bool:
    """A choice of strings: a ``Literal`` of strings or a ``str`` enum (a field
    a marker may ground, the default never does)."""
    if get_origin(tp) is Literal:
        return all(isinstance(a, str) for a in get_args(tp))
    return isinstance(tp, type) and issubclass(tp, Enum) and issubclass(tp, str)


def sequence_item(tp: Any) -> Any | None:
    """The item type of a list/tuple/set type, else ``None``."""
    origin = get_origin(tp)
    if origin is None:
        return Any if tp in (list, tuple, set, frozenset) else None
    if origin not in _SEQUENCES and not (
        isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset))
    ):
        return None
    args = get_args(tp)
    if not args:
        return Any
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return None  # fixed-length tuples: not a list
    return args[0]


def tuple_places(tp: Any) -> tuple[Any, ...]:
    """The type of each place of a fixed-length tuple type (``tuple[int, str]``
    -> ``(int, str)``), else ``()``."""
    args = get_args(tp)
    if get_origin(tp) is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return args
    return ()


_FIELDS: LRU[Any, tuple[Any, list[tuple[str, Any, list[Grounded]]] | None]] = LRU(256)
"""``object_fields`` per type, with what they were read from (a pydantic model's
``model_fields`` mapping: a rebuilt model reads them again)."""


def object_fields(tp: Any) -> list[tuple[str, Any, list[Grounded]]] | None:
    """``(name, annotation, markers)`` of an object type's fields, in order
    (kept per type: every output of a run walks the same ones; not to be
    changed by the caller)."""
    return per_type(_FIELDS, tp, _read_fields)


def _read_fields(tp: Any) -> list[tuple[str, Any, list[Grounded]]] | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        out = []
        for name, info in tp.model_fields.items():
            ann, marks = unwrap_annotated(info.annotation)
            out.append((name, ann, marks + field_markers(info)))
        return out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return [(f.name, *unwrap_annotated(hints.get(f.name, Any))) for f in dataclasses.fields(tp)]
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return [(name, *unwrap_annotated(ann)) for name, ann in hints.items()]
    return None


def field_markers(info: FieldInfo) -> list[Grounded]:
    """The ``Grounded`` markers among a pydantic field's metadata
    (``Annotated`` on the field itself, which pydantic moves there)."""
    return [m for m in info.metadata if isinstance(m, Grounded)]


def is_derived(tp: Any, metadata: Iterable[Any] = ()) -> bool:
    """Whether a field (its annotation ``tp``, its ``FieldInfo.metadata``)
    is marked ``Derived()`` (at any ``Annotated`` level, or in a union branch)."""
    if any(isinstance(m, Derived) for m in metadata):
        return True
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        if any(isinstance(m, Derived) for m in args[1:]):
            return True
        tp = args[0]
    return is_union(tp) and any(is_derived(a) for a in get_args(tp))


def allows_marker(tp: Any) -> bool:
    """A marker may sit on ``str``, a choice of strings (``Literal``, ``str``
    enum), their ``| None`` and sequences of those."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not NONE_TYPE]
        return bool(args) and all(allows_marker(a) for a in args)
    if is_text(tp) or is_choice(tp):
        return True
    item = sequence_item(tp)
    return item is not None and item is not Any and allows_marker(item)


def type_name(tp: Any) -> str:
    """``tp``'s name for messages (``Invoice``), else its ``str``."""
    return getattr(tp, "__name__", None) or str(tp)


def pattern_in(metadata: Iterable[Any]) -> str | None:
    """The ``pattern`` among a field's metadata (``Field(pattern=...)``,
    ``StringConstraints(pattern=...)``, a nested ``FieldInfo``)."""
    for m in metadata:
        if isinstance(m, FieldInfo):
            found = pattern_in(m.metadata)
            if found is not None:
                return found
        elif isinstance(getattr(m, "pattern", None), str):
            return str(m.pattern)
    return None


def annotated_pattern(tp: Any) -> str | None:
    """The ``pattern`` in ``tp``'s ``Annotated`` metadata, outermost first."""
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        found = pattern_in(args[1:])
        if found is not None:
            return found
        tp = args[0]
    return None
