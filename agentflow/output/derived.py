"""Output types the framework derives from a user's output type, and how a
user's few-shot examples are shown under them.

The extraction pipeline asks some calls for a type it built from the user's
model rather than the model itself: a chunk of a long document is extracted
into the model with every top-level field optional
(``agentflow.extraction.chunk_schema.partial_model``), a later recall pass
into the model with only the fields that pass can add to
(``agentflow.extraction.recall.later_pass_type``). Such a type is a new class
(``pydantic.create_model``) with the user's name, so an example whose output
is an instance of the user's model is not an instance of it, and a ``dict``
example may hold keys it dropped.

``derive(derived, origin)`` records that ``derived`` was built from
``origin``; ``check_examples`` then checks each example against ``origin``
(every form it accepts there: an instance, a ``dict`` by alias, a grounded
value copied from the text) and shows it under ``derived`` with
``project``: its value's fields that ``derived`` has, as they are. A derived
type must take every valid value of its origin's kept fields, except for
bounds it adds for one request (a chunk's ``maxItems``): the example is
shown whole, as the user wrote it, never refused for them.

The record is kept by weak reference to ``derived`` (types made per document
are not kept alive by it).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from pydantic import BaseModel

__all__ = ["derive", "origin_of", "project"]

_ORIGINS: WeakKeyDictionary[type, type[BaseModel]] = WeakKeyDictionary()


def derive(derived: type[BaseModel], origin: type[BaseModel]) -> type[BaseModel]:
    """Record that ``derived`` was built from ``origin`` (same name, a subset
    or relaxation of its fields); returns ``derived``."""
    _ORIGINS[derived] = origin
    return derived


def origin_of(output_type: Any) -> type[BaseModel] | None:
    """The model ``output_type`` was derived from (``derive``), else ``None``."""
    if not isinstance(output_type, type):
        return None
    return _ORIGINS.get(output_type)


def project(value: BaseModel, derived: type[BaseModel]) -> BaseModel:
    """``value`` (a validated instance of ``derived``'s origin) as an instance
    of ``derived``: the fields ``derived`` has, values as they are (already
    validated against the origin: never validated again, so a bound the
    derived type adds for one request does not refuse the example)."""
    names = [name for name in derived.model_fields if name in type(value).model_fields]
    data = {name: getattr(value, name) for name in names}
    return derived.model_construct(
        _fields_set={n for n in value.model_fields_set if n in data}, **data)
