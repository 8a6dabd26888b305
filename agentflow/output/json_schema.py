"""An output type made from a JSON Schema document, used as given.

    Ticket = json_schema_output(orjson.loads(Path("ticket.schema.json").read_bytes()))
    reply = await agent.call(text, Ticket)
    reply.output.model_dump()      # the validated object, as the schema describes it

The schema itself is what the vendor is sent (in its dialect, like any
output type's schema), so enums, nested ``items``, ``format`` and
constraints (``minimum``, ``pattern``, ``maxItems``...) reach the model; and
every output is validated with the ``jsonschema`` library against the
schema as given (formats checked where ``jsonschema`` knows them), after
the lax reading a pydantic model gets (``coerce_scalars``: ``"30"`` for an
integer is 30). An
invalid output is a validation error naming each failing field path
(``status``, ``lines[1]``), which the structured-output engine feeds back
to the model like any other.

Needs the ``jsonschema`` package (a core dependency).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, model_validator

from agentflow.errors import SchemaError
from agentflow.output._json_lax import coerce_scalars
from agentflow.output.schema_errors import describe_schema_errors, field_path

__all__ = [
    "SCHEMA_ATTRIBUTE",
    "JsonSchemaOutput",
    "coerce_scalars",
    "field_path",
    "json_schema_output",
    "sent_schema",
]

SCHEMA_ATTRIBUTE = "__agentflow_json_schema__"
"""Class attribute of a ``json_schema_output`` type holding the schema as given
(what grounding walks to find the free-text strings of its outputs)."""

_SENT_ATTRIBUTE = "__agentflow_sent_schema__"
"""Class attribute of a ``json_schema_output`` type holding the schema it sends."""

_NOT_SENT = ("$schema", "$id")
"""Keywords kept for validation but not sent (vendors refuse them in a tool or format)."""


class JsonSchemaOutput(BaseModel):
    """Base of the types ``json_schema_output`` makes: the fields are whatever
    the schema describes (kept as extra fields; ``model_dump()`` gives them)."""

    model_config = ConfigDict(extra="allow")


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each local ``$ref`` (``#/$defs/...``, ``#/definitions/...``)
    replaced by a copy of its target, and the definitions dropped: pydantic
    resolves a ``$ref`` against its own definitions, not the schema's, so a
    schema sent with them fails to build. A recursive ``$ref`` is kept as is
    (then ``SchemaError`` when the schema is built)."""
    def target(ref: str) -> Any:
        node: Any = schema
        for part in ref.removeprefix("#/").split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        return node

    kept: list[str] = []  # references left in place (recursive or unresolvable)

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(x, seen) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
            found = target(ref)
            if isinstance(found, dict):
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return walk({**found, **rest}, (*seen, ref))
        if isinstance(ref, str):
            kept.append(ref)
        return {k: walk(v, seen) for k, v in node.items()}

    if not any(k in schema for k in ("$defs", "definitions")):
        return schema
    inlined = walk({k: v for k, v in schema.items() if k not in ("$defs", "definitions")}, ())
    if kept:  # recursive: keep the definitions they point into
        inlined.update({k: schema[k] for k in ("$defs", "definitions") if k in schema})
    return dict(inlined)


def json_schema_output(schema: Mapping[str, Any], *, name: str | None = None) -> type[BaseModel]:
    """An output type for ``schema`` (a JSON Schema object, any draft ``jsonschema`` knows).

    Args:
        schema: must describe an object (``"type": "object"``); vendors take
            only objects as tool parameters or response formats.
        name: the type's name (default: the schema's ``title``, else ``"Output"``).

    Raises:
        SchemaError: the schema is not valid JSON Schema, or not an object schema.
    """
    from jsonschema import exceptions, validators

    if not isinstance(schema, Mapping):
        raise SchemaError("", f"a JSON Schema must be an object, got {type(schema).__name__}")
    given = copy.deepcopy(dict(schema))
    cls = validators.validator_for(given)
    try:
        cls.check_schema(given)
    except exceptions.SchemaError as exc:
        where = field_path(exc.absolute_path)
        raise SchemaError(where, f"not a valid JSON Schema: {exc.message}") from None
    if _root_target(given).get("type") != "object":
        raise SchemaError("", "the JSON Schema must describe an object (\"type\": \"object\") "
                              "at its root")
    validator = cls(given, format_checker=cls.FORMAT_CHECKER)
    sent = _local_refs(_inline_refs(_defs_form(
        {k: v for k, v in given.items() if k not in _NOT_SENT}, str(name or given.get("title")
                                                                   or "Output"))))

    def check(data: Any) -> Any:
        data = coerce_scalars(data, sent)
        if problems := describe_schema_errors(validator.iter_errors(data)):
            raise ValueError("; ".join(problems))
        return data

    def json_schema(cls_: type[BaseModel], core_schema: Any, handler: Any) -> dict[str, Any]:
        return copy.deepcopy(sent)

    title = name or given.get("title") or "Output"
    namespace: dict[str, Any] = {
        "__doc__": given.get("description"),
        "__module__": __name__,
        "_check": model_validator(mode="before")(staticmethod(check)),
        "__get_pydantic_json_schema__": classmethod(json_schema),
    }
    model: type[BaseModel] = type(str(title), (JsonSchemaOutput,), namespace)
    type.__setattr__(model, SCHEMA_ATTRIBUTE, copy.deepcopy(given))
    type.__setattr__(model, _SENT_ATTRIBUTE, sent)
    return model


