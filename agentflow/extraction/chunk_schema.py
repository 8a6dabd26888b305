"""The schema side of a chunked extraction (``agentflow.extraction.chunked``):
the partial model each chunk is extracted into (every top-level field
optional), the check of a map-over-items list field, and the validation of
the merged data against the real output model (a typed error naming what
is wrong, never raised).
"""

from __future__ import annotations

import functools
from typing import Any

from annotated_types import MaxLen
from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.version import VERSION as PYDANTIC_VERSION
from pydantic_core import PydanticUndefined

from agentflow.errors import MergeConflictError, MergeError, UsageError
from agentflow.extraction.merge import Conflict, is_list_type
from agentflow.output.derived import derive
from agentflow.output.list_bounds import field_max_items, without_min_items

__all__ = ["check_items", "partial_model", "validate_merged"]


def check_items(output: Any, items: str | None) -> None:
    """Check that ``items`` (``Chunking.items``) names a top-level list field
    of the output model ``output``.

    Raises:
        UsageError: ``output`` is not a pydantic model, or has no list field
            of that name (the message lists its list fields).
    """
    if items is None:
        return
    if not (isinstance(output, type) and issubclass(output, BaseModel)):
        raise UsageError(f"Chunking(items={items!r}) needs a pydantic model output type, "
                         f"got {output!r}")
    lists = [n for n, i in output.model_fields.items() if is_list_type(i.annotation)]
    if items not in lists:
        raise UsageError(f"Chunking(items={items!r}): {output.__name__} has no top-level list "
                         f"field {items!r} (its list fields: {', '.join(lists) or 'none'})")


@functools.cache
def partial_model(output: type[BaseModel], items: str | None = None,
                  max_items: int | None = None) -> type[BaseModel]:
    """``output`` with every top-level field optional (required scalars become
    nullable with default ``None``, lists default to ``[]`` and lose their
    ``min_length``); nested
    models, descriptions and constraints stay. Chunks are extracted into this
    and merged into ``output``. With ``items`` and ``max_items``, that list
    field holds at most ``max_items`` items (a map-over-items chunk). It
    takes ``output``'s few-shot examples (``agentflow.output.derived``)."""
    fields: dict[str, Any] = {}
    for name, info in output.model_fields.items():
        copy = FieldInfo.merge_field_infos(info)
        annotation: Any = info.annotation
        if is_list_type(annotation):  # a chunk may hold none of the items
            copy.metadata = without_min_items(copy.metadata)
        if name == items and max_items is not None:  # the schema's own bound, if lower, stays
            declared = field_max_items(copy)
            copy.metadata = [*(m for m in copy.metadata if not isinstance(m, MaxLen)),
                             MaxLen(max_items if declared is None else min(max_items, declared))]
        if info.is_required() and is_list_type(annotation):
            copy.default = PydanticUndefined
            copy.default_factory = list
        elif info.is_required():
            copy.default = None
            copy.default_factory = None
            annotation = annotation | None
        fields[name] = (annotation, copy)
    model: type[BaseModel] = create_model(
        output.__name__, __doc__=output.__doc__, __config__=output.model_config, **fields)
    return derive(model, output)  # the user's examples are shown as this type


_BY_NAME: dict[str, Any] = (
    {"by_name": True} if tuple(int(x) for x in PYDANTIC_VERSION.split(".")[:2]) >= (2, 11)
    else {})
"""Merged data is keyed by field name (``model_dump``), never by alias: pydantic
2.11+ validates it by name too (older ones only by alias, so a merge of an
output with aliased fields fails there)."""


def validate_merged(output: type[BaseModel], data: dict[str, Any],
                    conflicts: tuple[Conflict, ...]) -> tuple[MergeError | None, Any]:
    """The merged data validated as ``output``, or the typed error why not."""
    for conflict in conflicts:
        if conflict.rule == "must_agree":
            values = ", ".join(f"{v!r} in [{s}, {e})" for v, s, e in conflict.values)
            return MergeConflictError(
                f"chunks disagree on {conflict.path!r}, declared must-agree: {values}",
                field=conflict.path, conflicts=conflicts), None
    for name, info in output.model_fields.items():
        if info.is_required() and data.get(name) is None:
            return MergeError(
                f"required field {name!r} was left null by every chunk of the document",
                field=name), None
    try:
        return None, output.model_validate(data, **_BY_NAME)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        path = path.lstrip(".")
        return MergeError(f"the merged output is not a valid {output.__name__}: {path}: "
                          f"{first['msg']}", field=path), None
