"""The JSON Schema generator of output types (``OutputSpec``): pydantic's,
refusing a complex number (no JSON form), with the string branch of a
``Decimal`` marked (``DECIMAL_KEY``) so that the ``ground=`` default reads it
as a number, not as text to copy.

pydantic writes a ``Decimal`` (validation mode) as ``anyOf [number,
string]``: the string keeps every digit (a JSON number is read through a
float). Unmarked, that string branch looked like any free-text field, and
the embedded model's grammar offered the whole document for it.
"""

from __future__ import annotations

from typing import Any

from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from agentflow.grounding.marker import DECIMAL_KEY

__all__ = ["OutputSchemaGenerator"]


class OutputSchemaGenerator(GenerateJsonSchema):
    """pydantic's generator; a ``Decimal``'s string branch carries
    ``DECIMAL_KEY``: the constraints of its number branch (``minimum``,
    ``maximum``, their exclusive forms, ``multipleOf``; ``{}`` when none)."""

    def complex_schema(self, schema: core_schema.ComplexSchema) -> JsonSchemaValue:
        """Refused: JSON has no complex numbers (``agentflow.output.field_types``)."""
        raise PydanticInvalidForJsonSchema("a complex number has no JSON form")

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        out = super().decimal_schema(schema)
        branches: list[Any] = out.get("anyOf", [])
        number = next((b for b in branches if isinstance(b, dict)
                       and b.get("type") == "number"), None)
        for branch in branches:
            if number is not None and isinstance(branch, dict) and branch.get("type") == "string":
                branch[DECIMAL_KEY] = {k: v for k, v in number.items() if k != "type"}
        return out
