"""The ``openai_strict`` dialect: OpenAI structured-outputs strict rules
(platform.openai.com/docs/guides/structured-outputs#supported-schemas): every
object closed and every property required, optional ones nullable, unsupported
keywords stripped, ``oneOf`` as ``anyOf`` without ``discriminator``; a schema
that cannot be strict is sent as written with ``strict=False``."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from agentflow.output._dialect_base import DialectSchema, resolve_ref, schema_types

__all__ = ["openai_strict"]

_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)


class _NotStrict(Exception):
    pass


_UNSTRICT_KEYWORDS = frozenset(
    {"prefixItems", "allOf", "not", "if", "then", "else", "patternProperties",
     "dependentSchemas", "contains", "additionalItems"}
)
"""Keywords strict mode lacks whose loss would change what a value may be
(a tuple's item types, an intersection, a negation...): a schema holding one
is sent non-strict, as written, rather than stripped into another type."""


def openai_strict(schema: dict[str, Any]) -> DialectSchema:
    """OpenAI structured-outputs strict rules (platform.openai.com/docs/guides/
    structured-outputs#supported-schemas). A schema that cannot follow them —
    a free-form mapping, a node without a type (``Any``: "schema must have a
    'type' key"), a keyword of ``_UNSTRICT_KEYWORDS`` — is returned as it is,
    with ``strict=False``. A ``$ref`` with sibling keywords (a field's
    description) is inlined, as the openai SDK does
    (``openai.lib._pydantic._ensure_strict_json_schema``: "we can't use
    `$ref`s if there are also other properties defined")."""
    try:
        out = _strictify(copy.deepcopy(schema), schema, ())
    except _NotStrict:
        return DialectSchema(schema, strict=False)
    return DialectSchema(out, strict=True)


def _strictify(node: Any, root: Mapping[str, Any], inlining: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_strictify(n, root, inlining) for n in node]
    if not isinstance(node, dict):
        return node
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    node.pop("discriminator", None)
    if "allOf" in node and len(node["allOf"]) == 1:
        only = node.pop("allOf")[0]
        node = {**only, **node}
    if _UNSTRICT_KEYWORDS.intersection(node):
        raise _NotStrict
    if "$ref" in node:
        ref = node["$ref"]
        siblings = {k: v for k, v in node.items()
                    if k != "$ref" and k in _STRICT_KEYWORDS and k != "$defs"}
        if not siblings:
            return {"$ref": ref}
        if ref in inlining or not isinstance(ref, str):  # a field of its own type: keep the ref
            return {"$ref": ref}
        target = resolve_ref(node, root)
        if target is node or not target:
            raise _NotStrict  # a reference strict mode cannot follow
        merged = {**copy.deepcopy(dict(target)), **siblings}
        return _strictify(merged, root, (*inlining, ref))
    if not ({"type", "anyOf", "enum", "const"} & node.keys()):
        raise _NotStrict  # Any: strict mode needs a type on every schema
    if node.get("format") not in _STRICT_FORMATS:
        node.pop("format", None)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _STRICT_KEYWORDS:
            continue
        if key == "properties" or key == "$defs":
            out[key] = {k: _strictify(v, root, inlining) for k, v in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _strictify(value, root, inlining)
        else:
            out[key] = value
    if "object" in schema_types(out) or "properties" in out:
        extra = out.get("additionalProperties")
        if (
            isinstance(extra, dict)
            or (extra is True)
            or ("properties" not in out and extra is not False)
        ):
            raise _NotStrict  # a free-form mapping cannot be strict
        props = out.setdefault("properties", {})
        required = set(node.get("required", ()))
        for key, prop in props.items():
            if key not in required:
                props[key] = _nullable(prop)
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if "null" in schema_types(node):
        return node
    if "anyOf" in node:
        if not any(schema_types(b) == {"null"} for b in node["anyOf"]):
            node = {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
        return node
    if isinstance(node.get("type"), str) and "$ref" not in node and "enum" not in node:
        return {**node, "type": [node["type"], "null"]}
    desc = {"description": node["description"]} if "description" in node else {}
    inner = {k: v for k, v in node.items() if k != "description"}
    return {"anyOf": [inner, {"type": "null"}], **desc}
