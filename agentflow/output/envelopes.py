"""What a model wraps around the value it means: a container encoded as a
string (``decode_container``), a tool-call envelope or a wrapper key
(``unwrapped`` reads the object inside; ``agentflow.output.decoding`` and
``agentflow.output.schema`` try it when the object as written does not
validate)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.output._wrapper_key import schema_echo
from agentflow.output.dialects import resolve_ref, schema_types
from agentflow.output.literals import decode_value

__all__ = ["MAX_DEPTH", "MISSING", "decode_container", "unwrapped"]

MAX_DEPTH = 3
"""How many times a value may be encoded as a string inside a string."""

MISSING: Any = object()
"""``decode_container``'s answer for a string that holds no array or object."""

_ENVELOPE_KEYS = ("arguments", "parameters")


def unwrapped(data: Any, schema: Mapping[str, Any]) -> Any:
    """The arguments inside a tool-call envelope a model repeated inside its
    arguments: ``{"name": "f", "arguments": {...}}`` (Qwen through Ollama,
    ollama/ollama#11805), ``{"name": "f", "parameters": {...}}`` (Llama 3.x), or
    a lone ``{"arguments": {...}}`` (DeepSeek DSML through vLLM,
    vllm-project/vllm#40959). Only when the schema declares no such key, the
    inner object uses only declared properties and, if the schema declares
    ``name`` itself, holds every required one; else ``data`` as it is.

    Also the whole object under one undeclared key (``{"Contact": {...}}``:
    the type's or the tool's name, ``properties`` echoed from the schema,
    ``input``/``output``/``data``, ``_``: pydantic/pydantic-ai#81,
    anthropics/claude-agent-sdk-python#502) when the schema requires something (so the
    wrapper could never validate) and the inner object holds every required
    property and nothing undeclared, unless it is the schema's own properties
    written back (``_wrapper_key.schema_echo``); and the object given as a
    list of one.
    A bare array for an object whose one array property is all it requires
    (``[{...}, {...}]`` for ``Scores(items: list[Score])``: the list
    written without its wrapper, guardrails-ai/guardrails#594) is that
    property (``_array_field``).

    ``data`` itself (the same object) when there is nothing to unwrap: a
    caller may test ``unwrapped(data, schema) is data``."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return data
    required = schema.get("required") or ()
    if (isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict)
            and not set(data[0]) - set(props) and all(r in data[0] for r in required)):
        return data[0]  # the one object, given as a list of one
    if isinstance(data, list):
        field = _array_field(props, required, schema)
        return data if field is None else {field: data}
    if not isinstance(data, dict) or not 1 <= len(data) <= 2:
        return data
    if len(data) == 1 and required:
        [(key, inner)] = data.items()
        if key not in props:  # {"Contact": {...}}, {"properties": {...}}, {"input": {...}}
            if isinstance(inner, str):
                decoded = decode_container(inner)
                inner = decoded if decoded is not MISSING else inner
            if (isinstance(inner, dict) and not set(inner) - set(props)
                    and all(r in inner for r in required) and not schema_echo(inner, props)):
                return inner
    for key in _ENVELOPE_KEYS:
        if key not in data or key in props or set(data) - {key, "name"}:
            continue
        inner = data[key]
        if isinstance(inner, str):
            decoded = decode_container(inner)
            inner = decoded if decoded is not MISSING else inner
        if not isinstance(inner, dict) or set(inner) - set(props):
            return data
        if "name" in data and "name" in props and any(r not in inner for r in required):
            return data
        return inner
    return data


def _array_field(props: Mapping[str, Any], required: Any,
                 root: Mapping[str, Any]) -> str | None:
    """The property a bare JSON array given for the object stands for: its
    only array property, when no other property is required; else ``None``."""
    arrays = [key for key, node in props.items() if isinstance(node, Mapping)
              and "array" in schema_types(resolve_ref(node, root))]
    if len(arrays) != 1 or set(required) - {arrays[0]}:
        return None
    return arrays[0]


def decode_container(data: str) -> Any:
    """A string holding an array/object (JSON or Python literal), decoded up to
    ``MAX_DEPTH`` times, or ``MISSING``."""
    text = data
    for _ in range(MAX_DEPTH):
        stripped = text.strip()
        if stripped[:1] not in ("[", "{", "(", '"', "'"):
            return MISSING
        try:
            value = decode_value(stripped)
        except ValueError:
            return MISSING
        if isinstance(value, dict | list):
            return value
        if not isinstance(value, str):
            return MISSING
        text = value
    return MISSING
