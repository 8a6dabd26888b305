"""Which of pydantic's lax coercions an output may use: a value is read in
the field's type only when the model wrote the same kind of JSON value, or
a string that spells one.

pydantic's lax mode reads a JSON ``true`` as the integer ``1`` (also for a
``Literal[1]`` or an ``IntEnum``, even in strict JSON mode), ``0`` as
``False``, a number as Unix seconds for a date and as seconds for a
duration. For a model's output each of these turns a plainly wrong answer
(``{"age": true}``, ``{"date": 2024}``, ``{"runtime": 90}`` meaning
minutes) into a confident one. Vendor SDKs' ``parse`` helpers and Pydantic
AI validate model output in pydantic's default (lax) mode; that is safe
behind a vendor's constrained decoding, which never writes ``true`` where
the schema says integer, but agentflow
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
| ``"2024"``, ``"20240305"`` | a date, datetime or time | refused (pydantic reads Unix seconds) |
| a number, ``true`` | a duration (``timedelta``) | refused (seconds would be a guessed unit) |
| ``"2024-01-31"`` | a date | the date (JSON has no date type: text is its form) |
| ``"PT1H30M"``, ``"01:30:00"`` | a duration | the duration (likewise) |
| ``42`` | a string | refused (pydantic v2 never turns a number into a string) |
| ``NaN``, ``"nan"``, ``Infinity`` | a number | refused (``NOT_A_FINITE_NUMBER``: no JSON number) |

The check compares what the model wrote with what validation made of it,
field by field (under every key a field may be read from: its name, a
string alias, each choice of an ``AliasChoices``, the path of an
``AliasPath``; a ``TypedDict``'s too, followed by its declared type) and item
by item (a mapping whose keys validation converted, ``dict[int, bool]``, is
paired in written order), so unions are judged by the branch pydantic chose:
``true`` for ``int | bool`` stays ``True`` and passes. A refusal is an
ordinary ``ValidationError`` (error types ``BOOLEAN_IS_NO_NUMBER``,
``NUMBER_IS_NO_BOOLEAN``, ``NUMBER_IS_NO_DATE``, ``NUMBER_IS_NO_DURATION``)
naming the field path, so the model is asked again. So is a mapping whose
written keys validation reads as one key (``{"1": "a", "01": "b"}`` for
``dict[int, str]``: pydantic would keep ``{1: "b"}`` and lose ``"a"``
silently; ``KEYS_COLLAPSE``, naming the mapping and the keys).

pydantic's strict JSON mode already refuses every crossing but one: a
boolean for a number ``Literal``/``Enum`` member; and it reads a mapping's
keys as lax mode does. So a value validated strictly from its JSON text
needs the check only when its schema has such a choice (``strict_gap``) or
its type a mapping whose keys validation converts
(``json_kinds_types.converts_keys``).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError
from typing_extensions import is_typeddict

from agentflow.output.json_kinds_keys import ABSENT, Loc, field_paths, lookup, object_keys
from agentflow.output.json_kinds_types import (
    field_type,
    item_type,
    key_groups,
    mapping_value,
    narrow,
    typeddict_fields,
)

__all__ = ["BOOLEAN_IS_NO_NUMBER", "KEYS_COLLAPSE", "NOT_A_FINITE_NUMBER", "NUMBER_IS_NO_BOOLEAN",
           "NUMBER_IS_NO_DATE", "NUMBER_IS_NO_DURATION", "check_kinds", "kind_errors",
           "strict_gap"]

BOOLEAN_IS_NO_NUMBER = "boolean_is_no_number"
"""Error type: a JSON boolean became a number (or a number ``Literal``/``Enum`` member)."""

NUMBER_IS_NO_BOOLEAN = "number_is_no_boolean"
"""Error type: a JSON number became a boolean."""

NUMBER_IS_NO_DATE = "number_is_no_date"
"""Error type: a JSON number became a date, datetime or time."""

NUMBER_IS_NO_DURATION = "number_is_no_duration"
"""Error type: a JSON number or boolean became a duration (``timedelta``)."""

NOT_A_FINITE_NUMBER = "not_a_finite_number"
"""Error type: a number field read as NaN or an infinity (``NaN``, ``"nan"``,
``Infinity``, ``"-inf"``): pydantic's floats allow them by default
(``allow_inf_nan``), but JSON has no such number and a model writes them for
"unknown" or "not applicable", never as a measured value."""

KEYS_COLLAPSE = "keys_collapse"
"""Error type: two keys of a mapping became one key when read (``"1"`` and
``"01"`` for ``dict[int, X]``): pydantic keeps the last value only."""


def _plain(value: Any) -> Any:
    """An enum member's value, else ``value``."""
    return value.value if isinstance(value, enum.Enum) else value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _not_finite(read: Any) -> bool:
    """Whether ``read`` is a float or ``Decimal`` NaN or infinity."""
    if type(read) is float:
        return not math.isfinite(read)
    return isinstance(read, decimal.Decimal) and not read.is_finite()


