"""The value of a wrapped output type written under another key than
``result`` (``result_under_other_key``), and the schema's own properties
written back under one key (``schema_echo``).

A type that is no object (``list[Contact]``, ``int``, an ``Enum``) travels
as ``{"result": <value>}`` (``agentflow.output.schema``). Models name that
one key after the content instead: ``{"contacts": [...]}``, ``{"items":
[...]}``, ``{"sentiment": "positive"}`` (the wrapper key around the output
that pydantic-ai and instructor users report). The object can be no value
of a type that takes no object, and its one value is the answer: it is read
as ``{"result": <value>}``, and validation judges the value. Not a string
for a type that takes any text (``str``): ``{"error": "..."}`` could be
the model's words about the answer, not the answer. A nested object
(``{"output": {...}}``) and an envelope the decoder already reads
(``{"arguments": {...}}``) are left to ``envelopes.unwrapped``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.output.dialects import resolve_ref, schema_types

__all__ = ["result_under_other_key", "schema_echo"]

_SCHEMA_WORDS = frozenset({
    "type", "title", "description", "properties", "required", "items", "additionalProperties",
    "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "default", "format", "examples",
    "nullable", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
    "pattern", "propertyOrdering"})
"""JSON Schema's words: an object of these only is a schema node, written back."""
_NODE_WORDS = frozenset({"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"})


def schema_echo(inner: Mapping[str, Any], props: Mapping[str, Any], *,
                exact: bool = False) -> bool:
    """Whether ``inner`` (an object found under one key, ``{"properties":
    {...}}`` say) is the schema's own properties written back instead of
    values: every value is the schema's node for its key (titles and
    descriptions aside), or (unless ``exact``) an object of JSON Schema words
    naming a type. Such an object is no answer even where every field takes
    an object (``spec: dict`` would be ``{"type": "object", ...}``):
    ``envelopes.unwrapped`` leaves it, and validation asks the model again."""
    if not inner:
        return False
    for key, value in inner.items():  # (a loop, not all() of a generator: the first value
        # that is no schema node, as a real answer's is, ends it with no generator made)
        if not (isinstance(value, Mapping) and value and (
                _bare(value) == _bare(props.get(key)) or (
                    not exact and set(value) <= _SCHEMA_WORDS and set(value) & _NODE_WORDS))):
            return False
    return True


def _bare(node: Any) -> Any:
    """``node`` without the words that only describe it (``title``, ``description``)."""
    if not isinstance(node, Mapping):
        return node
    return {k: v for k, v in node.items() if k not in ("title", "description")}


def result_under_other_key(data: Any, schema: Mapping[str, Any], field: str) -> Any:
    """``{field: value}`` for ``data`` = ``{other: value}`` when ``schema`` (a
    wrapper's plain JSON Schema, its one property ``field``) takes no object
    under ``field`` and ``value`` is no object; else ``data`` itself."""
    if not isinstance(data, dict) or len(data) != 1 or field in data:
        return data
    [value] = data.values()
    node = (schema.get("properties") or {}).get(field)
    if isinstance(value, dict) or not isinstance(node, Mapping) \
            or _takes(node, schema, "object", 0) \
            or (isinstance(value, str) and _takes(node, schema, "string", 0)):
        return data
    return {field: value}


def _takes(node: Mapping[str, Any], root: Mapping[str, Any], kind: str, depth: int) -> bool:
    """Whether ``node`` may take any JSON value of ``kind`` (``"object"``, or
    ``"string"``: any text, not only an enum's; unsure: yes)."""
    node = resolve_ref(node, root)
    branches = [b for key in ("anyOf", "oneOf") for b in node.get(key) or ()
                if isinstance(b, Mapping)]
    if branches and depth < 16:
        return any(_takes(b, root, kind, depth + 1) for b in branches)
    if "enum" in node or "const" in node:
        return False
    types = schema_types(node)
    return not types or kind in types
