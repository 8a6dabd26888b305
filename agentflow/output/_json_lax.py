"""The lax reading of a value against a JSON Schema (``coerce_scalars``,
re-exported by ``agentflow.output.json_schema``): numbers and booleans given
as strings are read as what the schema wants, as pydantic's lax mode reads a
model's fields, before the value is validated with ``jsonschema``.

It follows the schema wherever a field's type is said: ``properties``,
``additionalProperties``, ``items``, a ``$ref`` into ``$defs`` (a recursion
kept in the sent schema), every ``allOf`` part, and the branch of an
``anyOf``/``oneOf`` the value is for. A union reads a string as pydantic's
smart mode reads ``int | None`` (``"5"`` is 5) and ``int | str`` (``"7"``
stays ``"7"``: a branch takes the string as it is); an object takes the first
object branch it fits (its required keys present, its ``const``/``enum``
keys matching: a discriminated union's tag), an array the first array branch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["coerce_scalars", "grouped_number"]

_INTEGER = re.compile(r"[+-]?\d+")
_BOOLEANS = {**dict.fromkeys(("true", "t", "yes", "y", "on", "1"), True),
             **dict.fromkeys(("false", "f", "no", "n", "off", "0"), False)}
"""The strings pydantic's lax mode reads as booleans."""
_SCALARS = frozenset({"integer", "number", "boolean"})
_GROUPED = re.compile(r"([+-]?)(\d{1,3}(?:,\d{3})+)(\.\d+)?")
"""A number written with comma thousands separators (``"1,200"``,
``"12,345,678"``, ``"1,200.50"``)."""


def grouped_number(text: str, types: set[str]) -> Any:
    """The number ``text`` stands for when it is written with comma thousands
    separators and that is its one reading, where ``types`` (a schema's) want
    an integer or number and no string; else ``text``.

    ``"1,200.50"`` (a decimal point after the groups) and ``"12,345,678"``
    (a decimal comma is written once at most) are read for either;
    ``"1,200"`` is 1200 for an integer only: for a number it may be 1.2 with
    a decimal comma, which is left to validation (the model is asked again).
    Currency signs and units (``"$30"``, ``"5 kg"``) are never dropped."""
    match = _GROUPED.fullmatch(text.strip())
    if match is None or "string" in types or not types & {"integer", "number"}:
        return text
    sign, groups, fraction = match.groups()
    digits = sign + groups.replace(",", "")
    if fraction:
        return float(digits + fraction) if "number" in types else text
    if "integer" in types or groups.count(",") > 1:
        return int(digits)
    return text


def _scalar(text: str, types: set[str]) -> Any:
    """The number or boolean a string stands for, when the schema wants one and
    no string; else ``text``."""
    value = text.strip()
    grouped = grouped_number(value, types)
    if grouped is not value:
        return grouped
    if "integer" in types and _INTEGER.fullmatch(value):
        return int(value)
    if "number" in types:
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return int(number) if _INTEGER.fullmatch(value) else number
    if "boolean" in types and value.lower() in _BOOLEANS:
        return _BOOLEANS[value.lower()]
    return text


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else set()


def _target(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema``, or what its ``$ref`` into ``root``'s ``$defs`` names."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        if isinstance(found, Mapping):
            return found
    return schema


def _takes_string(branch: Mapping[str, Any], text: str, root: Mapping[str, Any]) -> bool:
    """Whether ``branch`` may take ``text`` as it is (a string type, a
    ``const``/``enum`` holding it, or no type said)."""
    branch = _target(branch, root)
    if "const" in branch or "enum" in branch:
        return branch.get("const") == text or text in (branch.get("enum") or ())
    types = _types(branch)
    return "string" in types or not (types or any(k in branch for k in (
        "anyOf", "oneOf", "allOf", "$ref", "properties", "items")))


def _fits(data: dict[str, Any], branch: Mapping[str, Any]) -> bool:
    """Whether the object ``data`` is for the object ``branch``: its required
    keys are there and its ``const``/``enum`` keys match (a tag)."""
    types = _types(branch)
    props = branch.get("properties")
    if (types and "object" not in types) or not (types or isinstance(props, Mapping)):
        return False
    if any(key not in data for key in branch.get("required") or ()):
        return False
    for key, sub in (props if isinstance(props, Mapping) else {}).items():
        if key in data and isinstance(sub, Mapping):
            if "const" in sub and sub["const"] != data[key]:
                return False
            if isinstance(sub.get("enum"), list) and data[key] not in sub["enum"]:
                return False
    return not (branch.get("additionalProperties") is False
                and set(data) - set(props if isinstance(props, Mapping) else ()))


def _union(data: Any, branches: list[Any], root: Mapping[str, Any], refs: frozenset[str]) -> Any:
    """``data`` read for the ``anyOf``/``oneOf`` branch it is for (module
    docstring); ``refs``: as ``_coerce`` (unions whose branches refer to each
    other stop)."""
    shaped = [b for b in branches if isinstance(b, Mapping)]
    if isinstance(data, str):
        if any(_takes_string(b, data, root) for b in shaped):
            return data
        for branch in shaped:
            read = _coerce(data, branch, root, refs)
            if read is not data:
                return read
        return data
    for branch in shaped:
        target = _target(branch, root)
        if (isinstance(data, dict) and _fits(data, target)) or (
                isinstance(data, list) and ("array" in _types(target) or "items" in target)):
            return _coerce(data, branch, root, refs)
    return data


def coerce_scalars(data: Any, schema: Mapping[str, Any],
                   root: Mapping[str, Any] | None = None) -> Any:
    """``data`` with numbers and booleans given as strings (``"30"``, ``"1.5"``,
    ``"true"``) converted where ``schema`` wants an integer, number or boolean
    and no string, wherever the schema says a field's type (module docstring)
    — the lax reading pydantic gives a model's fields (C27: a model that
    sends ``"30"`` for an integer is not asked again; one that sends
    ``"thirty"`` is). ``root`` holds the ``$defs`` (default: ``schema``).
    Other values are left for validation."""
    return _coerce(data, schema, schema if root is None else root, frozenset())


def _coerce(data: Any, schema: Any, root: Mapping[str, Any], refs: frozenset[str]) -> Any:
    """``coerce_scalars``; ``refs``: the references followed at this level of
    ``data`` (a ``$ref`` chain that comes back without going deeper stops)."""
    if not isinstance(schema, Mapping):
        return data
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in refs:
        target = _target(schema, root)
        if target is not schema:
            data = _coerce(data, target, root, refs | {ref})
    for part in schema.get("allOf") or ():
        data = _coerce(data, part, root, refs)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        data = _union(data, branches, root, refs)
    types = _types(schema)
    if isinstance(data, str):
        if types & _SCALARS and "string" not in types:
            return _scalar(data, types)
        return data
    if isinstance(data, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        extra = schema.get("additionalProperties")
        if not props and not isinstance(extra, Mapping):
            return data
        return {k: _coerce(v, props.get(k, extra or {}), root, frozenset())
                for k, v in data.items()}
    if isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        return [_coerce(v, schema["items"], root, frozenset()) for v in data]
    return data