def _infinite_error(written: Any) -> PydanticCustomError:
    return PydanticCustomError(
        NOT_A_FINITE_NUMBER,
        "Input should be a finite number, got {value}: NaN and infinity are no JSON "
        "numbers; if the value is unknown, leave the field out or null where it may be",
        {"value": written if isinstance(written, str) else repr(written)})


def _scalar_error(written: Any, read: Any) -> PydanticCustomError | None:
    """The crossing from the JSON scalar ``written`` to the validated ``read``, if any."""
    if _not_finite(read):
        return _infinite_error(written)
    plain = _plain(read)
    if isinstance(read, datetime.timedelta) and (isinstance(written, bool) or _is_number(written)):
        return PydanticCustomError(
            NUMBER_IS_NO_DURATION,
            "Input should be a duration as ISO 8601 text (e.g. \"PT1H30M\"), got the {kind} "
            "{value}",
            {"kind": "boolean" if isinstance(written, bool) else "number",
             "value": ("true" if written else "false") if isinstance(written, bool) else written})
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


def _pairs(written: Mapping[Any, Any], read: Any,
           tp: Any) -> Iterator[tuple[Loc, Any, Any, Any]]:
    """``(key path, written value, validated value, its declared type or
    None)`` for each field (or item) of the validated object ``read`` the
    model wrote in ``written`` (``tp``: ``read``'s declared type, narrowed)."""
    if isinstance(read, BaseModel) or (dataclasses.is_dataclass(read)
                                       and not isinstance(read, type)):
        given = read.model_fields_set if isinstance(read, BaseModel) else None
        for name, paths in object_keys(type(read)):
            if given is not None and name not in given:  # a default: nothing written
                continue
            validated = getattr(read, name, ABSENT)  # a dataclass may have slots
            if validated is ABSENT:
                continue
            for path in paths:
                value = lookup(written, path)
                if value is not ABSENT:
                    yield path, value, validated, field_type(type(read), name)
                    break
        extra = read.__pydantic_extra__ if isinstance(read, BaseModel) else None
        for key, value in (extra or {}).items():
            if key in written:
                yield (key,), written[key], value, None
    elif isinstance(read, Mapping):
        if is_typeddict(tp):  # keyed by the fields' names: the model wrote their aliases
            for name, paths, annotation in _typeddict_keys(tp):
                if name in read:
                    for path in paths:
                        value = lookup(written, path)
                        if value is not ABSENT:
                            yield path, value, read[name], annotation
                            break
            return
        value_type = mapping_value(tp) if tp is not None else None
        if len(read) == len(written) and not all(isinstance(k, str) for k in read):
            # keys validated into another type (``dict[int, bool]``, a date):
            # validation keeps the written order, and no two keys became one
            for (key, value), validated in zip(written.items(), read.values(), strict=True):
                yield (key,), value, validated, value_type
        else:
            for key, value in written.items():
                if key in read:
                    yield (key,), value, read[key], value_type


def _typeddict_keys(td: Any) -> Iterator[tuple[str, tuple[Loc, ...], Any]]:
    """Each field of the ``TypedDict`` ``td``, the key paths it may be written
    under (``field_paths``, with its ``with_config`` settings) and its type."""
    config: Mapping[str, Any] = getattr(td, "__pydantic_config__", None) or {}
    for name, (info, annotation) in typeddict_fields(td):
        yield name, field_paths(info, name, config), annotation


def _collapsed(written: Mapping[Any, Any], read: Mapping[Any, Any], tp: Any,
               loc: Loc) -> InitErrorDetails | None:
    """The error of a mapping whose written keys validation read as one key
    (``{"1": .., "01": ..}`` for ``dict[int, X]``: one value lost), if so:
    asked of its declared mapping type's key type. Fewer keys read alone
    prove nothing (a validator may drop entries, a ``TypedDict`` ignores
    keys), and without a declared type nothing is said."""
    if len(read) >= len(written) or tp is None or is_typeddict(tp):
        return None
    groups = key_groups(tp, written)
    if not groups:
        return None
    same = " and ".join(f'"{k}"' for k in groups[0]) + " are the same key"
    return {"type": PydanticCustomError(
        KEYS_COLLAPSE, "Keys should differ once read: {same} of this mapping, so a value "
        "would be lost; write each key once", {"same": same}),
        "loc": loc, "input": dict(written)}


_PLAIN = frozenset({str, type(None)})
_NUMBERS = frozenset({int, float})
_DATES = (datetime.date, datetime.time)
_WALKED = (RootModel, *_DATES)
"""What a string may have been read as that needs a look (``_walk``)."""
_DIGITS = re.compile(r"\s*[+-]?\d+(?:\.\d*)?\s*")
"""Text pydantic reads as Unix seconds for a date, datetime or time: a year
(``"2024"``) or a compact date (``"20240305"``) became a day in 1970."""


