"""The fingerprint of an output schema: which shape a record was extracted to.

    schema_fingerprint(Invoice)   # "3f9c0a1be27d4c55": 16 hex digits

Each record ``agentflow extract`` writes carries the fingerprint of its run's
schema (``"schema"``), so one output file holds one shape: a run whose schema
differs from the file's refuses (or writes a new file, ``--schema-changed
new``), and ``agentflow report`` refuses a file that mixes shapes. The
fingerprint is the SHA-256 of the JSON Schema sent to the model (keys sorted),
so a change to a field's name, type, description or constraints changes it;
renaming the Python class alone does not when the title is the same.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from agentflow.errors import SchemaError
from agentflow.output.schema import OutputSpec

__all__ = ["schema_fingerprint"]


def schema_fingerprint(output: Any) -> str:
    """16 hex digits naming ``output``'s JSON Schema (see the module docstring);
    an output type without a JSON Schema is named by its ``repr``."""
    try:
        schema: Any = OutputSpec.of(output).plain_schema
        data = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except (SchemaError, TypeError):
        data = repr(output).encode("utf-8", "backslashreplace")
    return hashlib.sha256(data).hexdigest()[:16]
