"""Field paths as the model sees them: python field names -> the property keys
of the schema it was given.

Results name fields by python name (``ExtractResult.spans``, records: the
shared contract), but a model writes the keys of the JSON Schema and grammar
it was sent, which pydantic spells by alias (``Field(alias="pkg")``,
``validation_alias``, an ``alias_generator``). A verification message that
says ``package: ... is not found`` to a model that wrote ``"pkg"`` points
at a field it never saw; ``key_path`` spells a path in the model's keys for
the messages it reads (``agentflow.grounding.output_checks``). Pure
functions of the output type.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from typing_extensions import is_typeddict

from agentflow.grounding.marked_types import is_union, sequence_item, unwrap_annotated

__all__ = ["key_path", "property_key"]

_SEGMENT = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def property_key(name: str, info: Any) -> str:
    """The property key pydantic's (validation-mode) JSON Schema gives the
    field ``name`` (``info``: its ``FieldInfo``): its ``validation_alias``
    when that is a string, else its ``alias``, else the name."""
    alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
    return alias if isinstance(alias, str) else name


def _branches(tp: Any) -> list[Any]:
    """``tp`` without ``Annotated``, as the branches of its union (``None`` left out)."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        return [b for arg in get_args(tp) if arg is not type(None) for b in _branches(arg)]
    return [tp]


def _field(tp: Any, name: str) -> tuple[str, Any] | None:
    """The key and type of field ``name`` in the first branch of ``tp`` that
    has it; ``None`` when none does."""
    for branch in _branches(tp):
        if isinstance(branch, type) and issubclass(branch, BaseModel):
            info = branch.model_fields.get(name)
            if info is not None:
                return property_key(name, info), info.annotation
        elif is_typeddict(branch) or (isinstance(branch, type)
                                      and dataclasses.is_dataclass(branch)):
            hints = typing.get_type_hints(branch, include_extras=True)
            if name in hints:
                return name, hints[name]
        elif get_origin(branch) in (dict, Mapping, typing.Mapping) and len(get_args(branch)) == 2:
            return name, get_args(branch)[1]
    return None


def _item(tp: Any) -> Any:
    """The item type of the first list branch of ``tp`` (``Any`` when none)."""
    for branch in _branches(tp):
        item = sequence_item(branch)
        if item is not None:
            return item
    return Any


def key_path(path: str, output_type: Any) -> str:
    """``path`` (python field names, dotted, ``[i]`` for list items, as in
    ``ExtractResult.spans``) spelled with the property keys of
    ``output_type``'s JSON Schema: ``changes[2]`` -> ``Changes[2]`` when
    ``changes`` has the alias ``Changes``. A name no model of the type
    declares (a dict key, a JSON Schema output's property, ``result``) stays
    as it is."""
    out: list[str] = []
    tp: Any = output_type
    for index, name in _SEGMENT.findall(path):
        if index:
            out.append(f"[{index}]")
            tp = _item(tp)
            continue
        found = _field(tp, name)
        key, tp = found if found is not None else (name, Any)
        out.append(f".{key}" if out else key)
    return "".join(out) or path
