"""Free text -> structured data, tolerantly. One function used everywhere free
text must become data (prompt strategy, native replies, a prose final turn).

``parse_output(text, spec)`` tries, in order, until a value validates:

1. the text with ``<think>…</think>`` removed, as JSON;
2. the body of a fence enclosing the whole text (backticks inside string
   values stay), then each balanced ``{…}`` / ``[…]`` span (string-aware);
3. the body of each fenced block (```` ```json ````, ```` ```JSON ````, bare
   ```` ``` ````, ``~~~``) and the spans inside it;
4. only when none of those is valid JSON as written: each repaired by
   ``json_repair`` (trailing commas, single quotes, unquoted keys, Python
   literals; never ``eval``). A candidate whose brackets or strings are not
   closed (cut off) is never repaired: completing it would invent data.

It returns the first value that validates as the spec, or raises the most
useful failure: ``OutputTruncatedError`` when the finish reason was
``length``, the first ``ValidationError`` seen, or ``NoJSONFound``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import json_repair
import orjson
from pydantic import ValidationError

from agentflow.messages import clean_data
from agentflow.output.schema import OutputSpec

__all__ = ["NoJSONFound", "json_candidates", "parse_output", "strip_thinking"]

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"(?:```|~~~)[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:\r?\n)?(?:```|~~~)",
                    re.DOTALL)
_MISSING = object()


class NoJSONFound(ValueError):
    """The text holds no JSON value at all."""


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>…</think>`` sections (an unclosed one runs to the end)."""
    return _THINK.sub("", text).strip() if "<think" in text.lower() else text.strip()


def _scan(text: str, start: int) -> tuple[int, bool]:
    """From the bracket at ``start``: the index of its matching close bracket
    and ``True``, or the last index and ``False`` when it is never closed.
    String-aware for ``"`` and ``'`` strings (with escapes)."""
    depth, quote, esc = 0, "", False
    for j in range(start, len(text)):
        ch = text[j]
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return j, True
    return len(text) - 1, False


def _balanced_spans(text: str) -> Iterator[str]:
    """Each outermost ``{…}``/``[…]`` span, in order of appearance; an unclosed
    last span is yielded to the end of the text."""
    i = 0
    while i < len(text):
        start = min((p for p in (text.find("{", i), text.find("[", i)) if p >= 0), default=-1)
        if start < 0:
            return
        end, _ = _scan(text, start)
        yield text[start : end + 1]
        i = end + 1


def _enclosing_fence(text: str) -> str | None:
    """The body of one fence that encloses the whole text (backticks inside
    string values stay), or ``None``."""
    if not text.startswith(("```", "~~~")):
        return None
    marker = text[:3]
    end = text.rfind(marker)
    newline = text.find("\n")
    if end <= 3 or newline < 0 or newline > end:
        return None
    return text[newline + 1 : end].strip()


def json_candidates(text: str) -> Iterator[str]:
    """Candidate JSON texts in ``text``, most likely first (no duplicates)."""
    seen: set[str] = set()
    body = strip_thinking(text).lstrip("\ufeff")
    pool = [body]
    enclosed = _enclosing_fence(body)
    if enclosed is not None:
        pool.append(enclosed)
    pool.extend(_balanced_spans(enclosed if enclosed is not None else body))
    fenced = [m.group(2).strip() for m in _FENCE.finditer(body)]
    pool.extend(fenced)
    for chunk in fenced:
        pool.extend(_balanced_spans(chunk))
    for cand in pool:
        if cand and cand not in seen:
            seen.add(cand)
            yield cand


def _strict(candidate: str) -> Any:
    try:
        return orjson.loads(candidate)
    except orjson.JSONDecodeError:
        return _MISSING


def _closed(candidate: str) -> bool:
    """Whether the value ``candidate`` starts with is closed: repair may fix
    syntax, never complete a value that was cut off (that would invent a
    shorter list or string and call it the answer)."""
    return _scan(candidate, 0)[1]


def _repaired(candidate: str) -> Any:
    if candidate[:1] not in ("{", "[") or not _closed(candidate):
        return _MISSING
    try:
        value = json_repair.loads(candidate)
    except Exception:  # json_repair raises assorted errors on hopeless input
        return _MISSING
    return clean_data(value) if isinstance(value, dict | list) else _MISSING


def parse_output(text: str, spec: OutputSpec) -> Any:
    """The first JSON value in ``text`` that validates as ``spec``: every
    candidate is tried as exact JSON before any is repaired, so a repair never
    wins over JSON that was right as written.

    Raises:
        ValidationError: JSON was found but none of it validates (the first error).
        NoJSONFound: no JSON value in the text.
    """
    first_error: ValidationError | None = None
    candidates = list(json_candidates(text))
    for decode in (_strict, _repaired):
        for candidate in candidates:
            value = decode(candidate)
            if value is _MISSING:
                continue
            try:
                return spec.validate(value)
            except ValidationError as exc:
                first_error = first_error or exc
                if spec.wrapped and not (isinstance(value, dict) and "result" in value):
                    try:  # the model gave the bare value instead of {"result": ...}
                        return spec.validate({"result": value})
                    except ValidationError:
                        pass
    if first_error is not None:
        raise first_error
    raise NoJSONFound("no JSON value found in the reply text")
