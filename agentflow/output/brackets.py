"""Closing brackets set right in a JSON object whose *text* lost or gained
some, for tool-call arguments of a reply that ended normally.

Two faults of servers and models, not of the values:

* **missing closers**: vLLM's Hermes tool parser, streaming, drops the final
  ``}`` of arguments that end in a number, boolean, ``null``, object or array
  (vllm-project/vllm#22885, #32152: ``{"id": 42`` with finish reason
  ``tool_calls``), so every retry fails the same way;
* **extra closers**: Qwen/QwQ models write one ``}`` too many after a whole
  object (``{"a": 1}}``), in a tool call or a Hermes ``<tool_call>`` block.

``rebalanced(text, add=...)`` gives the text with the closers set right, or
``None`` when that is not the fault: a closer is added only when ``add`` (the
reply ended normally: a reply cut at the token limit may have lost a digit of
its last number, never repaired), and only the object's own final ``}`` after
a whole value (never inside a string, after a ``:`` or ``,``, a key without
its value, or an empty ``{``). Text that needs more than that one brace
(``{"name": "Ana", "items": ["a", "b"``) was cut inside a value, whatever
the finish reason says (a router that rewrote ``length`` as ``tool_calls``):
closing it would invent a shorter list and call it the answer, so it is
never repaired and validation asks the model again. Extra closers are
dropped only when nothing but closers follows one whole object.
"""

from __future__ import annotations

import json

__all__ = ["cut_inside", "rebalanced", "trailing_closers"]

_CLOSERS = frozenset("}]")


def trailing_closers(rest: str) -> bool:
    """Whether ``rest`` (what follows a whole JSON value) is only stray
    closing brackets and whitespace, at least one bracket."""
    body = rest.strip()
    return bool(body) and all(ch in _CLOSERS or ch.isspace() for ch in body)


def rebalanced(text: str, *, add: bool) -> str | None:
    """``text`` (JSON object text that does not decode as it is) with its
    closing brackets set right (see the module docstring), or ``None``."""
    body = text.strip()
    if not body.startswith("{"):
        return None
    try:
        _, end = json.JSONDecoder(strict=False).raw_decode(body)
    except ValueError:
        end = 0
    if end:  # one whole object, then something
        return body[:end] if trailing_closers(body[end:]) else None
    if not add:
        return None
    missing = _missing_closers(body)
    return body + missing if missing else None


def cut_inside(text: str) -> bool:
    """Whether ``text`` is the start of a JSON object cut before it closed
    (inside a string, or with brackets left open), and not one that only
    lost its final ``}``: what a model must be told was cut off."""
    body = text.strip()
    if not body.startswith("{"):
        return False
    try:
        json.JSONDecoder(strict=False).raw_decode(body)
    except ValueError:
        return _missing_closers(body) is None and _open_brackets(body)
    return False


def _open_brackets(body: str) -> bool:
    """Whether ``body`` ends inside a string or with a bracket left open."""
    depth = 0
    in_string = escaped = False
    for ch in body:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in _CLOSERS:
            depth -= 1
    return in_string or depth > 0


def _missing_closers(body: str) -> str | None:
    """The one ``}`` an object that lost only its final brace needs after its
    last whole value, or ``None`` (inside a string, a mismatched closer,
    closed already, or cut inside a nested value: more than one closer)."""
    stack: list[str] = []
    in_string = escaped = False
    last = ""
    for ch in body:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string, last = False, '"'
            continue
        if ch == '"':
            in_string = True
        elif ch == "{" or ch == "[":
            stack.append("}" if ch == "{" else "]")
            last = ch
        elif ch in _CLOSERS:
            if not stack or stack.pop() != ch:
                return None
            last = ch
        elif not ch.isspace():
            last = ch
    if in_string or stack != ["}"] or last in (",", ":", "{"):
        return None
    return "}"