def _digits_error(written: str) -> PydanticCustomError:
    return PydanticCustomError(
        NUMBER_IS_NO_DATE,
        "Input should be a date or time as ISO 8601 text (e.g. \"2024-01-31\"), got the "
        "digits \"{value}\": digits alone are no date", {"value": written.strip()})


def _walk(written: Any, read: Any, loc: Loc, errors: list[InitErrorDetails],
          tp: Any = None) -> None:
    kind = type(written)
    if kind in _PLAIN:  # text and null cross nothing (the common case first)...
        if kind is str and type(read) is not str:  # ..."nan" read as a number does
            number = read.root if isinstance(read, RootModel) else read  # (RootModel[float])
            if type(number) is float and not math.isfinite(number):
                errors.append({"type": _infinite_error(written), "loc": loc, "input": written})
            elif isinstance(number, _DATES) and _DIGITS.fullmatch(written):
                errors.append({"type": _digits_error(written), "loc": loc, "input": written})
        return
    if kind in _NUMBERS and type(read) in _NUMBERS:  # a number that stayed one
        if type(read) is float and not math.isfinite(read):
            errors.append({"type": _infinite_error(written), "loc": loc, "input": written})
        return
    if isinstance(read, RootModel):
        tp = field_type(type(read), "root")
        read = read.root
    if tp is not None and isinstance(read, Mapping | list | tuple | set | frozenset):
        tp = narrow(tp, read)
    if kind is dict or isinstance(written, Mapping):
        if isinstance(read, Mapping):
            collapsed = _collapsed(written, read, tp, loc)
            if collapsed is not None:
                errors.append(collapsed)
                return
        for path, value, validated, declared in _pairs(written, read, tp):
            if type(value) not in _PLAIN or type(validated) is float or (
                    type(validated) is not type(value)
                    and isinstance(validated, _WALKED)):
                _walk(value, validated, (*loc, *path), errors, declared)
        return
    if kind is list or isinstance(written, tuple):
        if isinstance(read, list | tuple) and len(read) == len(written):
            for i, value in enumerate(written):
                if type(value) not in _PLAIN or type(read[i]) is float or (
                        type(read[i]) is not type(value)
                        and isinstance(read[i], _WALKED)):
                    _walk(value, read[i], (*loc, i), errors,
                          item_type(tp, i) if tp is not None else None)
        elif isinstance(read, set | frozenset):  # unordered: a boolean that became a number
            bad = [v for v in read if type(v) is float and not math.isfinite(v)]
            if bad:  # a NaN or an infinity read into a set ("nan", 1e999)
                errors.append({"type": _infinite_error(bad[0]), "loc": loc, "input": written})
                return
            bools = [v for v in written if isinstance(v, bool)]
            if bools and not any(isinstance(_plain(v), bool) for v in read):
                error = _scalar_error(bools[0], int(bools[0]))
                if error is not None:
                    errors.append({"type": error, "loc": loc, "input": written})
        return
    error = _scalar_error(written, read)
    if error is not None:
        errors.append({"type": error, "loc": loc, "input": written})


def kind_errors(written: Any, read: Any, tp: Any = None) -> list[InitErrorDetails]:
    """The crossings of JSON kinds (see the module docstring) between the
    decoded JSON ``written`` and the value ``read`` validated from it, one
    per field path, in the order of the written object, and the mappings
    whose keys became fewer (``KEYS_COLLAPSE``). ``tp``: the type ``read``
    was validated as (``TypedDict`` aliases and mapping types are followed
    by it; ``json_kinds_types``)."""
    errors: list[InitErrorDetails] = []
    _walk(written, read, (), errors, tp)
    return errors


def check_kinds(title: str, written: Any, read: Any, tp: Any = None) -> None:
    """Raise when validating ``written`` into ``read`` (as ``tp``) crossed
    JSON kinds or read two keys as one.

    Raises:
        pydantic.ValidationError: titled ``title``, one line per crossing
            (``kind_errors``).
    """
    errors = kind_errors(written, read, tp)
    if errors:
        raise ValidationError.from_exception_data(title, errors)


def strict_gap(schema: Any) -> bool:
    """Whether the JSON Schema ``schema`` (any node, ``$defs`` included) has a
    choice (``enum``/``const``) with a number or boolean in it: the one place
    pydantic's strict JSON mode reads a boolean as a number; or a ``date`` or
    ``date-time`` string, which it reads from digits as Unix seconds."""
    if isinstance(schema, list):
        return any(strict_gap(item) for item in schema)
    if not isinstance(schema, dict):
        return False
    choices = schema.get("enum")
    values = list(choices) if isinstance(choices, list) else []
    if "const" in schema:
        values.append(schema["const"])
    if any(isinstance(v, bool | int | float) for v in values) \
            or schema.get("format") in ("date", "date-time"):
        return True
    return any(strict_gap(v) for k, v in schema.items() if k not in ("enum", "const"))
