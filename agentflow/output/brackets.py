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
``None`` when that is not the fault: closers are added only when ``add`` (the
reply ended normally: a reply cut at the token limit may have lost a digit of
its last number, never repaired) and only after a whole value (never inside a
string, after a ``:`` or ``,``, or a key without its value: the result must
decode); extra ones are dropped only when nothing but closers follows one
whole object.
"""

from __future__ import annotations

import json

__all__ = ["rebalanced", "trailing_closers"]

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


def _missing_closers(body: str) -> str | None:
    """The closers an unclosed object needs after its last whole value, or
    ``None`` (inside a string, a mismatched closer, or closed already)."""
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
    if in_string or not stack or last in (",", ":"):
        return None
    return "".join(reversed(stack))
