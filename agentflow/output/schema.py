"""Output types -> JSON Schema, per vendor dialect, and back.

``OutputSpec.of(T)`` describes an output type once (cached per type): a
pydantic model, dataclass or TypedDict is an object schema as it is; any
other type (``list[Model]``, a ``Literal``, an enum, a scalar, a union or a
``dict``) is wrapped in an object under one field, ``result``, for the tool
and native paths, and unwrapped on return.

``spec.schema_for(dialect)`` gives the schema in a vendor's dialect (cached):

* ``plain`` – pydantic's JSON Schema, titles dropped;
* ``openai_strict`` – every object closed (``additionalProperties: false``)
  with every property required, optional ones nullable, defaults and other
  unsupported keywords stripped, ``oneOf`` rewritten to ``anyOf`` without
  ``discriminator`` (OpenAI structured outputs rules). A schema that cannot be
  made strict (a free-form ``dict``) is sent with ``strict: false``;
* ``gemini`` – Gemini's OpenAPI subset: ``$ref`` inlined, unsupported keywords
  dropped, ``anyOf [T, null]`` as ``nullable``, integer enums as strings;
  true recursion raises ``SchemaError`` naming the field;
* ``local`` – for grammar-constrained small local models: objects closed,
  every property required, and strings/arrays bounded (``maxLength``/``maxItems``) so that a
  reply always ends.

``spec.validate(data)`` validates against the user's original type, after a
schema-aware normalisation that undoes what the dialects changed (``null``
for a defaulted field -> the default; ``"2"`` for an integer enum -> ``2``)
and decodes a JSON string where an array/object was expected.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model
from typing_extensions import is_typeddict

from agentflow.errors import SchemaError
from agentflow.model import SchemaDialect

__all__ = ["DialectSchema", "OutputSpec", "transform_schema"]

WRAP_FIELD = "result"

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


def _is_object_type(tp: Any) -> bool:
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp)):
        return True
    return is_typeddict(tp)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


@dataclass(frozen=True, eq=False)
class OutputSpec:
    """An output type and how to ask for it.

    Attributes:
        output_type: the user's type.
        wrapped: the type travels as ``{"result": <value>}``.
        name: a schema name (``[A-Za-z0-9_-]``, from the type name).
        description: the type's docstring, if any.
    """

    output_type: Any
    wrapped: bool
    name: str
    description: str | None
    _adapter: TypeAdapter[Any] = field(repr=False)
    _plain: dict[str, Any] = field(repr=False)
    _cache: dict[str, DialectSchema] = field(default_factory=dict, repr=False)
    _adapters: dict[str, TypeAdapter[Any]] = field(default_factory=dict, repr=False)

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def of(output_type: Any) -> OutputSpec:
        """The spec of ``output_type`` (cached per type).

        Raises:
            SchemaError: pydantic cannot build a JSON Schema for the type.
        """
        from agentflow.tools import sanitize_tool_name

        wrapped = not _is_object_type(output_type)
        target: Any = output_type
        try:
            if wrapped:
                target = create_model("Output", **{WRAP_FIELD: (output_type, ...)})  # type: ignore[call-overload]
            adapter: TypeAdapter[Any] = TypeAdapter(target)
            plain = adapter.json_schema()
        except Exception as exc:  # pydantic's PydanticSchemaGenerationError, TypeError...
            raise SchemaError(
                _type_name(output_type), f"cannot build a JSON Schema: {exc}"
            ) from exc
        _strip_titles(plain)
        doc = getattr(output_type, "__doc__", None) if not wrapped else None
        if doc and isinstance(output_type, type) and doc == BaseModel.__doc__:
            doc = None
        return OutputSpec(
            output_type=output_type,
            wrapped=wrapped,
            name=sanitize_tool_name(_type_name(output_type))[:64],
            description=doc.strip() if doc else None,
            _adapter=adapter,
            _plain=plain,
        )

    @property
    def plain_schema(self) -> Mapping[str, Any]:
        """The plain JSON Schema (titles dropped)."""
        return self._plain

    def schema_for(self, dialect: SchemaDialect) -> DialectSchema:
        """The schema in ``dialect`` (cached).

        Raises:
            SchemaError: the dialect cannot express the type (names the field).
        """
        cached = self._cache.get(dialect)
        if cached is None:
            cached = self._cache[dialect] = _TRANSFORMS[dialect](self._plain, self.name)
        return cached

    def validate(self, data: Any) -> Any:
        """Validate decoded JSON as the user's type (lax mode), unwrapping.

        Raises:
            pydantic.ValidationError: listing each failing field.
        """
        data = _normalize(data, self._plain, self._plain)
        value = self._adapter.validate_python(data)
        return getattr(value, WRAP_FIELD) if self.wrapped else value

    def dump_json(self, value: Any) -> str:
        """``value`` as JSON text of the user's type (not wrapped)."""
        adapter = self._adapter if not self.wrapped else self._output_adapter()
        return adapter.dump_json(value).decode()

    def _output_adapter(self) -> TypeAdapter[Any]:
        adapter = self._adapters.get("output")
        if adapter is None:
            adapter = self._adapters["output"] = TypeAdapter(self.output_type)
        return adapter

    def validation_error(self, data: Any) -> ValidationError | None:
        """The validation error for ``data``, or ``None`` when it is valid."""
        try:
            self.validate(data)
        except ValidationError as exc:
            return exc
        return None


