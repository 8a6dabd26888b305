"""A grounded reply's token budget follows its source.

A model whose grammar holds grounded strings to the source (profile
``substring_grammar``: the embedded llama.cpp model) copies its values out of
the document; a list of grounded strings (the items of a bulleted list, the
lines of a section) may copy most of it. A fixed reply cap (the embedded
model's 1024 tokens) then cuts a long document's list short, and the call
fails with ``OutputTruncatedError`` although the reading was right. So when
the request sets no ``max_tokens`` and its schema has such a list, the reply
may take as many tokens as copying the whole source once needs, plus the
JSON around the values (``reply_tokens``), never fewer than the model's
default cap and never more than the context window leaves after the prompt
(``reply_budget``).

Pure functions of the schema and the token counts; the structured-output
middleware counts the tokens (the model's own ``count_tokens`` when it has
one, else ``agentflow.usage.estimate_tokens``) and sets the request's
``max_tokens``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["COPY_FACTOR", "FIELD_TOKENS", "MARGIN_TOKENS", "copies_lists", "reply_budget",
           "reply_tokens"]

COPY_FACTOR = 1.25
"""Reply tokens per source token copied into a list: the value itself, plus
JSON's quotes, commas and escapes (a newline is two characters, ``\\n``)."""
FIELD_TOKENS = 48
"""Reply tokens per property of the schema besides the copied text (its key,
a short value or ``null``)."""
MARGIN_TOKENS = 64
"""Tokens left unused at the end of the context window (the chat template's
closing markers)."""

_GROUNDED = "x-grounded"


def _has_grounded(node: Any) -> bool:
    if isinstance(node, Mapping):
        return _GROUNDED in node or any(_has_grounded(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_grounded(v) for v in node)
    return False


def copies_lists(schema: Any) -> bool:
    """Whether ``schema`` (a JSON Schema, ``$defs`` included) has an array
    whose items hold grounded strings (``"x-grounded"`` anywhere in them, or
    a ``$ref`` into ``$defs`` that has one)."""
    defs = schema.get("$defs", {}) if isinstance(schema, Mapping) else {}

    def items_grounded(items: Any) -> bool:
        if _has_grounded(items):
            return True
        ref = items.get("$ref") if isinstance(items, Mapping) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _has_grounded(defs.get(ref.rsplit("/", 1)[-1]))
        return False

    def walk(node: Any) -> bool:
        if isinstance(node, Mapping):
            if "items" in node and items_grounded(node["items"]):
                return True
            return any(walk(v) for v in node.values())
        if isinstance(node, list):
            return any(walk(v) for v in node)
        return False

    return walk(schema)


def _properties(schema: Any) -> int:
    """Properties of every object of ``schema`` (``$defs`` included)."""
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        own = len(props) if isinstance(props, Mapping) else 0
        return own + sum(_properties(v) for v in schema.values())
    if isinstance(schema, list):
        return sum(_properties(v) for v in schema)
    return 0


def reply_tokens(schema: Any, source_tokens: int) -> int | None:
    """Reply tokens a grounded output of ``schema`` may need to copy from a
    source of ``source_tokens`` tokens: ``COPY_FACTOR`` times the source plus
    ``FIELD_TOKENS`` per property plus ``MARGIN_TOKENS``; ``None`` when the
    schema has no list of grounded strings (its values are bounded by the
    schema, not by the source: the model's default cap stands)."""
    if not copies_lists(schema):
        return None
    return (math.ceil(source_tokens * COPY_FACTOR) + FIELD_TOKENS * max(1, _properties(schema))
            + MARGIN_TOKENS)


def reply_budget(schema: Any, source_tokens: int, prompt_tokens: int, *,
                 default: int | None, window: int | None) -> int | None:
    """The ``max_tokens`` of a grounded request, or ``None`` to leave the
    model's default.

    Args:
        schema: the response format's JSON Schema (grounded nodes marked).
        source_tokens: tokens of the source the values are copied from.
        prompt_tokens: tokens of the whole prompt (the source included).
        default: the model's default reply cap (its profile's
            ``max_output_tokens``), or ``None`` when unknown.
        window: the context window per request (tokens), or ``None``.

    Returns:
        ``reply_tokens`` when it exceeds ``default``, capped at what the
        window leaves after the prompt (never below ``default``); else
        ``None``.
    """
    need = reply_tokens(schema, source_tokens)
    floor = default or 0
    if need is None or need <= floor:
        return None
    if window is not None:
        need = min(need, window - prompt_tokens - MARGIN_TOKENS)
    return need if need > floor else None
