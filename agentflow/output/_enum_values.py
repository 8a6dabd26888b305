"""The enum member a model's scalar stands for (``agentflow.output.decoding``,
stage 2, ``normalize``): a member a schema dialect sent as a string (Gemini:
``"2"`` for ``2``, ``"true"`` for ``True``), a number or boolean given for a
string member, a string that differs from exactly one string member in case
or outer blanks only (``"HIGH"`` for ``"high"``); and whether a union's
branch takes a scalar as it is (then it is no member in disguise).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import orjson

from agentflow._clean_text import json_bytes
from agentflow.output.dialects import resolve_ref, schema_types

__all__ = ["accepts_as_is", "enum_of", "enum_value"]


def enum_value(data: Any, choices: list[Any]) -> Any:
    """The enum member ``data`` stands for, when a dialect stringified it (or
    the model gave a scalar for a string member), or when it differs from
    exactly one string member in case or outer blanks only (``"HIGH"``,
    ``" High"`` for ``"high"``; two members that differ in case only leave it
    to validation); else ``data``."""
    if any(data == c and type(data) is type(c) for c in choices):
        return data
    if isinstance(data, str):
        text = data.strip()
        folded = text.casefold()
        cased = [c for c in choices if isinstance(c, str) and c.casefold() == folded]
        if len(cased) == 1:  # "HIGH" for "high": one member only reads so
            return cased[0]
        for choice in choices:
            if isinstance(choice, str):
                continue
            forms = {str(choice)}
            with contextlib.suppress(TypeError):
                forms.add(orjson.dumps(choice).decode())
            if text in forms or text.lower() in forms:
                return choice
            if isinstance(choice, int | float) and not isinstance(choice, bool):
                try:
                    number = float(text)
                except ValueError:
                    continue
                if number == choice:
                    return choice
        return data
    if isinstance(data, bool | int | float) and data is not None:
        forms = {str(data), json_bytes(data).decode()}
        for choice in choices:
            if isinstance(choice, str) and choice in forms:
                return choice
    return data


def enum_of(node: Mapping[str, Any], root: Mapping[str, Any]) -> list[Any]:
    """The members of ``node``'s ``enum`` or ``const`` (``$ref`` followed), or ``[]``."""
    node = resolve_ref(node, root)
    if isinstance(node.get("enum"), list):
        return list(node["enum"])
    if "const" in node:
        return [node["const"]]
    return []


def accepts_as_is(data: Any, branches: list[Any], root: Mapping[str, Any]) -> bool:
    """Whether a branch without enum takes ``data``'s JSON type as is (then it
    is not an enum member in disguise)."""
    kind = {str: "string", bool: "boolean", int: "integer", float: "number"}.get(type(data))
    for branch in branches:
        b = resolve_ref(branch, root)
        if "enum" in b or "const" in b:
            continue
        t = schema_types(b)
        if kind in t or (kind == "integer" and "number" in t):
            return True
    return False
