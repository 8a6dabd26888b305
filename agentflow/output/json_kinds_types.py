"""The declared types ``json_kinds`` follows beside a validated value, where
the value alone does not tell how it was read: a ``TypedDict`` validates into
a plain ``dict`` keyed by its fields' names (the model wrote their aliases),
and a ``dict[K, V]`` may read two written keys as one key of ``K``
(``{"1": .., "01": ..}`` for ``dict[int, X]``: pydantic keeps the last value).

``narrow(tp, read)`` is the part of the annotation ``tp`` (through
``Annotated``, ``NewType``, ``type`` aliases and unions) that the value
``read`` was validated as, for a mapping or a sequence; ``None`` where that is
not known, and the check goes on without types, as before.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from typing_extensions import ReadOnly, is_typeddict

from agentflow._lru import LRU, per_type

__all__ = ["converts_keys", "field_type", "item_type", "key_groups", "mapping_value", "narrow",
           "typeddict_fields"]

_WRAPPERS = (typing.Required, typing.NotRequired, ReadOnly)
_SEQUENCES = (list, tuple, set, frozenset)


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated``, ``Required``/``NotRequired``/``ReadOnly``,
    ``NewType`` or a ``type`` alias statement around it."""
    for _ in range(20):
        origin = typing.get_origin(tp)
        if origin is typing.Annotated or origin in _WRAPPERS:
            tp = typing.get_args(tp)[0]
        elif isinstance(tp, typing.NewType):
            tp = tp.__supertype__
        elif type(tp).__name__ == "TypeAliasType":
            tp = tp.__value__
        else:
            return tp
    return tp


def _is_mapping_type(tp: Any) -> bool:
    origin = typing.get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, Mapping) and not is_typeddict(tp)


def _is_sequence_type(tp: Any) -> bool:
    origin = typing.get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, _SEQUENCES)


def narrow(tp: Any, read: Any) -> Any:
    """The branch of ``tp`` the mapping or sequence ``read`` was validated as
    (a ``TypedDict`` holding every key of ``read``, else a mapping type; a
    sequence type), or ``None`` when ``tp`` does not say."""
    tp = _strip(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        branches = [b for b in (narrow(a, read) for a in typing.get_args(tp)) if b is not None]
        if isinstance(read, Mapping):  # a TypedDict that has every key, before a dict
            fits = [b for b in branches if is_typeddict(b)
                    and read.keys() <= dict(typeddict_fields(b)).keys()]
            branches = fits or [b for b in branches if not is_typeddict(b)]
        return branches[0] if len(branches) == 1 else None
    if isinstance(read, Mapping):
        return tp if is_typeddict(tp) or _is_mapping_type(tp) else None
    if isinstance(read, list | tuple | set | frozenset):
        return tp if _is_sequence_type(tp) else None
    return None


def field_type(cls: type[Any], name: str) -> Any:
    """The annotation of the field ``name`` of the model or dataclass ``cls``
    (``None`` when it does not resolve)."""
    infos = getattr(cls, "__pydantic_fields__", None)
    if infos is not None and name in infos:
        return infos[name].annotation
    return _hints(cls).get(name)


_HINTS: LRU[Any, tuple[Any, dict[str, Any]]] = LRU(512)


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The annotations of ``cls`` (shared: not to be changed), read once per
    class (``field_type`` asks for each field of each item)."""
    return per_type(_HINTS, cls, _read_hints)


def _read_hints(cls: type[Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an annotation naming a local type: no types
        return {}


@functools.lru_cache(maxsize=512)
def typeddict_fields(td: Any) -> tuple[tuple[str, tuple[FieldInfo, Any]], ...]:
    """Each field of the ``TypedDict`` ``td``: its name, pydantic's field
    information (its aliases) and its annotation."""
    out = []
    for name, hint in _hints(td).items():
        bare = hint
        while typing.get_origin(bare) in _WRAPPERS:
            bare = typing.get_args(bare)[0]
        out.append((name, (FieldInfo.from_annotated_attribute(bare, PydanticUndefined), bare)))
    return tuple(out)


def mapping_value(tp: Any) -> Any:
    """The value type of the mapping type ``tp`` (``None``: not said)."""
    args = typing.get_args(tp)
    return args[1] if len(args) == 2 else None


def item_type(tp: Any, index: int) -> Any:
    """The type of item ``index`` of the sequence type ``tp`` (``None``: not said)."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
        return args[index] if index < len(args) and args != ((),) else None
    return args[0] if len(args) == 1 else None


@functools.lru_cache(maxsize=256)
def _key_adapter(tp: Any) -> TypeAdapter[Any] | None:
    args = typing.get_args(tp)
    try:
        return TypeAdapter(args[0]) if len(args) == 2 else None
    except Exception:  # a key type pydantic cannot build alone: not said
        return None


def key_groups(tp: Any, written: Mapping[Any, Any]) -> list[list[Any]]:
    """The written keys that the mapping type ``tp`` reads as one key, in
    groups of two or more (empty when its key type cannot be asked)."""
    try:
        adapter = _key_adapter(tp)
    except TypeError:  # an unhashable annotation
        adapter = None
    if adapter is None:
        return []
    groups: dict[Any, list[Any]] = {}
    for key in written:
        try:
            read = adapter.validate_python(key)
            groups.setdefault(read, []).append(key)
        except (ValidationError, TypeError):
            continue
    return [keys for keys in groups.values() if len(keys) > 1]


def converts_keys(tp: Any, seen: frozenset[int] = frozenset()) -> bool:
    """Whether the type ``tp`` holds a mapping whose keys validation converts
    (a key type other than plain ``str``: ``dict[int, X]``, a date, a
    constrained string), where two written keys can become one: looked for
    through models, dataclasses, ``TypedDict``s, unions and sequences."""
    tp = _strip(tp)
    if id(tp) in seen:  # a recursive type: looked at already
        return False
    seen = seen | {id(tp)}
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) or _is_sequence_type(tp):
        return any(converts_keys(a, seen) for a in args if a is not Ellipsis)
    if _is_mapping_type(tp):
        if len(args) != 2:
            return False
        return args[0] not in (str, Any) or converts_keys(args[1], seen)
    if is_typeddict(tp):
        return any(converts_keys(a, seen) for _, (_, a) in typeddict_fields(tp))
    fields = getattr(tp, "__pydantic_fields__", None)
    if isinstance(tp, type) and fields is not None:
        return any(converts_keys(f.annotation, seen) for f in fields.values())
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return any(converts_keys(a, seen) for a in _hints(tp).values())
    return False
