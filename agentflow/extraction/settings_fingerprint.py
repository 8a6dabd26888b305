"""The fingerprint of what the schema module decides besides the schema's
shape (``agentflow.extraction.fingerprint``).

    settings_fingerprint(Invoice, module)
    # {"EXAMPLES": "9c1d02aa", "markers": "0d4e7a91", "prepare": "51be0f3e"}

A schema module may set ``EXAMPLES`` and ``prepare`` (what ``agentflow
extract`` reads from it besides the settings a flag can also give), and the
schema's fields may carry ``Grounded()`` / ``Derived()`` markers (JSON Schema
keywords the shape's fingerprint leaves out, as the vendors never see them).
Each changes the records a run writes, so each record carries, beside
``"schema"``, ``"settings"``: one 8-hex-digit digest per setting that is set,
with the run's own settings (``agentflow.extraction.run_settings``: the model,
and the values of ``INSTRUCTIONS``, ``PASSES``, ``MAX_CHARS`` and ``CHUNKING``
whether the module or a flag gave them). A rerun into the same output whose
settings differ from its records' is refused like a changed schema, the
message naming what changed (``agentflow.extraction.settings_changes``, which
also says how records written before agentflow kept settings compare).

Values are digested by content: examples as sorted JSON (a pydantic model as
its JSON dump), ``prepare`` by its source text (its name when the source
cannot be read), so re-importing the same module gives the same digests, and
editing a comment elsewhere in it changes nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import orjson
from pydantic import BaseModel

from agentflow.errors import SchemaError
from agentflow.output.schema import OutputSpec

__all__ = ["MODULE_SETTINGS", "run_fingerprint", "settings_fingerprint"]

MODULE_SETTINGS = ("EXAMPLES", "prepare")
"""The schema module's names digested here; ``INSTRUCTIONS``, ``PASSES``,
``MAX_CHARS`` and ``CHUNKING`` (which flags can give too) are recorded as the
run's values (``agentflow.extraction.run_settings``)."""

MARKERS = "markers"
"""The ``settings`` key of the fields' ``Grounded()`` / ``Derived()`` markers."""


def _plain_value(value: Any) -> Any:
    """``value`` as JSON data (for ``orjson``'s ``default``)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if callable(value):
        return getattr(value, "__qualname__", repr(value))
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    return repr(value)


def _digest(value: Any) -> str:
    if callable(value) and not isinstance(value, type):
        try:
            data = inspect.getsource(value).encode()
        except (OSError, TypeError):
            data = f"{getattr(value, '__module__', '')}.{_plain_value(value)}".encode()
    else:
        try:
            data = orjson.dumps(value, default=_plain_value,
                                option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS)
        except TypeError:
            data = repr(value).encode("utf-8", "backslashreplace")
    return hashlib.sha256(data).hexdigest()[:8]


def _marks(node: Any, path: str, found: list[tuple[str, str, Any]]) -> None:
    """Collect the agentflow keywords (``x-...``) of a JSON Schema with their paths."""
    if isinstance(node, dict):
        for key in sorted(node):
            value = node[key]
            if isinstance(key, str) and key.startswith("x-"):
                found.append((path, key, value))
            else:
                _marks(value, f"{path}/{key}", found)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _marks(item, f"{path}/{i}", found)


def settings_fingerprint(output: Any, module: ModuleType | None) -> dict[str, str]:
    """Setting name -> 8 hex digits, for each setting ``module`` sets of
    ``MODULE_SETTINGS`` and, under ``"markers"``, the output type's grounding
    markers when it has any; ``{}`` when there is none of them."""
    out: dict[str, str] = {}
    try:
        annotated = OutputSpec.of(output).annotated_schema
    except (SchemaError, TypeError):
        annotated = None
    found: list[tuple[str, str, Any]] = []
    _marks(annotated, "", found)
    if found:
        out[MARKERS] = _digest(found)
    for name in MODULE_SETTINGS:
        value = getattr(module, name, None) if module is not None else None
        if value is not None:
            out[name] = _digest(value)
    return out


def run_fingerprint(schema: str, settings: Mapping[str, str]) -> str:
    """16 hex digits naming a schema's fingerprint with its settings: the
    schema's own when there are none (what names ``--schema-changed new``'s file)."""
    if not settings:
        return schema
    data = orjson.dumps({"schema": schema, "settings": dict(settings)},
                        option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()[:16]
