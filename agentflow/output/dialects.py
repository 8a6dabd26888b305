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
  every property required, and strings/arrays/open objects (a ``dict``)
  bounded (``maxLength``/``maxItems``/``maxProperties``) so that a reply
  always ends; a node the dialect bounded says
  so in ``LOCAL_CAP_KEY`` (a private key, stripped before the schema is
  sent: ``without_local_caps``), so a type's own bound is never taken for
  the dialect's, even where they are equal.

The strict and Gemini transforms live in ``_dialect_strict`` and
``_dialect_gemini``, what they share in ``_dialect_base``; this module is the
entry point (``transform_schema``, ``tool_spec_for``) and the ``local`` dialect.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from agentflow.errors import SchemaError
from agentflow.model import SchemaDialect, ToolSpec
from agentflow.output._dialect_base import DialectSchema, resolve_ref, schema_types, unmarked
from agentflow.output._dialect_booleans import without_boolean_schemas
from agentflow.output._dialect_gemini import gemini
from agentflow.output._dialect_strict import openai_strict

__all__ = [
    "LOCAL_CAP_KEY",
    "LOCAL_MAX_ITEMS",
    "LOCAL_MAX_PROPERTIES",
    "LOCAL_MAX_STRING",
    "DialectSchema",
    "resolve_ref",
    "schema_types",
    "tool_spec_for",
    "transform_schema",
    "without_local_caps",
]


def _plain(schema: dict[str, Any]) -> DialectSchema:
    """The schema as written, less agentflow's ``x-grounded`` marks."""
    return DialectSchema(unmarked(schema), strict=False)


LOCAL_MAX_STRING = 200
LOCAL_MAX_ITEMS = 12
LOCAL_MAX_PROPERTIES = LOCAL_MAX_ITEMS
"""Keys the ``local`` dialect lets an open object (a ``dict[str, V]``, or a
model with ``extra="allow"``: beyond its declared properties) hold when the
schema sets no ``maxProperties`` (pydantic writes one for
``Field(max_length=N)`` on a dict): as many as a list's items, since to the
model a dict is a list of key/value pairs. Without it a grammar lets a small
model write keys until the reply's token budget runs out. llama.cpp's
llguidance enforces ``maxProperties`` (checked on the bundled model:
tests/test_providers_local.py)."""

LOCAL_CAP_KEY = "x-local-cap"
"""The keywords the ``local`` dialect added to a node to keep a reply finite
(a list: ``["maxItems"]``, ``["maxLength"]``, ``["maxProperties"]``), as
opposed to the schema's own bounds (``agentflow.output.list_bounds.
schema_max_items`` and ``schema_max_properties`` read it)."""


def _local(schema: dict[str, Any]) -> DialectSchema:
    """Bounded schema for grammar-constrained local models: every object closed
    and every property required (a base model otherwise stops early, rambles
    or invents keys), strings capped
    at ``LOCAL_MAX_STRING`` characters, arrays at ``LOCAL_MAX_ITEMS`` items
    and open objects at ``LOCAL_MAX_PROPERTIES`` keys beyond their declared
    properties, unless the type sets its own bounds."""
    return DialectSchema(_bound(copy.deepcopy(schema)), strict=False)


def _bound(node: Any) -> Any:
    if isinstance(node, list):
        return [_bound(n) for n in node]
    if not isinstance(node, dict):
        return node
    for key in ("properties", "$defs", "patternProperties"):
        if isinstance(node.get(key), dict):
            node[key] = {k: _bound(v) for k, v in node[key].items()}
    for key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
        if key in node:
            node[key] = _bound(node[key])
    node.pop("default", None)
    types = schema_types(node)
    added: list[str] = []
    if "string" in types and "enum" not in node and "format" not in node and (
            "maxLength" not in node):
        node["maxLength"] = LOCAL_MAX_STRING
        added.append("maxLength")
    if "array" in types and "maxItems" not in node:
        node["maxItems"] = LOCAL_MAX_ITEMS
        added.append("maxItems")
    if "properties" in node:
        node["required"] = list(node["properties"])
        node.setdefault("additionalProperties", False)  # a grammar would allow any key
    if "object" in types and node.get("additionalProperties", True) is not False and (
            "maxProperties" not in node):  # a dict: keys the grammar would never stop
        node["maxProperties"] = len(node.get("properties") or ()) + LOCAL_MAX_PROPERTIES
        added.append("maxProperties")
    if added:
        node[LOCAL_CAP_KEY] = added
    return node


def without_local_caps(node: Any) -> Any:
    """``node`` (a ``local``-dialect schema, or any part of one) without its
    ``LOCAL_CAP_KEY`` marks, the bounds themselves kept: what is sent. Copied
    only where there are some (an unmarked schema is returned as it is)."""
    if isinstance(node, list):
        items = [without_local_caps(n) for n in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out = {k: without_local_caps(v) for k, v in node.items() if k != LOCAL_CAP_KEY}
    same = len(out) == len(node) and all(out[k] is node[k] for k in out)
    return node if same else out


def transform_schema(schema: Mapping[str, Any], dialect: SchemaDialect) -> DialectSchema:
    """Any JSON Schema (a tool's parameters, say) in ``dialect``.

    Boolean subschemas (``true``, ``false``) are rewritten first as object
    schemas, for every dialect but ``plain`` (``_dialect_booleans``).

    Raises:
        SchemaError: the dialect cannot express it, or it is not a JSON object,
            or it can hold no value (a required property whose schema is ``false``).
    """
    if dialect == "plain":
        return _plain(dict(_object(schema)))
    return _TRANSFORMS[dialect](without_boolean_schemas(dict(_object(schema))))


def _object(schema: Any) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping):
        raise SchemaError("", f"a JSON Schema must be an object here, got {schema!r:.40}")
    return schema


_TRANSFORMS = {
    "plain": _plain,
    "openai_strict": openai_strict,
    "gemini": gemini,
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

