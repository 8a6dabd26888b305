"""The ``gemini`` dialect: Gemini's OpenAPI subset for ``responseSchema`` and
function ``parameters`` (ai.google.dev/gemini-api/docs/structured-output):
``$ref`` inlined, unsupported keywords dropped, ``anyOf [T, null]`` as
``nullable``, enums as strings, a tuple's ``prefixItems`` as one ``items``
schema; a truly recursive schema stays JSON Schema with its ``$defs``/``$ref``
(sent in ``responseJsonSchema``/``parametersJsonSchema``).

A union node is ``anyOf`` alone: the API refuses ``nullable`` or a
``description`` beside ``anyOf`` (issue 32: ``str | int | None`` and a
described union came back 400, native and tool path alike), so a union's
nullability and description go into each of its branches (``_union_alone``):
``{"anyOf": [{"type": "string", "nullable": true, "description": d},
{"type": "integer", "nullable": true, "description": d}]}`` accepts the same
values."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from agentflow.output._dialect_base import DialectSchema, schema_types, unmarked

__all__ = ["gemini"]

_FORMATS: dict[str, frozenset[str]] = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
"""The ``format`` values the subset takes per type (ai.google.dev/api/caching#Schema:
"for NUMBER type: float, double; for INTEGER type: int32, int64; for STRING type:
enum, date-time"); any other is a 400, so it goes into the description."""

_GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "propertyOrdering",
    }
)


def gemini(schema: dict[str, Any]) -> DialectSchema:
    """Gemini ``responseSchema``/function ``parameters`` subset (ai.google.dev/
    gemini-api/docs/structured-output): no ``$ref``/``$defs``, no
    ``additionalProperties``, string-only enums, ``nullable`` instead of null
    unions. A truly recursive schema cannot be inlined: it is kept as JSON
    Schema (``_gemini_recursive``)."""
    defs = schema.get("$defs", {})
    try:
        return DialectSchema(_geminify(schema, defs, (), ""), strict=False)
    except _Recursive:
        return DialectSchema(_gemini_recursive(unmarked(schema)), strict=False)


class _Recursive(Exception):
    """A ``$ref`` back into a definition being inlined (true recursion)."""


def _gemini_recursive(schema: dict[str, Any]) -> dict[str, Any]:
    """A recursive schema (a tree: ``children: list[Node]``) for Gemini's JSON
    Schema fields, which take ``$defs``/``$ref`` and recursion, unlike the
    OpenAPI subset ("Unknown name \"$defs\"", C16). A property that leads back
    into its recursion is taken out of ``required``: Gemini takes a recursive
    reference only where it is not required (it unrolls the recursion to a
    finite depth). The reply is still validated against the full type, so a
    field pydantic requires and the model left out is sent back as missing."""
    out = copy.deepcopy(schema)
    defs = out.get("$defs", {})
    cyclic = {name for name in defs if name in _refs_from(defs[name], defs, set())}

    def relax(node: Any, looping: bool) -> None:
        """Un-require, in a definition on a cycle (``looping``), the properties
        that lead into a cycle; an entry into a tree (``root: Node``) stays required."""
        if isinstance(node, list):
            for item in node:
                relax(item, looping)
            return
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if looping and isinstance(props, dict) and isinstance(node.get("required"), list):
            node["required"] = [k for k in node["required"]
                                if not (_refs_from(props.get(k), defs, set()) & cyclic)]
        for key, value in node.items():
            if key != "$defs":
                relax(value, looping)

    root = {k: v for k, v in out.items() if k != "$defs"}
    relax(out, any(root == defs[name] for name in cyclic))  # a recursive root model
    for name, definition in defs.items():
        relax(definition, name in cyclic)
    return out


