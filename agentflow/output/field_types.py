"""Which field of an output type has no JSON form, for the error that refuses it.

pydantic describes most Python types in JSON Schema, but not an arbitrary
class (``arbitrary_types_allowed``: validated by ``isinstance``), a callable,
or a complex number (pydantic would write one as a string such as ``"1+2j"``,
but JSON has no complex numbers: the output engine refuses one written as a
number in a reply, ``agentflow.output.literals``). ``OutputSpec`` refuses
such a type; ``unrepresentable_field`` names the field at fault, so the error
says ``field 'amount' (complex)`` rather than the name of a pydantic schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["UNREPRESENTABLE", "unrepresentable_field"]

UNREPRESENTABLE = {
    "complex": "a complex number has no JSON form (use two float fields, or a str)",
    "is-instance": "an arbitrary class has no JSON Schema (use a pydantic model, a "
                   "dataclass or a TypedDict)",
    "callable": "a callable has no JSON form",
}
"""pydantic core schema types without a JSON form -> why, in words."""


def _what(node: Mapping[str, Any]) -> str:
    kind = str(node.get("type"))
    cls = node.get("cls")
    label = f"class {getattr(cls, '__name__', cls)}" if kind == "is-instance" and cls else kind
    return f"({label}): {UNREPRESENTABLE[kind]}"


def unrepresentable_field(core_schema: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(path, why)`` (why: ``"(complex): ..."``) of the first field of a
    pydantic core schema whose type has no JSON form (``UNREPRESENTABLE``), or
    ``None``. Paths are dotted field names, ``[]`` for a list's items and ``{}``
    for a mapping's values."""
    refs: dict[str, Any] = {}
    seen: set[str] = set()

    def walk(node: Any, path: str) -> tuple[str, str] | None:
        if isinstance(node, list | tuple):
            for item in node:
                if (found := walk(item, path)) is not None:
                    return found
            return None
        if not isinstance(node, Mapping):
            return None
        kind = node.get("type")
        if kind in UNREPRESENTABLE:
            return path or "the output", _what(node)
        if kind == "definitions":
            for definition in node.get("definitions", ()):
                if isinstance(definition, Mapping) and "ref" in definition:
                    refs[str(definition["ref"])] = definition
        if kind == "definition-ref":
            ref = str(node.get("schema_ref"))
            if ref in seen or ref not in refs:
                return None
            seen.add(ref)
            return walk(refs[ref], path)
        if kind in ("model-fields", "typed-dict-fields") and isinstance(node.get("fields"),
                                                                        Mapping):
            for name, field in node["fields"].items():
                if (found := walk(field, f"{path}.{name}" if path else str(name))) is not None:
                    return found
            return None
        if kind == "dataclass-args":
            for field in node.get("fields", ()):
                name = field.get("name", "?") if isinstance(field, Mapping) else "?"
                if (found := walk(field, f"{path}.{name}" if path else str(name))) is not None:
                    return found
            return None
        for key, value in node.items():
            if key in ("metadata", "serialization", "cls", "ref", "config"):
                continue
            sub = path + ("[]" if key == "items_schema" else "{}" if key == "values_schema"
                          else "")
            if (found := walk(value, sub)) is not None:
                return found
        return None

    return walk(core_schema, "")
