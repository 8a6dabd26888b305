"""What in-band tool-call markup is read into (``_markup`` has the overview):
``MarkupCall`` (one call), ``ToolMarkup`` (a token-delimited format; with
``_reply_markup.ReplyMarkup``, ``AnyMarkup``), and the decoding shared by
formats: ``json_calls`` / ``call_object`` for JSON call objects, ``typed_value``
for the raw text of string-only formats (typed from the tool's schema).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentflow.output.brackets import rebalanced, trailing_closers
from agentflow.output.decoding import decode_value
from agentflow.output.dialects import resolve_ref, schema_types
from agentflow.providers._reply_markup import MarkupCall, ReplyMarkup

__all__ = ["AnyMarkup", "MarkupCall", "ToolMarkup", "call_list", "call_object", "json_calls",
           "only_matches", "typed_value"]


@dataclass(frozen=True, slots=True)
class ToolMarkup:
    """One in-band tool-call format.

    Attributes:
        name: the registry name (``"minimax"``, ``"hermes"``...).
        start / end: the tokens that open and close a block (``end`` empty:
            the block runs to the end of the reply, as Mistral's
            ``[TOOL_CALLS]`` has no closing token).
        parse: the calls in the text between them, or ``None`` when it is
            not this format (the block then stays text, or another format
            with the same tokens is tried).
    """

    name: str
    start: str
    end: str
    parse: Callable[[str], list[MarkupCall] | None]


AnyMarkup = ToolMarkup | ReplyMarkup
"""A token-delimited format or a whole-reply form."""


def json_calls(body: str) -> list[MarkupCall] | None:
    """The calls of a block holding ``{"name": str, "arguments": object | JSON
    string}`` objects (``parameters`` read too), one or several (a line each, or
    glued): the shape of Hermes/Qwen ``<tool_call>`` and MiniMax-M1
    ``<tool_calls>`` blocks. ``None`` when anything else is in the block.
    One object with closing brackets lost or doubled (Qwen models write one
    ``}`` too many or too few; the block's end token says the call ended) is
    read with them set right (``agentflow.output.brackets``).

    Raises:
        ValueError: text that is not JSON (the block is then not this format).
    """
    decoder = json.JSONDecoder(strict=False)
    calls: list[MarkupCall] = []
    pos, end = 0, len(body)
    while True:
        while pos < end and body[pos].isspace():
            pos += 1
        if pos >= end or (calls and trailing_closers(body[pos:])):
            break
        try:
            data, pos = decoder.raw_decode(body, pos)
        except ValueError:
            fixed = rebalanced(body[pos:], add=True) if not calls else None
            if fixed is None:
                raise
            data, pos = decoder.decode(fixed), end
        call = call_object(data)
        if call is None:
            return None
        calls.append(call)
    return calls or None


def call_list(text: str) -> list[MarkupCall] | None:
    """The calls of ``text``, one JSON array (or one object) of ``{"name",
    "arguments"}`` calls (``call_object``): Mistral's ``[TOOL_CALLS]``,
    Nemotron's ``<TOOLCALL>``, Phi-4's and LFM2's JSON form. ``None`` when
    it holds no call, or an item that is none.

    Raises:
        ValueError: text that is not JSON (the block then stays text).
    """
    data = json.JSONDecoder(strict=False).decode(text)
    found = [call_object(item) for item in (data if isinstance(data, list) else [data])]
    calls = [call for call in found if call is not None]
    return calls if calls and len(calls) == len(found) else None


def call_object(data: Any) -> MarkupCall | None:
    """The call a decoded ``{"name": str, "arguments": object | JSON string}``
    object names (``parameters`` or ``args`` read for ``arguments``: Gemma-based
    tool models write ``{"name": ..., "args": {...}}`` in their ``<tool_call>``,
    ollama/ollama#18357; absent, null or an empty string: no arguments);
    ``None`` for any other value.

    Raises:
        ValueError: ``arguments`` is a string that is not JSON.
    """
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", data.get("parameters", data.get("args", {})))
    if isinstance(args, str):
        args = decode_value(args) if args.strip() else {}
    if args is None:
        args = {}
    return MarkupCall(data["name"], args) if isinstance(args, dict) else None


_BLANK = re.compile(r"\s*")


def only_matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]] | None:
    """The matches of ``pattern`` in ``text``, left to right, when nothing but
    whitespace lies before, between and after them (``[]``: a blank text);
    ``None`` when anything else does. A block of elements (invokes, a call's
    parameters) is read this way: a tag the model broke is left over, and the
    block is no call, never a call without that argument (the kind of
    sgl-project/sglang#39435)."""
    found: list[re.Match[str]] = []
    at = 0
    for match in pattern.finditer(text):
        if not _BLANK.fullmatch(text, at, match.start()):
            return None
        found.append(match)
        at = match.end()
    return found if _BLANK.fullmatch(text, at) else None


def typed_value(raw: str, schema: Mapping[str, Any] | None,
                root: Mapping[str, Any] | None = None) -> Any:
    """A parameter's raw markup text as a value: kept as text when the
    parameter accepts a string (``null`` for a nullable one), else decoded as
    JSON or a Python literal when it is one (text otherwise, for validation
    to report)."""
    text = raw.strip("\n")
    types: set[str] = set()
    if schema is not None:
        top = root or schema
        node = resolve_ref(schema, top)
        types = schema_types(node)
        for branch in node.get("anyOf", ()) or node.get("oneOf", ()):
            if isinstance(branch, Mapping):
                types |= schema_types(resolve_ref(branch, top))
    if "string" in types:
        return None if text == "null" and "null" in types else text
    try:
        return decode_value(text.strip())
    except ValueError:
        return text
