"""Where a JSON text that was cut short stopped: the path of the value being
written (``items[3].name``), for the error of an output cut at the token limit.

    cut_path('{"name": "A", "attrs": {"k1": 1, "k2": ')   # "attrs.k2"
    cut_path('{"tags": ["a", "b", "c"')                   # "tags[2]"
    cut_path('{"name": "Ann"}')                           # None: nothing left open
"""

from __future__ import annotations

import json

from agentflow.output.schema import WRAP_FIELD

__all__ = ["cut_path", "string_end"]


def string_end(text: str, start: int) -> int:
    """Where the JSON string opened by the ``"`` at ``start`` of ``text`` is
    closed: the index of its closing quote (a ``\\`` escapes the character
    after it), or ``len(text)`` or more when it is never closed."""
    j, n = start + 1, len(text)
    while j < n and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j


def _key(raw: str) -> str:
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def cut_path(text: str) -> str | None:
    """The path (``a.b[2].c``) of the value open where ``text`` ends, from its
    first ``{`` or ``[``; ``None`` when no value is open there (the text is
    whole, or holds no JSON). Keys are written as they are; the wrapper key of
    a non-object output type is left out."""
    starts = [p for p in (text.find("{"), text.find("[")) if p >= 0]
    if not starts:
        return None
    # each open container: ["{", key or None, a key comes next] or ["[", index, False]
    stack: list[list[object]] = []
    i, n = min(starts), len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = string_end(text, i)
            if stack and stack[-1][0] == "{" and stack[-1][2]:
                stack[-1][1], stack[-1][2] = _key(text[i + 1:j]), False
            i = j + 1
            continue
        if c == "{":
            stack.append(["{", None, True])
        elif c == "[":
            stack.append(["[", 0, False])
        elif c in "}]":
            if stack:
                stack.pop()
            if not stack:
                return None  # a whole value: nothing was cut
        elif c == "," and stack:
            top = stack[-1]
            if top[0] == "{":
                top[2] = True
            else:
                top[1] = int(str(top[1])) + 1
        i += 1
    parts: list[str] = []
    for depth, (kind, at, _) in enumerate(stack):
        if kind == "{":
            if at is None:
                break
            if depth == 0 and at == WRAP_FIELD:
                continue
            parts.append(f".{at}" if parts else str(at))
        else:
            parts.append(f"[{at}]")
    return "".join(parts) or None
