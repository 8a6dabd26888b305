"""Which of pydantic's lax coercions an output may use: a value is read in
the field's type only when the model wrote the same kind of JSON value, or
a string that spells one.

pydantic's lax mode reads a JSON ``true`` as the integer ``1`` (also for a
``Literal[1]`` or an ``IntEnum``, even in strict JSON mode), ``0`` as
``False``, and a number as Unix seconds for a date. For a model's output
each of these turns a plainly wrong answer (``{"age": true}``,
``{"date": 2024}``) into a confident one. OpenAI's and Anthropic's SDK
``parse`` helpers and Pydantic AI validate model output in pydantic's
default (lax) mode; that is safe behind a vendor's constrained decoding,
which never writes ``true`` where the schema says integer, but agentflow
also reads models that write what they like (prompt strategy, tool
arguments without strict mode). So it keeps lax mode and refuses the
crossings of JSON kinds (``kind_errors``):

| the model wrote | the field is | read |
|---|---|---|
| ``"42"``, ``" 4.2 "`` | a number | ``42``, ``4.2`` (a model that quotes numbers) |
| ``42.0`` | an integer | ``42`` (JSON has one number type) |
| ``42.5``, ``"42.5"`` | an integer | refused (pydantic's rule: a fraction is never dropped) |
| ``"true"``, ``"yes"``, ``"0"`` | a boolean | ``True``, ``True``, ``False`` (spelt) |
| ``true``, ``false`` | a number, a number ``Literal``/``Enum`` | refused: no number |
| ``0``, ``1``, ``1.0`` | a boolean, ``Literal[True]`` | refused: no boolean |
| a number | a date, datetime or time | refused (pydantic would read Unix seconds) |
| ``"2024-01-31"`` | a date | the date (JSON has no date type: text is its form) |
| ``42`` | a string | refused (pydantic v2 never turns a number into a string) |

The check compares what the model wrote with what validation made of it,
field by field (aliases followed), so unions are judged by the branch
pydantic chose: ``true`` for ``int | bool`` stays ``True`` and passes. A
refusal is an ordinary ``ValidationError`` (error types
``BOOLEAN_IS_NO_NUMBER``, ``NUMBER_IS_NO_BOOLEAN``, ``NUMBER_IS_NO_DATE``)
naming the field path, so the model is asked again.

pydantic's strict JSON mode already refuses every crossing but one: a
boolean for a number ``Literal``/``Enum`` member. So a value validated
strictly from its JSON text needs the check only when its schema has such
a choice (``strict_gap``).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

__all__ = ["BOOLEAN_IS_NO_NUMBER", "NUMBER_IS_NO_BOOLEAN", "NUMBER_IS_NO_DATE",
           "check_kinds", "kind_errors", "strict_gap"]

BOOLEAN_IS_NO_NUMBER = "boolean_is_no_number"
"""Error type: a JSON boolean became a number (or a number ``Literal``/``Enum`` member)."""

NUMBER_IS_NO_BOOLEAN = "number_is_no_boolean"
"""Error type: a JSON number became a boolean."""

NUMBER_IS_NO_DATE = "number_is_no_date"
"""Error type: a JSON number became a date, datetime or time."""

_Loc = tuple[int | str, ...]


def _plain(value: Any) -> Any:
    """An enum member's value, else ``value``."""
    return value.value if isinstance(value, enum.Enum) else value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _scalar_error(written: Any, read: Any) -> PydanticCustomError | None:
    """The crossing from the JSON scalar ``written`` to the validated ``read``, if any."""
    plain = _plain(read)
    if isinstance(written, bool):
        if _is_number(plain):
            return PydanticCustomError(
                BOOLEAN_IS_NO_NUMBER,
                "Input should be {expected}, got the boolean {value}: a boolean is no number",
                {"expected": "an integer" if isinstance(plain, int) else "a number",
                 "value": "true" if written else "false"})
        return None
    if not _is_number(written):
        return None
    if isinstance(plain, bool):
        return PydanticCustomError(
            NUMBER_IS_NO_BOOLEAN,
            "Input should be a boolean (true or false), got the number {value}",
            {"value": written})
    if isinstance(read, datetime.date | datetime.time):
        return PydanticCustomError(
            NUMBER_IS_NO_DATE,
            "Input should be a date or time as ISO 8601 text (e.g. \"2024-01-31\"), "
            "got the number {value}",
            {"value": written})
    return None


