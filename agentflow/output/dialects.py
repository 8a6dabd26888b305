"""JSON Schema dialects: one vendor family's accepted subset each.

``transform_schema(schema, dialect)`` rewrites a plain JSON Schema (pydantic's,
titles dropped) for:

* ``plain`` – unchanged (but for the ``x-grounded`` marks, which only the
  ``local`` dialect keeps, for its grammar);
* ``openai_strict`` – every object closed (``additionalProperties: false``)
  with every property required, optional ones nullable, defaults and other
  unsupported keywords stripped, ``oneOf`` rewritten to ``anyOf`` without
  ``discriminator`` (OpenAI structured outputs rules). A schema that cannot be
  made strict (a free-form ``dict``) is returned with ``strict=False``;
* ``gemini`` – Gemini's OpenAPI subset: ``$ref`` inlined, unsupported keywords
  dropped, ``anyOf [T, null]`` as ``nullable``, enums as strings, a tuple's
  ``prefixItems`` as one ``items`` schema; a truly recursive schema (a tree)
  stays JSON Schema with its ``$defs``/``$ref`` (``_gemini_recursive``: the
  adapter sends it in ``responseJsonSchema``/``parametersJsonSchema``);
* ``local`` – for grammar-constrained small local models: objects closed,
  every property required, and strings/arrays bounded (``maxLength``/
  ``maxItems``) so that a reply always ends.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentflow.errors import SchemaError
from agentflow.model import SchemaDialect, ToolSpec

__all__ = [
    "LOCAL_MAX_ITEMS",
    "LOCAL_MAX_STRING",
    "DialectSchema",
    "resolve_ref",
    "schema_types",
    "tool_spec_for",
    "transform_schema",
]

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


@dataclass(frozen=True, slots=True)
class DialectSchema:
    """A schema in one dialect. ``strict`` says whether it satisfies the
    dialect's strict rules (send ``strict: true`` only then)."""

    schema: Mapping[str, Any]
    strict: bool


def resolve_ref(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with local ``#/$defs/...`` references followed."""
    seen = 0
    while "$ref" in node and seen < 32:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            break
        node = root.get("$defs", {}).get(ref.split("/")[-1], {})
        seen += 1
    return node


def schema_types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    if isinstance(t, list):
        return set(t)
    return {t} if isinstance(t, str) else set()


# --------------------------------------------------------------------------- dialects


_GROUNDED_KEY = "x-grounded"  # agentflow.extraction.grounding.GROUNDED_KEY
_MARK_KEYS = (_GROUNDED_KEY, "x-grounded-line", "x-grounded-after")  # LINE_KEY, AFTER_KEY


def _unmarked(node: Any) -> Any:
    """``node`` without ``x-grounded`` marks (nor ``x-grounded-line``; copied
    only where there are some)."""
    if isinstance(node, list):
        items = [_unmarked(n) for n in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out = {k: _unmarked(v) for k, v in node.items() if k not in _MARK_KEYS}
    same = len(out) == len(node) and all(out[k] is node[k] for k in out)
    return node if same else out


def _plain(schema: dict[str, Any]) -> DialectSchema:
    return DialectSchema(_unmarked(schema), strict=False)


class _NotStrict(Exception):
    pass


_UNSTRICT_KEYWORDS = frozenset(
    {"prefixItems", "allOf", "not", "if", "then", "else", "patternProperties",
     "dependentSchemas", "contains", "additionalItems"}
)
"""Keywords strict mode lacks whose loss would change what a value may be
(a tuple's item types, an intersection, a negation...): a schema holding one
is sent non-strict, as written, rather than stripped into another type."""


def _openai_strict(schema: dict[str, Any]) -> DialectSchema:
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


def _gemini(schema: dict[str, Any]) -> DialectSchema:
    """Gemini ``responseSchema``/function ``parameters`` subset (ai.google.dev/
    gemini-api/docs/structured-output): no ``$ref``/``$defs``, no
    ``additionalProperties``, string-only enums, ``nullable`` instead of null
    unions. A truly recursive schema cannot be inlined: it is kept as JSON
    Schema (``_gemini_recursive``)."""
    defs = schema.get("$defs", {})
    try:
        return DialectSchema(_geminify(schema, defs, (), ""), strict=False)
    except _Recursive:
        return DialectSchema(_gemini_recursive(_unmarked(schema)), strict=False)


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
            return {**inner, **out}
        node = {**node, "anyOf": non_null}
    types = node.get("type")
    if isinstance(types, list):
        non_null_types = [t for t in types if t != "null"]
        if len(non_null_types) < len(types):
            out["nullable"] = True
        node = {**node, "type": non_null_types[0] if len(non_null_types) == 1 else non_null_types}
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
    if "properties" in out:
        out.setdefault("type", "object")
        out["propertyOrdering"] = list(out["properties"])
    return out


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


LOCAL_MAX_STRING = 200
LOCAL_MAX_ITEMS = 12


def _local(schema: dict[str, Any]) -> DialectSchema:
    """Bounded schema for grammar-constrained local models: every object closed
    and every property required (a base model otherwise stops early, rambles
    or invents keys), strings capped
    at ``LOCAL_MAX_STRING`` characters and arrays at ``LOCAL_MAX_ITEMS`` items
    unless the type sets its own bounds."""
    return DialectSchema(_bound(copy.deepcopy(schema)), strict=False)


def _bound(node: Any) -> Any:
    if isinstance(node, list):
        return [_bound(n) for n in node]
    if not isinstance(node, dict):
        return node
    for key in ("properties", "$defs"):
        if isinstance(node.get(key), dict):
            node[key] = {k: _bound(v) for k, v in node[key].items()}
    for key in ("items", "anyOf", "oneOf", "allOf"):
        if key in node:
            node[key] = _bound(node[key])
    node.pop("default", None)
    types = schema_types(node)
    if "string" in types and "enum" not in node and "format" not in node:
        node.setdefault("maxLength", LOCAL_MAX_STRING)
    if "array" in types:
        node.setdefault("maxItems", LOCAL_MAX_ITEMS)
    if "properties" in node:
        node["required"] = list(node["properties"])
        node.setdefault("additionalProperties", False)  # a grammar would allow any key
    return node


def transform_schema(schema: Mapping[str, Any], dialect: SchemaDialect) -> DialectSchema:
    """Any JSON Schema (a tool's parameters, say) in ``dialect``.

    Raises:
        SchemaError: the dialect cannot express it.
    """
    return _TRANSFORMS[dialect](dict(schema))


_TRANSFORMS = {
    "plain": _plain,
    "openai_strict": _openai_strict,
    "gemini": _gemini,
    "local": _local,
}


def tool_spec_for(spec: ToolSpec, dialect: SchemaDialect) -> ToolSpec:
    """A function tool's spec with its parameters in ``dialect``: the same
    transform as the output schema gets (enums as strings for Gemini, closed
    objects for OpenAI strict, with ``strict`` set when the schema satisfies
    it). Replies are converted back by ``agentflow.output.decoding.normalize``
    against the tool's plain schema. A schema the dialect cannot express
    (true recursion for Gemini) is kept as it is: the adapter then sends it in
    the vendor's JSON Schema field."""
    if dialect == "plain" or not spec.parameters.get("properties"):
        return spec
    try:
        converted = transform_schema(copy.deepcopy(dict(spec.parameters)), dialect)
    except SchemaError:
        return spec
    return ToolSpec(spec.name, spec.description, converted.schema, converted.strict)