def _root_target(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The root, or what a root ``$ref`` points at in ``$defs``/``definitions``
    (pydantic's ``model_json_schema()`` of a recursive model is
    ``{"$defs": {...}, "$ref": "#/$defs/Node"}``)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and "type" not in schema:
        for key in ("$defs", "definitions"):
            prefix = f"#/{key}/"
            target = (schema.get(key) or {}).get(ref.removeprefix(prefix)) if ref.startswith(
                prefix) else None
            if isinstance(target, Mapping):
                return target
    return schema


def sent_schema(output_type: Any) -> dict[str, Any] | None:
    """The schema a ``json_schema_output`` type sends (a copy; ``None`` for
    any other type). Read directly rather than through pydantic's schema
    generator, which cannot follow the references of a recursive schema."""
    sent = getattr(output_type, _SENT_ATTRIBUTE, None) if isinstance(output_type, type) else None
    return copy.deepcopy(sent) if isinstance(sent, dict) else None


def _refs(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every ``$ref`` of ``node`` with the path of the node holding it."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield path, ref
        for key, value in node.items():
            yield from _refs(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _refs(value, (*path, i))


def _rewrite_refs(node: Any, change: Mapping[str, str]) -> Any:
    """``node`` with each ``$ref`` found in ``change`` replaced."""
    if isinstance(node, list):
        return [_rewrite_refs(x, change) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewrite_refs(v, change) for k, v in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref in change:
        out["$ref"] = change[ref]
    return out


def _pointer(ref: str) -> list[str] | None:
    """The reference tokens of a local ``$ref`` (``#/properties/a~1b`` ->
    ``["properties", "a/b"]``: the fragment percent-decoded, then RFC 6901's
    ``~1``/``~0`` unescaped); ``None`` for a reference that is not a local
    JSON pointer (another document, an ``$anchor``)."""
    if not ref.startswith("#/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in unquote(ref[2:]).split("/")]


def _resolve(schema: Any, tokens: list[str]) -> Any:
    """What ``tokens`` point at in ``schema`` (``None``: nothing)."""
    node = schema
    for token in tokens:
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _def_name(taken: Mapping[str, Any], wanted: str) -> str:
    """``wanted`` made a plain definition name (``[A-Za-z0-9_.-]``), not in ``taken``."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", wanted) or "def"
    while name in taken:
        name += "_"
    return name


def _defs_form(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` pointing at ``#/$defs/<name>``,
    the one form vendors, the dialects and the grammar follow: draft-7
    ``definitions`` renamed (their references too); a recursion into the root
    itself (``{"$ref": "#"}``: a tree node's ``children``) made a recursion
    into a definition: the root's body is copied to ``$defs[name]`` and
    every ``"#"`` points there, the root staying the object itself — the
    shape pydantic gives a recursive model; and any other JSON pointer
    (``#/properties/from``, ``#/properties/a/items``, escaped or
    percent-encoded tokens: what zod-to-json-schema and other generators
    write for a sub-schema used twice) has its target copied into ``$defs``
    under a plain name. References into other documents are left for
    ``_local_refs`` to refuse."""
    defs = dict(schema.get("$defs") or {})
    change: dict[str, str] = {}
    for key, body in (schema.get("definitions") or {}).items():
        target = key if key not in defs else f"{key}_{len(defs)}"
        defs[target] = body
        change[f"#/definitions/{key}"] = f"#/$defs/{target}"
    body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    if any(ref in ("#", "#/") for _, ref in _refs(body)) or any(
            ref in ("#", "#/") for _, ref in _refs(defs)):
        root = _def_name(defs, name or "Output")
        change["#"] = change["#/"] = f"#/$defs/{root}"
        defs[root] = body
    for _, ref in [*_refs(body), *_refs(defs)]:
        tokens = _pointer(ref)
        if ref in change or tokens is None or (
                ref == f"#/$defs/{tokens[-1]}" and len(tokens) == 2
                and re.fullmatch(r"[A-Za-z0-9_.-]+", tokens[1]) and tokens[1] in defs):
            continue
        found = _resolve(schema, tokens)
        if isinstance(found, dict):  # (else: points to nothing, _local_refs says so)
            target = _def_name(defs, tokens[-1])
            defs[target] = found
            change[ref] = f"#/$defs/{target}"
    if not change:
        return schema
    body = _rewrite_refs(body, change)
    return {**body, "$defs": _rewrite_refs(defs, change)}


def _local_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` if every ``$ref`` left in it points into ``$defs`` (what
    vendors and the grammar follow).

    Raises:
        SchemaError: a remote reference (``other.json#/...``), or a local
            one that is not a JSON pointer to a sub-schema (an ``$anchor``'s
            ``#name``, a pointer to nothing), naming the field that holds it
            and how to fix it.
    """
    defs = schema.get("$defs") or {}
    for path, ref in _refs(schema):
        key = ref.removeprefix("#/$defs/")
        if ref.startswith("#/$defs/") and "/" not in key and key in defs:
            continue
        where = field_path(p for p in path if p not in ("properties", "items", "$defs"))
        if not ref.startswith("#"):
            raise SchemaError(where, f"the $ref {ref!r} is not local: only references into "
                                     "the schema itself (#, #/$defs/...) can be sent; "
                                     "inline the referenced schema")
        raise SchemaError(where, f"the $ref {ref!r} points to no sub-schema: a local "
                                 "reference is followed as a JSON pointer (#, #/$defs/<name>, "
                                 "#/properties/...); an $anchor is not; point at the "
                                 "sub-schema itself")
    return schema
