"""The fields a locator may hold: ``locator_fields`` names an output type's
top-level free-text string fields (or lists of them), the ones
``agentflow.grounding.locators.learn_locators`` learns a rule for (and which
it re-exports).
"""

from __future__ import annotations

import typing
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.grounding.marked_types import (
    is_derived,
    is_text,
    is_union,
    object_fields,
    sequence_item,
    unwrap_annotated,
)

__all__ = ["locator_fields"]


def locator_fields(output_type: Any) -> list[tuple[str, bool]]:
    """The top-level fields a locator may hold: ``(name, many)`` for each
    field that is a free-text string (or ``| None``) or a list of them, not
    ``Derived()``."""
    fields = object_fields(output_type)
    if fields is None:
        return []
    infos = output_type.model_fields if isinstance(output_type, type) and issubclass(
        output_type, BaseModel) else {}
    out = []
    for name, ann, _marks in fields:
        if name in infos and is_derived(infos[name].annotation, infos[name].metadata):
            continue
        kind = _kind(ann)
        if kind is not None:
            out.append((name, kind))
    return out


def _kind(tp: Any) -> bool | None:
    """``False``: one string; ``True``: a list of strings; ``None``: neither."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not type(None)]
        return _kind(args[0]) if len(args) == 1 else None
    if is_text(tp):
        return False
    item = sequence_item(tp)
    if item is not None and item is not typing.Any:
        item, _ = unwrap_annotated(item)
        return True if is_text(item) else None
    return None
