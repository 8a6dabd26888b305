"""Unknown keys in a worked example's output (``check_examples``): which
keys of the example no model takes, where the model has not said what to do
with them.

The rule: a model (or dataclass, TypedDict) that leaves ``extra`` unset is
strict in an example: an unknown key there is a typo (``vresion``), and
dropping it silently would teach the model a field the schema does not
have. A model that sets ``extra`` itself (``"ignore"``, ``"allow"``,
``"forbid"``; in its ``model_config``, its class keywords, or a base class
it inherits from) is validated as it says, at its own depth: an
``extra="ignore"`` model drops the key, an ``extra="allow"`` model keeps it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails
from typing_extensions import is_typeddict

__all__ = ["unknown_keys"]

_NONE = type(None)


def unknown_keys(adapter: TypeAdapter[Any], output_type: Any, data: Any,
                 by_name: bool | None) -> list[ErrorDetails]:
    """The ``extra_forbidden`` errors of ``data`` validated as ``output_type``
    with every unknown key forbidden, less those whose object sets ``extra``
    in its own config (see the module docstring); ``[]`` when none. An
    error whose object cannot be told from its location stays (strict)."""
    try:
        adapter.validate_python(data, extra="forbid", by_name=by_name)
    except ValidationError as exc:
        return [e for e in exc.errors() if e["type"] == "extra_forbidden"
                and not _sets_extra(_owner(output_type, e["loc"][:-1]))]
    return []


def _sets_extra(tp: Any) -> bool:
    """Whether ``tp`` (a model, dataclass or TypedDict) sets ``extra`` itself."""
    config = getattr(tp, "model_config", None) if isinstance(tp, type) and issubclass(
        tp, BaseModel) else getattr(tp, "__pydantic_config__", None)
    return isinstance(config, Mapping) and "extra" in config


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and, for a root model, its root's type."""
    while True:
        if get_origin(tp) is typing.Annotated:
            tp = get_args(tp)[0]
        elif isinstance(tp, type) and issubclass(tp, RootModel):
            tp = tp.model_fields["root"].annotation
        else:
            return tp


def _tag(tp: Any) -> str:
    """How pydantic names a union member in an error's location (a class by
    its name)."""
    return getattr(tp, "__name__", None) or repr(tp)


def _field(tp: Any, key: Any) -> tuple[bool, Any]:
    """``(found, annotation)`` of the field ``key`` (its name or an alias)
    of an object type."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        for name, info in tp.model_fields.items():
            if key in (name, info.alias, info.validation_alias):
                return True, info.annotation
        return False, None
    if (isinstance(tp, type) and dataclasses.is_dataclass(tp)) or is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return (key in hints), hints.get(key)
    return False, None


def _owner(tp: Any, loc: Sequence[Any]) -> Any:
    """The type of the object at ``loc`` (an error location without its last
    key) under ``tp``; ``None`` when the walk cannot tell."""
    for part in loc:
        tp = _strip(tp)
        if get_origin(tp) in (Union, types.UnionType):
            members = [m for m in get_args(tp) if m is not _NONE]
            named = [m for m in members if _tag(_strip(m)) == part]
            if named:  # pydantic names the member it tried
                tp = named[0]
                continue
            if len(members) != 1:
                return None
            tp = _strip(members[0])
        found, inner = _field(tp, part)
        if found:
            tp = inner
            continue
        origin, args = get_origin(tp), get_args(tp)
        if isinstance(origin, type) and issubclass(origin, Mapping) and len(args) == 2:
            tp = args[1]
        elif isinstance(part, int) and origin is tuple and args and args[-1] is not Ellipsis:
            tp = args[part] if part < len(args) else None
        elif isinstance(part, int) and args and isinstance(origin, type) and issubclass(
                origin, (Sequence, set, frozenset)):
            tp = args[0]
        else:
            return None
    tp = _strip(tp)
    if get_origin(tp) in (Union, types.UnionType):  # an optional object: its one type
        members = [m for m in get_args(tp) if m is not _NONE]
        return _strip(members[0]) if len(members) == 1 else None
    return tp