# --------------------------------------------------------------------------- helpers


def _strip_titles(node: Any) -> None:
    if isinstance(node, dict):
        title = node.get("title")
        if isinstance(title, str):
            del node["title"]
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    _strip_titles(prop)
            else:
                _strip_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while "$ref" in node and seen < 32:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            break
        node = root.get("$defs", {}).get(ref.split("/")[-1], {})
        seen += 1
    return node


def _types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    if isinstance(t, list):
        return set(t)
    return {t} if isinstance(t, str) else set()


def _normalize(data: Any, node: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """Undo dialect changes and common model slips, guided by the plain schema."""
    node = _resolve(node, root)
    types = _types(node)
    if isinstance(data, str) and types & {"array", "object"} and "string" not in types:
        stripped = data.strip()
        if stripped[:1] in ("[", "{"):
            try:
                data = orjson.loads(stripped)
            except orjson.JSONDecodeError:
                return data
    if (
        isinstance(data, str)
        and "enum" in node
        and all(isinstance(v, int) and not isinstance(v, bool) for v in node["enum"])
    ):
        try:
            return int(data)
        except ValueError:
            return data
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(data, dict) and "properties" in node:
        props: Mapping[str, Any] = node["properties"]
        required = set(node.get("required", ()))
        out: dict[str, Any] = {}
        for key, value in data.items():
            prop = props.get(key)
            if prop is None:
                out[key] = value
                continue
            if value is None and key not in required and not _allows_null(prop, root):
                continue  # strict dialects send null for "absent": let the default apply
            out[key] = _normalize(value, prop, root)
        return out
    if isinstance(data, list) and isinstance(node.get("items"), Mapping):
        return [_normalize(v, node["items"], root) for v in data]
    if branches and isinstance(data, dict | list | str):
        objects = [b for b in branches if _types(_resolve(b, root)) & {"object", "array"}]
        if len(objects) == 1:
            return _normalize(data, objects[0], root)
    return data


def _allows_null(node: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    node = _resolve(node, root)
    if "null" in _types(node):
        return True
    return any(_allows_null(b, root) for b in node.get("anyOf", ()) or node.get("oneOf", ()))


# --------------------------------------------------------------------------- dialects


def _plain(schema: dict[str, Any], name: str) -> DialectSchema:
    return DialectSchema(schema, strict=False)


class _NotStrict(Exception):
    pass


def _openai_strict(schema: dict[str, Any], name: str) -> DialectSchema:
    """OpenAI structured-outputs strict rules (platform.openai.com/docs/guides/
    structured-outputs#supported-schemas)."""
    try:
        out = _strictify(copy.deepcopy(schema))
    except _NotStrict:
        return DialectSchema(schema, strict=False)
    return DialectSchema(out, strict=True)


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(n) for n in node]
    if not isinstance(node, dict):
        return node
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    node.pop("discriminator", None)
    if "allOf" in node and len(node["allOf"]) == 1:
        only = node.pop("allOf")[0]
        node = {**only, **node}
    if "$ref" in node:
        return {"$ref": node["$ref"]} | (
            {"description": node["description"]} if "description" in node else {}
        )
    if node.get("format") not in _STRICT_FORMATS:
        node.pop("format", None)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _STRICT_KEYWORDS:
            continue
        if key == "properties" or key == "$defs":
            out[key] = {k: _strictify(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _strictify(value)
        else:
            out[key] = value
    if "object" in _types(out) or "properties" in out:
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
    if "null" in _types(node):
        return node
    if "anyOf" in node:
        if not any(_types(b) == {"null"} for b in node["anyOf"]):
            node = {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
        return node
    if isinstance(node.get("type"), str) and "$ref" not in node and "enum" not in node:
        return {**node, "type": [node["type"], "null"]}
    desc = {"description": node["description"]} if "description" in node else {}
    inner = {k: v for k, v in node.items() if k != "description"}
    return {"anyOf": [inner, {"type": "null"}], **desc}


def _gemini(schema: dict[str, Any], name: str) -> DialectSchema:
    """Gemini ``responseSchema``/function ``parameters`` subset (ai.google.dev/
    gemini-api/docs/structured-output): no ``$ref``/``$defs``, no
    ``additionalProperties``, string-only enums, ``nullable`` instead of null
    unions."""
    defs = schema.get("$defs", {})
    return DialectSchema(_geminify(schema, defs, (), ""), strict=False)


def _geminify(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...], path: str) -> Any:
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"].split("/")[-1]
        if ref in stack:
            raise SchemaError(
                path or ref,
                f"recursive $ref to {ref!r} is unsupported for Gemini function declarations "
                "and response schemas; use a non-recursive type",
            )
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
    out: dict[str, Any] = {}
    anyof = node.get("anyOf")
    if isinstance(anyof, list):
        non_null = [b for b in anyof if _types(b) != {"null"}]
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


LOCAL_MAX_STRING = 200
LOCAL_MAX_ITEMS = 12


def _local(schema: dict[str, Any], name: str) -> DialectSchema:
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
    types = _types(node)
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
        SchemaError: the dialect cannot express it (true recursion for Gemini).
    """
    return _TRANSFORMS[dialect](dict(schema), "schema")


_TRANSFORMS = {
    "plain": _plain,
    "openai_strict": _openai_strict,
    "gemini": _gemini,
    "local": _local,
}
