"""What an output type may be: a class that travels as a JSON object, a type
form (``list[Model]``, a union, an alias), and the error for a value that is
not a type."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, RootModel
from typing_extensions import is_typeddict

__all__ = ["is_object_type", "is_type_form", "not_a_model", "not_a_type", "type_name"]


def is_object_type(tp: Any) -> bool:
    """Whether ``tp`` travels as a JSON object with named fields as it is: a
    pydantic model, a dataclass or a TypedDict; a ``RootModel`` only when its root
    is one (``RootModel[list[int]]`` is an array, which no vendor takes as a tool's
    arguments or a strict response format's root)."""
    if isinstance(tp, type) and issubclass(tp, RootModel):
        return is_object_type(tp.model_fields["root"].annotation)
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp)):
        return True
    return is_typeddict(tp)


def is_type_form(tp: Any) -> bool:
    """Whether ``tp`` names a type without being a class: a parametrized generic
    (``list[Model]``), a union, a ``Literal``, an ``Annotated``, a ``NewType`` or a
    ``type`` alias statement's alias."""
    return (typing.get_origin(tp) is not None or isinstance(tp, typing.NewType)
            or type(tp).__name__ == "TypeAliasType")


def not_a_type(value: Any) -> str:
    """Why ``value`` cannot be an output type, and what to pass instead."""
    if isinstance(value, BaseModel):
        hint = f": pass the class, {type(value).__name__}, not an instance of it"
    elif isinstance(value, Mapping):
        hint = (": for a JSON Schema, pass agentflow.output.json_schema."
                "json_schema_output(schema)")
    elif isinstance(value, str):
        hint = ": pass the type itself, not its name"
    else:
        hint = ""
    return (f"the output type must be a type (a pydantic model, dataclass or TypedDict "
            f"class, or a form such as list[Model]), got a value of type "
            f"{type(value).__name__}{hint}")


def not_a_model(tp: Any) -> str | None:
    """Why ``tp``, a class, is no output type although it looks like one (``None``
    when it is one): pydantic's own bases, ``BaseModel`` and ``RootModel``
    unparametrized, describe no fields (``BaseModel`` was sent as an empty
    object, then its validated output crashed the checks after the request
    with a bare ``TypeError``; ``RootModel``'s root is any value)."""
    if tp is BaseModel or tp is RootModel:
        example = ("a subclass declaring them (class Contact(BaseModel): name: str)"
                   if tp is BaseModel else "it parametrized (RootModel[list[Contact]])")
        return f"pydantic's {tp.__name__} itself describes no fields: pass {example}"
    return None


def type_name(tp: Any) -> str:
    """``tp``'s name for a message and a tool name: its ``__name__``, else ``str(tp)``
    (``list[Contact]``)."""
    return getattr(tp, "__name__", None) or str(tp)
