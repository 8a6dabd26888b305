"""Output types -> JSON Schema, per vendor dialect, and back.

``OutputSpec.of(T)`` describes an output type once (cached per type, for
the ``SPEC_CACHE_SIZE`` most recently used types: a bounded cache, so fresh
types made per request, e.g. by ``create_model``, are not kept alive): a
pydantic model, dataclass or TypedDict is an object schema as it is; any
other type (``list[Model]``, a ``Literal``, an enum, a scalar, a union, a
``dict``, or a ``RootModel`` of one of these) is wrapped in an object under
one field, ``result``, for the tool and native paths, and unwrapped on return.

``spec.schema_for(dialect)`` gives the schema in a vendor's dialect (cached;
the dialects live in ``agentflow.output.dialects``).

``spec.validate(data)`` validates against the user's original type, after a
schema-aware normalisation (``agentflow.output.decoding.normalize``) that
undoes what the dialects changed (``null`` for a defaulted field -> the
default; ``"2"`` for an integer enum -> ``2``) and decodes a JSON or
Python-literal string where an array/object was expected.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model
from pydantic_core import PydanticCustomError

from agentflow._nesting import nesting_depth
from agentflow.errors import SchemaError
from agentflow.grounding.after_keys import after_by_key
from agentflow.model import ResponseFormat, SchemaDialect, ToolSpec
from agentflow.output._type_forms import (
    is_object_type,
    is_type_form,
    not_a_model,
    not_a_type,
    type_name,
)
from agentflow.output._wrapper_key import result_under_other_key, schema_echo
from agentflow.output.decoding import normalize
from agentflow.output.dialects import DialectSchema, transform_schema
from agentflow.output.envelopes import unwrapped
from agentflow.output.field_types import unrepresentable_field
from agentflow.output.json_kinds import check_kinds, kind_errors, strict_gap
from agentflow.output.json_kinds_types import converts_keys
from agentflow.output.json_schema import sent_schema
from agentflow.output.schema_generator import OutputSchemaGenerator
from agentflow.output.token_confidence import key_sizes

__all__ = ["MAX_OUTPUT_DEPTH", "OutputSpec"]

WRAP_FIELD = "result"

SPEC_CACHE_SIZE = 256
"""Output types whose ``OutputSpec`` stays cached (least recently used evicted)."""

_NO_PROPERTIES: Mapping[str, Any] = {}
MAX_OUTPUT_DEPTH = 200
"""Deepest nesting of objects and lists an output may have (the output object
is depth 1). Validation reads any depth JSON parsers read (1,024), but pydantic
writes an output only to 254 levels and orjson to 255: a deeper valid output
failed after it was accepted (the call's reply, a web event, a record) with an
untyped serialization error. Deeper is a validation error the model reads."""
_TOO_DEEP = ("the output nests objects or lists more than {limit} levels deep; no JSON "
             "writer downstream takes that: give a flatter value")
_EMPTY_OUTPUT = "the output is empty: give its fields ({fields}), even those with defaults"
_ECHOED = ("the output is the schema's own properties ({keys}) written back, not values "
           "for them: give each field's value")
_UNKNOWN_KEYS = ("the output sets none of its fields ({fields}): its keys ({keys}) are not "
                 "fields of it")


def _nothing_set(value: Any) -> bool:
    """Whether a validated object holds nothing its input set: a model with no
    field set (nor extra), or an empty dict (a TypedDict)."""
    if isinstance(value, BaseModel):
        return not value.model_fields_set and not value.model_extra
    return isinstance(value, dict) and not value


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
    _formats: dict[str, ResponseFormat] = field(default_factory=dict, repr=False)
    _tools: dict[tuple[str, str, str], ToolSpec] = field(default_factory=dict, repr=False)

    @staticmethod
    def of(output_type: Any) -> OutputSpec:
        """The spec of ``output_type`` (cached per type, bounded: ``SPEC_CACHE_SIZE``).

        Raises:
            SchemaError: ``output_type`` is a value, not a type (an instance of a
                model, a dict, a string, a function), pydantic's ``BaseModel`` or
                ``RootModel`` itself (``not_a_model``), or pydantic cannot build a
                JSON Schema for the type.
        """
        if not isinstance(output_type, type) and not is_type_form(output_type):
            raise SchemaError("", not_a_type(output_type))
        bare = not_a_model(output_type)
        if bare is not None:
            raise SchemaError(type_name(output_type), bare)
        return OutputSpec._of(output_type)

    @staticmethod
    @functools.lru_cache(maxsize=SPEC_CACHE_SIZE)
    def _of(output_type: Any) -> OutputSpec:
        from agentflow.tools import sanitize_tool_name

        wrapped = not is_object_type(output_type)
        target: Any = output_type
        try:
            if wrapped:
                target = create_model("Output", **{WRAP_FIELD: (output_type, ...)})  # type: ignore[call-overload]
            adapter: TypeAdapter[Any] = TypeAdapter(target)
            given = sent_schema(output_type)
            plain = given or adapter.json_schema(schema_generator=OutputSchemaGenerator)
            if not given:
                after_by_key(plain, target)  # Grounded(after=...) names aliased fields' keys
        except Exception as exc:  # pydantic's PydanticSchemaGenerationError, TypeError...
            bad = None
            with contextlib.suppress(Exception):  # name the field at fault, when one is
                bad = unrepresentable_field(TypeAdapter(target).core_schema)
            if bad is not None:
                raise SchemaError(type_name(output_type), f"field {bad[0]!r} {bad[1]}"
                                  ) from exc
            raise SchemaError(
                type_name(output_type), f"cannot build a JSON Schema: {exc}"
            ) from exc
        _strip_titles(plain)
        plain = _inline_root(plain)
        doc = getattr(output_type, "__doc__", None) if not wrapped else None
        if doc and isinstance(output_type, type) and doc == BaseModel.__doc__:
            doc = None
        return OutputSpec(
            output_type=output_type,
            wrapped=wrapped,
            name=sanitize_tool_name(type_name(output_type))[:64],
            description=doc.strip() if doc else None,
            _adapter=adapter,
            _plain=plain,
        )

    @property
    def annotated_schema(self) -> Mapping[str, Any]:
        """The JSON Schema with agentflow's own keywords (``x-grounded``...: the
        fields' ``Grounded()`` / ``Derived()`` markers), which every dialect but
        ``local`` drops (titles dropped; read-only)."""
        return self._plain

    @functools.cached_property
    def key_sizes(self) -> Mapping[str, int]:
        """The schema's top-level field names, each with the length of its JSON
        text (``token_confidence.key_sizes``; ``{}`` for a dict output, whose
        keys come from documents and are not kept)."""
        properties = self._plain.get("properties")
        return key_sizes(properties if isinstance(properties, Mapping) else ())

    @property
    def plain_schema(self) -> Mapping[str, Any]:
        """The plain JSON Schema (titles dropped)."""
        return self.schema_for("plain").schema

    def schema_for(self, dialect: SchemaDialect) -> DialectSchema:
        """The schema in ``dialect`` (cached).

        Raises:
            SchemaError: the dialect cannot express the type (names the field).
        """
        cached = self._cache.get(dialect)
        if cached is None:
            cached = self._cache[dialect] = transform_schema(self._plain, dialect)
        return cached

    def response_format(self, dialect: SchemaDialect) -> ResponseFormat:
        """The ``json_schema`` response format asking for this type in
        ``dialect`` (cached: the same object for every call, so requests
        built from it can be cached too).

        Raises:
            SchemaError: as ``schema_for``.
        """
        cached = self._formats.get(dialect)
        if cached is None:
            schema = self.schema_for(dialect)
            cached = self._formats[dialect] = ResponseFormat(
                "json_schema", schema.schema, self.name, schema.strict, self.description)
        return cached

    def tool_spec(self, name: str, dialect: SchemaDialect, lead: str) -> ToolSpec:
        """A tool ``name`` whose arguments are this type in ``dialect``; its
        description is ``lead``, then ``The answer is: <the type's docstring>``
        when the type has one. Cached per (name, dialect, lead): the same object
        for every call, like ``response_format``.

        Raises:
            SchemaError: as ``schema_for``.
        """
        key = (name, dialect, lead)
        cached = self._tools.get(key)
        if cached is None:
            schema = self.schema_for(dialect)
            description = f"{lead} The answer is: {self.description}" if self.description \
                else lead
            cached = self._tools[key] = ToolSpec(name, description, schema.schema, schema.strict)
        return cached

    def validate_object(self, data: Mapping[str, Any]) -> Any:
        """Validate a decoded JSON object (a tool call's arguments) as the
        user's type: as ``validate(data, text)`` with ``text`` the object's
        standard JSON text (``orjson``), so arguments that already have the
        schema's exact types are validated strictly in one pass, with no
        normalising walk; the rest take ``validate``'s tolerant path.

        The strict pass is used only when the text reads back as ``data``
        (no NaN/Infinity turned into ``null``, no tuple into a list, no
        non-string key): what it accepts is what the tolerant path would
        read the same way.

        Raises:
            pydantic.ValidationError: as ``validate``.
        """
        try:
            text = orjson.dumps(data)
        except orjson.JSONEncodeError:  # a value JSON has no form for: the tolerant path
            return self.validate(data)
        return self.validate(data, text if orjson.loads(text) == data else None)

    def validate(self, data: Any, text: str | bytes | None = None) -> Any:
        """Validate decoded JSON as the user's type (lax mode, JSON kinds
        kept), unwrapping.

        Lax mode keeps the coercions that read a value as written: a quoted
        number (``"42"`` for an integer), ``42.0`` for an integer, a string
        spelling a boolean (``"true"``). It refuses the ones that cross JSON
        kinds (``agentflow.output.json_kinds``): a boolean is never a number
        (``{"age": true}`` is not ``age=1``), a number never a boolean, a
        date or a duration, and (pydantic's own rule) a fraction never an integer.

        An empty object (or ``null``) is never a valid output, even when every
        field has a default; nor is an object that sets none of the type's
        fields (all its keys unknown to the type: a misspelt or wrapped answer).
        ``text``: the standard JSON text ``data`` was decoded from; when
        given, it is first validated as is in strict mode (JSON that already
        has the schema's exact types needs no normalisation, and strict
        validation accepts only what the lax path would read the same way);
        anything strict refuses takes the full path.

        Raises:
            pydantic.ValidationError: listing each failing field; an output
                nested deeper than ``MAX_OUTPUT_DEPTH`` (``too_deep``).
        """
        if isinstance(data, dict | list) and nesting_depth(data, MAX_OUTPUT_DEPTH) > (
                MAX_OUTPUT_DEPTH):  # (the input is left out: its repr alone would recurse)
            raise ValidationError.from_exception_data("output", [{
                "type": PydanticCustomError("too_deep", _TOO_DEEP, {"limit": MAX_OUTPUT_DEPTH}),
                "loc": (), "input": None}])
        props = self._plain.get("properties") or _NO_PROPERTIES
        if self.wrapped and unwrapped(data, self._plain) is data:
            renamed = result_under_other_key(data, self._plain, WRAP_FIELD)
            data, text = renamed, (text if renamed is data else None)
        empty = data in (None, {}) and bool(props)
        # keys that are all declared properties: no envelope to unwrap, and a
        # value validated from them has set a field (no nothing-set test needed)
        declared = isinstance(data, dict) and bool(data) and data.keys() <= props.keys()
        if declared and schema_echo(data, props, exact=True):
            raise ValidationError.from_exception_data("output", [{  # {"spec": {"type": ...}}
                "type": PydanticCustomError("echoed_schema", _ECHOED, {"keys": ", ".join(data)}),
                "loc": (), "input": data}])
        if empty:
            data = {}  # report the missing fields, as for any other object
        elif text is not None and (declared or not isinstance(data, dict) or len(data) > 2
                                   or unwrapped(data, self._plain) is data):
            # an envelope ({"name": "generate_response", "arguments": {...}}: two
            # keys at most) may validate as is when the type has a ``name`` field
            # (extra keys are ignored): strict reads only what the lax path
            # reads the same way
            try:
                # the adapter's core validator, called as ``validate_json`` calls it
                exact = self._adapter.validator.validate_json(text, strict=True)
            except ValidationError:
                pass  # not exact: normalise, then validate lax (and report from there)
            else:
                if (self.wrapped or declared or not _nothing_set(exact)) \
                        and not (self._strict_gap and kind_errors(data, exact, self._type)):
                    return getattr(exact, WRAP_FIELD) if self.wrapped else exact
        data = normalize(data, self._plain)
        value = self._adapter.validate_python(data)
        check_kinds(self.name, data, value, self._type)  # lax, but a boolean is no number...
        if empty or (props and not self.wrapped and _nothing_set(value)):
            # valid only through defaults: an empty answer is no answer (C02), and
            # so is one whose every key the type ignored ({"lo": 3} for ``low``)
            fields = ", ".join(props or ())
            unknown = ", ".join(map(str, data)) if isinstance(data, dict) else ""
            error = (PydanticCustomError("empty_output", _UNKNOWN_KEYS,
                                         {"fields": fields, "keys": unknown}) if unknown
                     else PydanticCustomError("empty_output", _EMPTY_OUTPUT, {"fields": fields}))
            raise ValidationError.from_exception_data(
                "output", [{"type": error, "loc": (), "input": data if unknown else {}}]
            )
        return getattr(value, WRAP_FIELD) if self.wrapped else value

    @property
    def _type(self) -> Any:
        """The declared type of what the adapter validates, for the kind check
        (``None`` when ``wrapped``: the wrapper model's field declares it)."""
        return None if self.wrapped else self.output_type

    @functools.cached_property
    def _strict_gap(self) -> bool:
        """Whether strict JSON validation of this type may read a boolean as a
        number (``json_kinds.strict_gap``: a number ``Literal``/``Enum``), or two
        keys as one (a mapping whose keys it converts: ``converts_keys``)."""
        return strict_gap(self._plain) or converts_keys(self.output_type)

    def dump_json(self, value: Any) -> str:
        """``value`` as JSON text of the user's type (not wrapped)."""
        adapter = self._adapter if not self.wrapped else self._output_adapter()
        # the adapter's core serializer, called as ``TypeAdapter.dump_json`` calls it
        return adapter.serializer.to_json(value, by_alias=True).decode()

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


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A root that is only a ``$ref`` (pydantic's form for a recursive model)
    becomes the referenced object itself, ``$defs`` kept for the recursion:
    vendors want an object at the root."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    target = schema.get("$defs", {}).get(ref.split("/")[-1])
    if not isinstance(target, dict):
        return schema
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**target, **rest}


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
