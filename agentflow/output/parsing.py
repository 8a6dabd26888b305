"""Free text -> structured data, tolerantly. One function used everywhere free
text must become data (prompt strategy, native replies, a prose final turn,
output-tool arguments that are no JSON object).

``parse_output(text, spec)`` reads the text in this order:

1. reasoning is removed (``agentflow.output.thinking.strip_thinking``):
   ``<think>``, ``<thinking>``, ``<reasoning>`` and ``<reflection>`` blocks,
   any case, with attributes;
   text before an orphan closing tag (templates that open the block
   themselves); an unclosed opening tag drops the prose after it up to the
   first JSON value, which is kept. Drafts inside reasoning never count;
2. the candidates: the whole text, the body of a fence enclosing it (the
   text opens with the fence and ends with its closing marker; backticks
   inside string values stay), each balanced ``{…}``/``[…]`` span
   (string-aware), the body of each fenced block (```` ```json ````,
   ```` ```JSON ````, bare ```` ``` ````, ``~~~``) and the spans inside it.
   Text after a fenced block is read like any other;
3. each candidate is read as written: exact JSON, else a Python literal
   (``True``/``None``, single quotes; sets, bytes and complex numbers
   refused, never coerced). Only when no candidate read so fits the
   schema is each repaired by ``json_repair`` (trailing commas, unquoted
   keys...): repair is a fallback, never a rival to a value as written. A
   candidate whose brackets or strings are not closed (cut off) is never
   repaired: completing it would invent data.

**Exactly one answer.** Within the first tier that finds values fitting
the schema, they must all be the same value (a fence and the object inside
it, an answer repeated: one answer). Several *different* fitting values
(a draft and its correction, a quoted example and the answer, two
guesses) are a ``ValidationError`` of type ``AMBIGUOUS_OUTPUT``, so the
model is asked again for exactly one: which of them the model meant is
written in its prose, and the framework does not guess from prose (the
last value is not always the final one: a correction may be followed by
a restated example, and a trailing example by nothing). Values that do not
fit (an example of another shape, a cut-off draft) do not count.
Reasoning blocks never count (step 1).

When nothing validates and the output is a choice of strings (a
``Literal``/``Enum`` of strings), the reply as bare text is tried last
(``_bare_text``: a classifier answering ``positive`` or ``"positive".`` for
``Literal["positive", "negative"]``, with no JSON at all; only an exact member
validates, so prose never does). It raises the
most useful failure: the ambiguity, the ``ValidationError`` of the last
value, or ``NoJSONFound`` (naming a refused literal, if any).

One fitting value is taken even when prose around it says something else
("use the format {...}; I found nothing"): reading that needs the prose's
meaning. Grounding (``agentflow.grounding``) is what refuses a value that
is not in the document.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import json_repair
import orjson
from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from agentflow.messages import clean_data
from agentflow.output.decoding import RejectedLiteral, literal_value
from agentflow.output.dialects import resolve_ref
from agentflow.output.schema import WRAP_FIELD, OutputSpec
from agentflow.output.thinking import strip_thinking

__all__ = [
    "AMBIGUOUS_OUTPUT",
    "NoJSONFound",
    "RejectedLiteral",
    "closed_json",
    "json_candidates",
    "parse_output",
]

_FENCE = re.compile(r"(?:```|~~~)[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:\r?\n)?(?:```|~~~)",
                    re.DOTALL)
_MISSING = object()


class NoJSONFound(ValueError):
    """The text holds no JSON value at all."""


ScanState = tuple[int, str, bool]
"""Where a bracket scan stands between calls: nesting depth, the open quote
(``""`` outside strings), and whether the last character was an escape."""

_FRESH: ScanState = (0, "", False)


def scan_brackets(text: str, start: int, state: ScanState = _FRESH,
                  ) -> tuple[int, bool, ScanState]:
    """From ``start``, in the scan ``state`` (a fresh one: at the value's
    opening bracket): the index of the bracket that closes the value and
    ``True``; or ``len(text)`` and ``False`` when ``text`` ends first, with
    the state to resume from when it grows. String-aware for ``"`` and ``'``
    strings (with escapes)."""
    depth, quote, esc = state
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
                return j, True, _FRESH
    return len(text), False, (depth, quote, esc)


def _scan(text: str, start: int) -> tuple[int, bool]:
    """From the bracket at ``start``: the index of its matching close bracket
    and ``True``, or the last index and ``False`` when it is never closed."""
    end, closed, _ = scan_brackets(text, start)
    return (end, True) if closed else (len(text) - 1, False)


def _balanced_spans(text: str, offset: int = 0) -> Iterator[tuple[int, str]]:
    """``(end position, span)`` of each outermost ``{…}``/``[…]`` span, in
    order of appearance; an unclosed last span is yielded to the end of the text."""
    i = 0
    while i < len(text):
        start = min((p for p in (text.find("{", i), text.find("[", i)) if p >= 0), default=-1)
        if start < 0:
            return
        end, _ = _scan(text, start)
        yield offset + end + 1, text[start : end + 1]
        i = end + 1


def _enclosing_fence(text: str) -> str | None:
    """The body of one fence that encloses the whole text (backticks inside
    string values stay), or ``None``: the text opens with the fence and
    ends with its closing marker (text after a fence is read, never cut off)."""
    text = text.rstrip()
    if not text.startswith(("```", "~~~")):
        return None
    marker = text[:3]
    end = len(text) - 3
    newline = text.find("\n")
    if not text.endswith(marker) or end <= 3 or newline < 0 or newline > end:
        return None
    return text[newline + 1 : end].strip()


def json_candidates(text: str) -> Iterator[str]:
    """Candidate JSON texts in ``text``, in the order they are tried: the
    whole (reasoning-free) text, the body of an enclosing fence, then the
    values in it from the last to the first (no duplicates)."""
    seen: set[str] = set()
    body = strip_thinking(text).lstrip("\ufeff")
    pool: list[tuple[int, str]] = []
    enclosed = _enclosing_fence(body)
    pool.extend(_balanced_spans(enclosed if enclosed is not None else body))
    for m in _FENCE.finditer(body):
        chunk = m.group(2).strip()
        pool.append((m.end(), chunk))
        pool.extend((m.end(), span) for _, span in _balanced_spans(chunk))
    pool.sort(key=lambda item: item[0], reverse=True)  # stable: fence body before its spans
    first = [body] if enclosed is None else [body, enclosed]
    for cand in [*first, *(c for _, c in pool)]:
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


def _literal(candidate: str) -> Any:
    """A Python-literal object or array (``RejectedLiteral`` propagates)."""
    if candidate[:1] not in ("{", "[", "("):
        return _MISSING
    try:
        value = literal_value(candidate)
    except RejectedLiteral:
        raise
    except ValueError:
        return _MISSING
    return clean_data(value) if isinstance(value, dict | list) else _MISSING


def _repaired(candidate: str) -> Any:
    if candidate[:1] not in ("{", "[") or not _closed(candidate):
        return _MISSING
    try:
        value = json_repair.loads(candidate)
    except Exception:  # json_repair raises assorted errors on hopeless input
        return _MISSING
    return clean_data(value) if isinstance(value, dict | list) else _MISSING


_TIERS = ((_strict, _literal), (_repaired,))
"""How candidates are read, tier by tier: as written (exact JSON, else a
Python literal), then repaired. Repair is a fallback, never a rival: it runs
only when no candidate read as written fits."""


def _read(candidate: str, readings: tuple[Any, ...]) -> Any:
    """``candidate`` by the first of ``readings`` that reads it, or ``_MISSING``."""
    for reading in readings:
        value = reading(candidate)
        if value is not _MISSING:
            return value
    return _MISSING


def closed_json(text: str) -> bool:
    """Whether ``text`` (reasoning removed, whitespace around it ignored) is
    one whole JSON object or array, bare or in one fence: a reply cut at the
    token limit *after* its value closed (trailing newline or whitespace
    padding, a closing fence or the end token never written) lost nothing.
    A cut scalar (``12`` of ``123``) can look whole, so only brackets count."""
    body = strip_thinking(text).strip().lstrip("\ufeff")
    fence = _FENCE.fullmatch(body)
    if fence is not None:
        body = fence.group(2).strip()
    elif body.startswith(("```", "~~~")):  # a fence the cut left unclosed
        body = body.partition("\n")[2].strip()
    if body[:1] not in ("{", "[") or body[-1:] not in ("}", "]"):
        return False
    try:
        return isinstance(orjson.loads(body), dict | list)
    except orjson.JSONDecodeError:
        return False


def parse_output(text: str, spec: OutputSpec) -> Any:
    """The one JSON value in ``text`` that validates as ``spec`` (see the
    module docstring): every candidate is read as written (exact JSON, else
    a Python literal) before any is repaired, so a repair never competes
    with a value that was right as written.

    Raises:
        ValidationError: several different values fit (type
            ``AMBIGUOUS_OUTPUT``, loc ``()``); or JSON was found but none of
            it validates (the error of the last value).
        NoJSONFound: no JSON value in the text, or only values with no JSON
            meaning (a set, bytes...; the message says which, the cause is
            the ``RejectedLiteral``).
    """
    body = strip_thinking(text).lstrip("\ufeff")
    whole = _strict(body) if body else _MISSING
    if whole is not _MISSING:  # the first candidate, as exact JSON: the common answer
        try:
            return spec.validate(whole, body)  # exact JSON: strict first, no normalising
        except ValidationError:
            pass  # the search below tries it again, then the rest, and reports the error
    last_error: ValidationError | None = None
    rejected: RejectedLiteral | None = None
    refused: set[str] = set()
    candidates = list(json_candidates(text))
    for readings in _TIERS:
        fitting: list[Any] = []
        for candidate in candidates:
            if candidate in refused:
                continue
            try:
                value = _read(candidate, readings)
            except RejectedLiteral as exc:  # never repaired into something else
                rejected = rejected or exc
                refused.add(candidate)
                continue
            if value is _MISSING:
                continue
            try:
                fitting.append(spec.validate(value))
                continue
            except ValidationError as exc:
                last_error = last_error or exc
            if spec.wrapped and not (isinstance(value, dict) and WRAP_FIELD in value):
                # the model gave the bare value instead of {"result": ...}
                with contextlib.suppress(ValidationError):
                    fitting.append(spec.validate({WRAP_FIELD: value}))
        if fitting:
            return _the_one(fitting, spec)
    bare = _bare_text(body, spec)
    if bare is not _MISSING:
        return bare
    if last_error is not None:
        raise last_error
    if rejected is not None:
        raise NoJSONFound(f"no JSON value: {rejected}") from rejected
    raise NoJSONFound("no JSON value found in the reply text")


AMBIGUOUS_OUTPUT = "ambiguous_output"
"""Error type of a reply holding several different values that fit the schema."""

_AMBIGUOUS = ("the reply holds {count} different JSON values that fit the schema, and "
              "nothing says which one is the answer: reply with exactly one (the whole "
              "reply, or one fenced block), without drafts, corrections or examples beside it")


def _the_one(values: list[Any], spec: OutputSpec) -> Any:
    """The one value ``values`` (validated outputs, in the order tried) hold,
    the same value given twice counting once (a fence and the object inside
    it, an answer repeated).

    Raises:
        ValidationError: ``AMBIGUOUS_OUTPUT`` when they differ.
    """
    distinct: list[Any] = []
    for value in values:
        if not any(_same(value, seen, spec) for seen in distinct):
            distinct.append(value)
    if len(distinct) == 1:
        return distinct[0]
    error = PydanticCustomError(AMBIGUOUS_OUTPUT, _AMBIGUOUS, {"count": len(distinct)})
    raise ValidationError.from_exception_data(
        spec.name, [{"type": error, "loc": (), "input": len(distinct)}])


def _same(a: Any, b: Any, spec: OutputSpec) -> bool:
    """Whether two validated outputs are the same value (``==``, or the same
    JSON: ``nan`` is never equal to itself)."""
    if a == b:
        return True
    try:
        return spec.dump_json(a) == spec.dump_json(b)
    except Exception:  # a value pydantic cannot serialize: the two differ, as ``==`` said
        return False


def _bare_text(body: str, spec: OutputSpec) -> Any:
    """The reply as the bare value of a wrapped choice of strings (a
    ``Literal``/``Enum`` of strings), or ``_MISSING``: the text stripped of
    surrounding whitespace, then of one pair of quotes, backticks or bold
    marks and a final ``.``, validated as the output when it is exactly a
    member (the case-only reading of a JSON value, ``output._enum_values.enum_value``,
    is not taken for bare text). Never for other types: any prose would
    validate as a ``str``."""
    if not spec.wrapped:
        return _MISSING
    node = spec.plain_schema.get("properties", {}).get(WRAP_FIELD, {})
    if not _string_choice(node, spec.plain_schema):
        return _MISSING
    text = body.strip()
    tries = [text]
    unquoted = text.rstrip(".").strip()
    for left, right in (('"', '"'), ("'", "'"), ("`", "`"), ("**", "**"), ("“", "”")):
        if len(unquoted) > len(left) + len(right) and unquoted.startswith(left) \
                and unquoted.endswith(right):
            unquoted = unquoted[len(left):-len(right)].strip()
    tries.append(unquoted)
    member = resolve_ref(node, spec.plain_schema)
    members = member.get("enum") or [member.get("const")]
    for value in dict.fromkeys(t for t in tries if t):
        if value not in members:  # exact only: no JSON said this text is the value
            continue
        try:
            return spec.validate({WRAP_FIELD: value})
        except ValidationError:
            continue
    return _MISSING


def _string_choice(node: Any, root: Any) -> bool:
    """Whether a plain schema node is a choice of strings only (``enum``/``const``)."""
    if not isinstance(node, dict):
        return False
    node = resolve_ref(node, root)
    if "enum" in node:
        return bool(node["enum"]) and all(isinstance(v, str) for v in node["enum"])
    if "const" in node:
        return isinstance(node["const"], str)
    return False
