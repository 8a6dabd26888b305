"""An output type made from a JSON Schema document, used as given.

    Ticket = json_schema_output(orjson.loads(Path("ticket.schema.json").read_bytes()))
    reply = await agent.call(text, Ticket)
    reply.output.model_dump()      # the validated object, as the schema describes it

The schema itself is what the vendor is sent (in its dialect, like any
output type's schema), so enums, nested ``items``, ``format`` and
constraints (``minimum``, ``pattern``, ``maxItems``...) reach the model; and
every output is validated with the ``jsonschema`` library against the
schema as given (formats checked where ``jsonschema`` knows them). An
invalid output is a validation error naming each failing field path
(``status``, ``lines[1]``), which the structured-output engine feeds back
to the model like any other.

Needs the ``jsonschema`` package (a core dependency).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from agentflow.errors import SchemaError

__all__ = ["JsonSchemaOutput", "json_schema_output"]

_NOT_SENT = ("$schema", "$id")
"""Keywords kept for validation but not sent (vendors refuse them in a tool or format)."""


class JsonSchemaOutput(BaseModel):
    """Base of the types ``json_schema_output`` makes: the fields are whatever
    the schema describes (kept as extra fields; ``model_dump()`` gives them)."""

    model_config = ConfigDict(extra="allow")


def field_path(path: Iterable[Any]) -> str:
    """A JSON path (``["lines", 1, "qty"]``) as a field path (``lines[1].qty``)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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
    if given.get("type") != "object":
        raise SchemaError("", "the JSON Schema must describe an object (\"type\": \"object\") "
                              "at its root")
    validator = cls(given, format_checker=cls.FORMAT_CHECKER)
    sent = {k: v for k, v in given.items() if k not in _NOT_SENT}

    def check(data: Any) -> Any:
        errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.path])
        if errors:
            raise ValueError("; ".join(
                f"{field_path(e.absolute_path) or '(root)'}: {e.message}" for e in errors[:20]))
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
    return model
