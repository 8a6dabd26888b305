"""A list field's length bound (and a dict field's number of keys), read in one place.

    field_max_items(Model.model_fields["tags"])    # 3 for Field(max_length=3)
    schema_max_items({"type": "array", "maxItems": 3})   # 3
    schema_max_items(local_dialect_node)   # None where only the dialect bounds it
    schema_max_properties({"type": "object", "maxProperties": 3})   # 3

Two forms of the same bound: a pydantic field's metadata (``MaxLen``, as
``Field(max_length=...)`` declares it, or ``Len``, as ``conlist(...,
max_length=...)`` and ``Annotated[list[T], Len(0, n)]`` do) and a JSON Schema array node's
``maxItems``, where the ``local`` dialect (``agentflow.output.dialects``)
adds ``LOCAL_MAX_ITEMS`` to every array it does not find bounded: that one
keeps a reply finite and is not the schema's own bound; the dialect says so
on the node (``LOCAL_CAP_KEY``), so a type's own ``max_length`` equal to
``LOCAL_MAX_ITEMS`` is still the type's bound. A dict is bounded the same
two ways: ``MaxLen`` in its field's metadata (``field_max_items`` reads it
too) and ``maxProperties`` on its schema node, which the ``local`` dialect
sets to ``LOCAL_MAX_PROPERTIES`` where the schema has none
(``schema_max_properties`` tells the two apart).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from annotated_types import Len, MaxLen, MinLen
from pydantic.fields import FieldInfo

from agentflow.output.dialects import LOCAL_CAP_KEY

__all__ = ["field_max_items", "schema_max_items", "schema_max_properties",
           "without_min_items"]


def field_max_items(info: FieldInfo | None) -> int | None:
    """The most items the field ``info`` may hold: the lowest ``MaxLen`` or
    ``Len`` maximum among its metadata (pydantic checks every one), or
    ``None`` (unbounded, or no field)."""
    bounds = [m.max_length for m in (info.metadata if info else ())
              if isinstance(m, MaxLen | Len) and m.max_length is not None]
    return min(bounds) if bounds else None


def without_min_items(metadata: Iterable[Any]) -> list[Any]:
    """A field's ``metadata`` less its least number of items: no ``MinLen``,
    and a ``Len`` keeps only its maximum (as a ``MaxLen``)."""
    out: list[Any] = []
    for m in metadata:
        if isinstance(m, Len):
            out.extend(() if m.max_length is None else (MaxLen(m.max_length),))
        elif not isinstance(m, MinLen):
            out.append(m)
    return out


def schema_max_items(node: Mapping[str, Any]) -> int | None:
    """An array node's ``maxItems`` as its schema declares it: ``None`` when it
    has none, or only the ``local`` dialect's (``"maxItems"`` listed in the
    node's ``LOCAL_CAP_KEY``: a bound only there to keep a reply finite)."""
    return _own_bound(node, "maxItems")


def schema_max_properties(node: Mapping[str, Any]) -> int | None:
    """An object node's ``maxProperties`` as its schema declares it (the most
    keys a dict may hold): ``None`` when it has none, or only the ``local``
    dialect's (``"maxProperties"`` listed in the node's ``LOCAL_CAP_KEY``)."""
    return _own_bound(node, "maxProperties")


def _own_bound(node: Mapping[str, Any], keyword: str) -> int | None:
    high = node.get(keyword)
    caps = node.get(LOCAL_CAP_KEY)
    if isinstance(caps, list) and keyword in caps:
        return None
    return high if isinstance(high, int) and not isinstance(high, bool) else None
