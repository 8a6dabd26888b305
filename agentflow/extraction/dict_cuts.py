"""Dicts that hold as many keys as their bound allows: maybe cut there.

A dict field (``dict[str, V]``) is held to a number of keys: the type's
own (``Field(max_length=N)``, which pydantic writes as ``maxProperties``,
or a ``maxProperties`` its ``json_schema_extra`` sets), else, on a model
that is sent the ``local`` dialect (the embedded model's grammar),
``dialects.LOCAL_MAX_PROPERTIES``.
A grammar stops the model at that bound whatever the document holds, so a
dict that reached it is right as far as it goes, but the document may hold
more pairs than the record shows. ``dict_cuts`` names such top-level fields
with their bound; the record says so (``cut_dicts``) and the review page
says how many keys were kept.

    dict_cuts(Stock, Stock(counts={...12 keys...}), "local")   # {"counts": 12}
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from agentflow.model import SchemaDialect
from agentflow.output.dialects import LOCAL_MAX_PROPERTIES
from agentflow.output.list_bounds import field_max_items

__all__ = ["dict_caps", "dict_cuts"]


def dict_cuts(output_type: Any, output: Any, dialect: SchemaDialect | None) -> dict[str, int]:
    """Field name -> its bound, for each top-level dict field of ``output``
    (an instance of the pydantic model ``output_type``) holding at least as
    many keys as ``dict_caps`` allows it (more: pairs merged from several
    chunks, each held to the bound). ``{}`` for any other output type."""
    if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)
            and isinstance(output, BaseModel)):
        return {}
    return {name: cap for name, cap in dict_caps(output_type, dialect).items()
            if cap > 0 and isinstance(value := getattr(output, name, None), Mapping)
            and len(value) >= cap}


@functools.lru_cache(maxsize=64)
def dict_caps(output_type: type[BaseModel], dialect: SchemaDialect | None
              ) -> Mapping[str, int]:
    """Top-level dict field -> the most keys it may hold: its own bound
    (``field_max_items``: ``Field(max_length=N)``, which pydantic writes as
    ``maxProperties``; else a ``maxProperties`` its ``json_schema_extra``
    sets), else ``LOCAL_MAX_PROPERTIES`` when ``dialect`` is ``"local"``;
    fields with no bound are left out. A dict field is one whose annotation
    is a ``dict``/``Mapping`` (or a union with one: ``dict[str, V] | None``).
    Read off the fields, not the JSON Schema (pydantic cannot write one for
    every model a JSON Schema output builds); once per type and dialect, so
    every caller shares the answer: it is read-only."""
    default = LOCAL_MAX_PROPERTIES if dialect == "local" else None
    caps: dict[str, int] = {}
    for name, info in output_type.model_fields.items():
        if not _holds_dict(info.annotation):
            continue
        cap = field_max_items(info)
        extra = info.json_schema_extra
        if cap is None and isinstance(extra, Mapping):
            own = extra.get("maxProperties")
            cap = own if isinstance(own, int) and not isinstance(own, bool) else None
        if cap is None:
            cap = default
        if cap is not None:
            caps[name] = cap
    return MappingProxyType(caps)


def _holds_dict(annotation: Any) -> bool:
    """Whether ``annotation`` is a dict type, or a union with one."""
    origin = get_origin(annotation)
    if annotation in (dict, Mapping) or origin in (dict, Mapping):
        return True
    return origin in (Union, UnionType) and any(_holds_dict(a) for a in get_args(annotation))