@functools.lru_cache(maxsize=1024)
def _model_keys(cls: type[BaseModel]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each field of ``cls`` with the keys it may be written under: its
    validation alias (when a plain string), its alias, its name."""
    out = []
    for name, info in cls.__pydantic_fields__.items():
        keys = (info.validation_alias, info.alias, name)
        out.append((name, tuple(dict.fromkeys(k for k in keys if isinstance(k, str)))))
    return tuple(out)


def _pairs(written: Mapping[str, Any], read: Any) -> Iterator[tuple[str, Any, Any]]:
    """``(key, written value, validated value)`` for each field of the
    validated object ``read`` the model wrote in ``written``."""
    if isinstance(read, BaseModel):
        fields = read.__dict__
        for name, keys in _model_keys(type(read)):
            if name in fields:
                for key in keys:
                    if key in written:
                        yield key, written[key], fields[name]
                        break
        for key, value in (read.__pydantic_extra__ or {}).items():
            if key in written:
                yield key, written[key], value
    elif dataclasses.is_dataclass(read) and not isinstance(read, type):
        for f in dataclasses.fields(read):
            if f.name in written:
                yield f.name, written[f.name], getattr(read, f.name)
    elif isinstance(read, Mapping):
        for key, value in written.items():
            if key in read:
                yield key, value, read[key]


_PLAIN = frozenset({str, type(None)})
_NUMBERS = frozenset({int, float})


def _walk(written: Any, read: Any, loc: _Loc, errors: list[InitErrorDetails]) -> None:
    kind = type(written)
    if kind in _PLAIN:  # text and null cross nothing (the common case first)
        return
    if kind in _NUMBERS and type(read) in _NUMBERS:  # a number that stayed one
        return
    if isinstance(read, RootModel):
        read = read.root
    if kind is dict or isinstance(written, Mapping):
        for key, value, validated in _pairs(written, read):
            if type(value) not in _PLAIN:
                _walk(value, validated, (*loc, key), errors)
        return
    if kind is list or isinstance(written, tuple):
        if isinstance(read, list | tuple) and len(read) == len(written):
            for i, value in enumerate(written):
                if type(value) not in _PLAIN:
                    _walk(value, read[i], (*loc, i), errors)
        elif isinstance(read, set | frozenset):  # unordered: a boolean that became a number
            bools = [v for v in written if isinstance(v, bool)]
            if bools and not any(isinstance(_plain(v), bool) for v in read):
                error = _scalar_error(bools[0], int(bools[0]))
                if error is not None:
                    errors.append({"type": error, "loc": loc, "input": written})
        return
    error = _scalar_error(written, read)
    if error is not None:
        errors.append({"type": error, "loc": loc, "input": written})


def kind_errors(written: Any, read: Any) -> list[InitErrorDetails]:
    """The crossings of JSON kinds (see the module docstring) between the
    decoded JSON ``written`` and the value ``read`` validated from it, one
    per field path, in the order of the written object."""
    errors: list[InitErrorDetails] = []
    _walk(written, read, (), errors)
    return errors


def check_kinds(title: str, written: Any, read: Any) -> None:
    """Raise when validating ``written`` into ``read`` crossed JSON kinds.

    Raises:
        pydantic.ValidationError: titled ``title``, one line per crossing
            (``kind_errors``).
    """
    errors = kind_errors(written, read)
    if errors:
        raise ValidationError.from_exception_data(title, errors)


def strict_gap(schema: Any) -> bool:
    """Whether the JSON Schema ``schema`` (any node, ``$defs`` included) has a
    choice (``enum``/``const``) with a number or boolean in it: the one place
    pydantic's strict JSON mode reads a boolean as a number."""
    if isinstance(schema, list):
        return any(strict_gap(item) for item in schema)
    if not isinstance(schema, dict):
        return False
    choices = schema.get("enum")
    values = list(choices) if isinstance(choices, list) else []
    if "const" in schema:
        values.append(schema["const"])
    if any(isinstance(v, bool | int | float) for v in values):
        return True
    return any(strict_gap(v) for k, v in schema.items() if k not in ("enum", "const"))
