"""A word that says "no value" written for a field that takes none
(``absent_word``): ``""``, ``"null"``, ``"None"``, ``"N/A"`` for an
``int | None``, a ``date | None`` or a ``bool | None``.

Scalars only: a blank for a list or an object (``"tags": ""``) is left to
the rules for those (``decoding``), which ask the model again.

Models write the absence of a value as text: an empty string (the usual
answer where a schema dialect made every field required), the JSON or
Python word for it, or "N/A". Where the field's schema takes no such string
(a number, a boolean, an enum without that member, a string of a format
such as ``date`` or ``email``, or with a ``minLength`` above it) the word has
one reading only: no value. ``agentflow.output.decoding`` then reads it as
``null`` where the field allows it, or leaves an optional field out so its
default applies; a required field that takes no ``null`` keeps the word, for
validation to report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.output.dialects import resolve_ref, schema_types

__all__ = ["absent_word"]

_WORDS = frozenset({"", "null", "none", "nil", "undefined", "n/a"})
"""The words (after stripping, case-folded) a model writes for "no value"."""

_FORMATS = frozenset({"date", "date-time", "time", "duration", "uuid", "email",
                      "uri", "ipv4", "ipv6"})
"""String formats no such word can be (``binary``, ``password``: any text)."""


def absent_word(data: Any, node: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    """Whether ``data`` is a "no value" word (``_WORDS``) that ``node`` (a
    plain JSON Schema; ``root`` holds its ``$defs``) cannot take as a string."""
    return (isinstance(data, str) and data.strip().casefold() in _WORDS
            and not _takes(data, node, root, 0))


def _takes(word: str, node: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> bool:
    """Whether ``node`` may take ``word`` as it is (unsure: yes)."""
    node = resolve_ref(node, root)
    if depth > 16:
        return True
    members = node.get("enum") if isinstance(node.get("enum"), list) else (
        [node["const"]] if "const" in node else None)
    if members is not None:
        folded = word.strip().casefold()
        return any(isinstance(m, str) and m.strip().casefold() == folded for m in members)
    branches = [b for key in ("anyOf", "oneOf", "allOf") for b in node.get(key) or ()
                if isinstance(b, Mapping)]
    types = schema_types(node)
    if branches:
        parts = [_takes(word, b, root, depth + 1) for b in branches]
        if "allOf" in node and not node.get("anyOf") and not node.get("oneOf"):
            return all(parts) and (not types or "string" in types)
        return any(parts)
    if not types or types & {"array", "object"}:
        return True  # any value; a container's blank is left to its own rules
    if "string" not in types:
        return False
    min_length = node.get("minLength")
    if isinstance(min_length, int) and min_length > len(word):
        return False
    return node.get("format") not in _FORMATS
