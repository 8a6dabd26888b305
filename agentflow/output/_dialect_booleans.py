"""Boolean subschemas (JSON Schema 2020-12, section 4.3.2: ``true`` accepts
every instance, ``false`` none) rewritten as the object schemas the vendor
dialects understand.

Schemas that users and MCP servers write by hand use them
(``{"properties": {"extra": true}}``, ``"items": false``); pydantic does not,
so the dialect transforms, written against object schemas, would otherwise
fail on them with an ``AttributeError``.
"""

from __future__ import annotations

from typing import Any

from agentflow.errors import SchemaError

__all__ = ["without_boolean_schemas"]

_MEMBER_LISTS = ("anyOf", "oneOf")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def without_boolean_schemas(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a JSON Schema) with every boolean subschema rewritten
    (a new tree where something changed; ``schema`` is not modified):

    * ``true`` becomes ``{}`` (any value);
    * a ``false`` property is dropped (it may never appear); ``false`` in
      ``anyOf``/``oneOf`` is dropped (it never matches); ``"items": false``
      becomes ``"maxItems": 0``; any other ``false`` becomes ``{"not": {}}``.
    ``additionalProperties`` keeps its boolean form, which every dialect reads.

    Raises:
        SchemaError: the schema can hold no value at all (a required property, an
            ``allOf`` member or every ``anyOf`` member is ``false``); the
            message names the place.
    """
    return _node(schema, "#")


def _sub(node: Any, where: str) -> Any:
    if node is True:
        return {}
    if node is False:
        return {"not": {}}
    return _node(node, where) if isinstance(node, dict) else node


def _node(node: dict[str, Any], where: str) -> dict[str, Any]:
    out = dict(node)
    for key in _SCHEMA_MAPS:
        members = node.get(key)
        if isinstance(members, dict):
            kept = {name: _sub(sub, f"{where}/{key}/{name}")
                    for name, sub in members.items() if sub is not False}
            if key == "properties":
                _check_required(node, members, where)
            out[key] = kept
    for key in _MEMBER_LISTS:
        members = node.get(key)
        if isinstance(members, list):
            kept_list = [_sub(sub, f"{where}/{key}/{i}")
                         for i, sub in enumerate(members) if sub is not False]
            if not kept_list and members:
                raise SchemaError(f"{where}/{key}", "every member is false: no value fits")
            out[key] = kept_list
    members = node.get("allOf")
    if isinstance(members, list):
        if any(sub is False for sub in members):
            raise SchemaError(f"{where}/allOf", "a member is false: no value fits")
        out["allOf"] = [_sub(sub, f"{where}/allOf/{i}") for i, sub in enumerate(members)]
    if node.get("items") is False:
        del out["items"]
        out["maxItems"] = 0
    elif "items" in node:
        out["items"] = _sub(node["items"], f"{where}/items")
    if isinstance(node.get("prefixItems"), list):
        out["prefixItems"] = [_sub(sub, f"{where}/prefixItems/{i}")
                              for i, sub in enumerate(node["prefixItems"])]
    for key in ("not", "if", "then", "else", "contains", "propertyNames"):
        if key in node:
            out[key] = _sub(node[key], f"{where}/{key}")
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _node(node["additionalProperties"],
                                            f"{where}/additionalProperties")
    return out


def _check_required(node: dict[str, Any], properties: dict[str, Any], where: str) -> None:
    required = node.get("required")
    if not isinstance(required, list):
        return
    for name in required:
        if properties.get(name) is False:
            raise SchemaError(f"{where}/properties/{name}",
                              "required, but its schema is false: no value fits")
