"""What a model reads when a value fails a JSON Schema (``jsonschema``): one
line per failing place, ``path: message``.

A value that fits no branch of an ``anyOf``/``oneOf`` (a union) is where
``jsonschema``'s own message says least ("... is not valid under any of the
given schemas"); its line names the branches and what failed in the closest
one, with the failing paths, so the model can fix the call rather than guess:

    filter: fits no branch of oneOf (Price | InStock); closest, Price: filter.max: 'cheap' is
    not of type 'number'

The closest branch, a small decision table over each branch's failures:

==========================================  =========  ====================
a failure in the branch                     weight     why
==========================================  =========  ====================
the value is not of the branch's ``type``   100        another kind of value
a ``const``/``enum`` one level down         50         a discriminator tag
                                                       names another branch
any other failure                           1          a field to fix
==========================================  =========  ====================

The branch of least weight is the closest, with all its failures; branches
that tie are each named with their heaviest failure (at most three), and a
value of none of the branches' types is named by its kind. A union inside
a branch is described the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema.exceptions import ValidationError

__all__ = ["describe_schema_errors", "field_path"]

_UNIONS = ("anyOf", "oneOf")
_MESSAGE_CHARS = 300
"""A ``jsonschema`` message echoes the value: cut there."""
_TIED_SHOWN = 3


def field_path(path: Iterable[Any]) -> str:
    """A JSON path (``["lines", 1, "qty"]``) as a field path (``lines[1].qty``)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_schema_errors(errors: Iterable[ValidationError], limit: int = 20) -> list[str]:
    """``path: message`` for each of the first ``limit`` errors (in path
    order), a union's as the module docstring says."""
    ordered = sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])
    return [_line(e) for e in ordered[:limit]]


def _line(error: ValidationError) -> str:
    return f"{_path(error)}: {_message(error)}"


def _path(error: ValidationError) -> str:
    return field_path(error.absolute_path) or "(root)"


def _message(error: ValidationError) -> str:
    if error.validator not in _UNIONS or not error.context:  # (oneOf: several fit)
        return error.message[:_MESSAGE_CHARS]
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    schemas = error.validator_value if isinstance(error.validator_value, list) else []
    labels = " | ".join(_label(s, i) for i, s in enumerate(schemas))
    ranked = sorted(branches.items(), key=lambda kv: (_weight(kv[1]), kv[0]))
    best = _weight(ranked[0][1])
    closest = [(i, errs) for i, errs in ranked if _weight(errs) == best]
    head = f"fits no branch of {error.validator} ({labels})"
    if len(closest) == 1:
        i, errs = closest[0]
        failures = "; ".join(_line(e) for e in _ordered(errs))
        return f"{head}; closest, {_label(_at(schemas, i), i)}: {failures}"
    if best >= 100 * len(closest[0][1]):  # of none of the branches' types
        return f"{head}: got {_kind(error.instance)}"
    shown = "; ".join(f"{_label(_at(schemas, i), i)}: {_line(_ordered(errs)[-1])}"
                      for i, errs in closest[:_TIED_SHOWN])
    return f"{head}: {shown}"


def _ordered(errors: list[ValidationError]) -> list[ValidationError]:
    """Lightest first; ties in path order (``[-1]``: what most sets the branch apart)."""
    return sorted(errors, key=lambda e: (_weight([e]), [str(p) for p in e.absolute_path]))


def _kind(value: Any) -> str:
    """A JSON value's kind, as a type error would name it."""
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
             (list, "an array"), (Mapping, "an object"), (type(None), "null"))
    return next((name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)


def _weight(errors: Iterable[ValidationError]) -> int:
    """How far a branch is from the value (the module docstring's table)."""
    total = 0
    for e in errors:
        if e.validator == "type" and not e.relative_path:
            total += 100
        elif e.validator in ("const", "enum") and len(e.relative_path) == 1:
            total += 50
        else:
            total += 1
    return total


def _at(schemas: list[Any], index: int) -> Any:
    return schemas[index] if index < len(schemas) else None


def _label(schema: Any, index: int) -> str:
    """A branch's name: its ``title``, the name its ``$ref`` points at, its
    ``type``, its ``const``; else its place (``#1``)."""
    if isinstance(schema, Mapping):
        if isinstance(schema.get("title"), str):
            return str(schema["title"])
        if isinstance(schema.get("$ref"), str):
            return str(schema["$ref"]).rsplit("/", 1)[-1]
        kind = schema.get("type")
        if isinstance(kind, str):
            return kind
        if isinstance(kind, list):
            return "/".join(map(str, kind))
        if "const" in schema:
            return repr(schema["const"])
    return f"#{index + 1}"