def _refs_from(node: Any, defs: Mapping[str, Any], seen: set[str]) -> set[str]:
    """Every definition name reachable from ``node`` through ``$ref``s."""
    if isinstance(node, list):
        return set().union(*(_refs_from(n, defs, seen) for n in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found: set[str] = set()
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.split("/")[-1]
        found.add(name)
        if name not in seen:
            seen.add(name)
            found |= _refs_from(defs.get(name), defs, seen)
    for key, value in node.items():
        if key != "$defs":
            found |= _refs_from(value, defs, seen)
    return found


def _geminify(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...], path: str) -> Any:
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"].split("/")[-1]
        if ref in stack:
            raise _Recursive(path or ref)
        target = dict(defs.get(ref, {}))
        if "description" in node:
            target["description"] = node["description"]
        return _geminify(target, defs, (*stack, ref), path)
    if "oneOf" in node:
        node = {**node, "anyOf": node["oneOf"]}
    if "allOf" in node and len(node["allOf"]) == 1:
        node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
    if "const" in node and "enum" not in node:
        node = {**node, "enum": [node["const"]]}
    if isinstance(node.get("prefixItems"), list) and "items" not in node:
        node = {**node, "items": _tuple_items(node["prefixItems"])}
    out: dict[str, Any] = {}
    anyof = node.get("anyOf")
    if isinstance(anyof, list):
        non_null = [b for b in anyof if schema_types(b) != {"null"}]
        if len(non_null) < len(anyof):
            out["nullable"] = True
        if len(non_null) == 1:
            merged = {**non_null[0], **{k: v for k, v in node.items() if k != "anyOf"}}
            inner = _geminify(merged, defs, stack, path)
            return _union_alone({**inner, **out})
        node = {**node, "anyOf": non_null}
    types = node.get("type")
    if isinstance(types, list):
        non_null_types = [t for t in types if t != "null"]
        if len(non_null_types) < len(types):
            out["nullable"] = True
        if len(non_null_types) > 1:  # Schema.type is one type: a list is a 400
            inner = _geminify(_type_branches(node, non_null_types), defs, stack, path)
            return _union_alone({**inner, **out})
        node = {**node, "type": non_null_types[0] if non_null_types else "string"}
    for key, value in node.items():
        if key not in _GEMINI_KEYWORDS:
            continue
        if key == "properties":
            out[key] = {
                k: _geminify(v, defs, stack, f"{path}.{k}" if path else k) for k, v in value.items()
            }
        elif key == "items":
            out[key] = _geminify(value, defs, stack, path)
        elif key == "anyOf":
            out[key] = [_geminify(v, defs, stack, path) for v in value]
        elif key == "enum":
            out[key] = [v if isinstance(v, str) else str(v) for v in value if v is not None]
            if any(not isinstance(v, str) for v in value):
                out["type"] = "string"
        else:
            out[key] = value
    if "enum" in out:
        out["type"] = "string"
        out.pop("format", None)
    elif "format" in out and out["format"] not in _FORMATS.get(str(out.get("type")), ()):
        # the subset takes few formats (400 "format: only 'enum' and 'date-time' are
        # supported for STRING type"): a date, uri, uuid, email... is said in words instead
        hint = f"format: {out.pop('format')}"
        out["description"] = f"{out['description']} ({hint})" if out.get("description") else hint
    if "properties" in out:
        out.setdefault("type", "object")
        out["propertyOrdering"] = list(out["properties"])
    return _union_alone(out)


_PUSHED = ("nullable", "description")
"""What a union node says that its branches can say for it."""


def _union_alone(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with ``anyOf`` as its only field: its nullability and description
    pushed into every branch (a branch's own description wins), anything else
    beside ``anyOf`` dropped (the subset refuses it there)."""
    if "anyOf" not in node or len(node) == 1:
        return node
    extra = {k: node[k] for k in _PUSHED if k in node and node[k] is not False}
    return {"anyOf": [_pushed(branch, extra) for branch in node["anyOf"]]}


def _pushed(branch: Any, extra: Mapping[str, Any]) -> Any:
    if not isinstance(branch, dict) or not extra:
        return branch
    if "anyOf" in branch:  # a union inside a union: down to its branches
        return {"anyOf": [_pushed(b, extra) for b in branch["anyOf"]]}
    return {**branch, **{k: v for k, v in extra.items() if k not in branch or k == "nullable"}}


_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "string": frozenset({"format", "minLength", "maxLength", "pattern", "enum"}),
    "number": frozenset({"format", "minimum", "maximum", "enum"}),
    "integer": frozenset({"format", "minimum", "maximum", "enum"}),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required"}),
}
"""The keywords of each JSON type, for splitting a node of several types."""


def _type_branches(node: Mapping[str, Any], types: list[Any]) -> dict[str, Any]:
    """A node of several types (``"type": ["string", "number"]``, as hand-written
    JSON Schemas have; Gemini's ``Schema.type`` takes one: "Proto field is not
    repeating, cannot start list") as an ``anyOf`` of one branch per type, each
    with the keywords that apply to it; the description stays on the node."""
    branches = [{"type": t, **{k: v for k, v in node.items()
                               if k in _TYPE_KEYWORDS.get(str(t), ())}} for t in types]
    shared = {k: v for k, v in node.items() if k == "description"}
    return {**shared, "anyOf": branches}


def _tuple_items(positions: list[Any]) -> dict[str, Any]:
    """One ``items`` schema for a tuple's positions (Gemini has no
    ``prefixItems`` and refuses an array without ``items``): the position
    schema when all agree, else ``anyOf`` of the distinct ones. The length
    stays in ``minItems``/``maxItems``; validation checks each position."""
    distinct: list[Any] = []
    for schema in positions:
        if schema not in distinct:
            distinct.append(schema)
    if len(distinct) == 1:
        only: dict[str, Any] = distinct[0]
        return only
    return {"anyOf": distinct}
