"""Gemma 4's ``<|tool_call>`` tool-call form, written into the reply text.

Gemma 4 calls a tool with ``<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,
days:3}<tool_call|>``: a bare name, then its arguments as ``key:value`` pairs
with bare keys, strings between ``<|"|>`` quote tokens (their text as is, no
escapes), numbers, ``true``/``false``/``null`` bare, objects ``{k:v}`` and
arrays ``[v]`` nested the same way (its chat template's ``format_argument``).
A server without a Gemma 4 tool parser passes the text on (llama.cpp,
ggml-org/llama.cpp#22786; llama-cpp-python, abetlen/llama-cpp-python#2227;
vLLM with another parser, Gitlawb/openclaude#380), and the call came back as
the answer. ``GEMMA4_MARKUP`` makes each block the call it is; a block that
does not parse stays text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup

__all__ = ["GEMMA4_MARKUP", "parse_gemma4_calls"]

QUOTE = '<|"|>'
"""Gemma 4's string quote token."""
_CALL = re.compile(r"\s*call:\s*([A-Za-z0-9_.:-]{1,128}?)\s*\{")
_BARE = re.compile(r"[^,}\]]*")
_KEY = re.compile(r"\s*([^:,{}\[\]\s]+)\s*:")
_LITERALS = {"true": True, "false": False, "null": None, "none": None}


def parse_gemma4_calls(body: str) -> list[MarkupCall] | None:
    """The calls of one ``<|tool_call>`` block: one or more ``call:name{...}``.
    ``None`` when anything else is there.

    Raises:
        ValueError: arguments that do not parse (the block then stays text).
    """
    calls: list[MarkupCall] = []
    pos = 0
    while body[pos:].strip():
        head = _CALL.match(body, pos)
        if head is None:
            return None
        args, pos = _object(body, head.end())
        calls.append(MarkupCall(head.group(1), args))
    return calls or None


def _object(text: str, pos: int) -> tuple[dict[str, Any], int]:
    """The ``{k:v,...}`` whose ``{`` is just before ``pos``, and where it ends."""
    out: dict[str, Any] = {}
    while True:
        pos = _skip(text, pos)
        if text.startswith("}", pos):
            return out, pos + 1
        if text.startswith(QUOTE, pos):  # a quoted key (``escape_keys``)
            end = text.index(QUOTE, pos + len(QUOTE))
            key = text[pos + len(QUOTE):end]
            pos = _skip(text, end + len(QUOTE))
            if not text.startswith(":", pos):
                raise ValueError(f"no ':' after key {key!r}")
            pos += 1
        else:
            match = _KEY.match(text, pos)
            if match is None:
                raise ValueError(f"no key at {pos}")
            key, pos = match.group(1).strip('"'), match.end()
        out[key], pos = _value(text, pos)
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos += 1
        elif not text.startswith("}", pos):
            raise ValueError(f"no ',' or '}}' at {pos}")


def _value(text: str, pos: int) -> tuple[Any, int]:
    pos = _skip(text, pos)
    if text.startswith(QUOTE, pos):
        end = text.index(QUOTE, pos + len(QUOTE))
        return text[pos + len(QUOTE):end], end + len(QUOTE)
    if text.startswith("{", pos):
        return _object(text, pos + 1)
    if text.startswith("[", pos):
        items: list[Any] = []
        pos += 1
        while True:
            pos = _skip(text, pos)
            if text.startswith("]", pos):
                return items, pos + 1
            item, pos = _value(text, pos)
            items.append(item)
            pos = _skip(text, pos)
            if text.startswith(",", pos):
                pos += 1
            elif not text.startswith("]", pos):
                raise ValueError(f"no ',' or ']' at {pos}")
    if text.startswith('"', pos):  # a JSON string, as some builds write
        value, end = json.JSONDecoder(strict=False).raw_decode(text, pos)
        return value, end
    match = _BARE.match(text, pos)
    raw = match.group(0).strip() if match else ""
    end = match.end() if match else pos
    if raw.lower() in _LITERALS:
        return _LITERALS[raw.lower()], end
    try:
        return json.loads(raw), end
    except ValueError:
        return raw, end  # a bare word: its text (typed by the tool's validation)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


GEMMA4_MARKUP = register_markup(
    ToolMarkup("gemma4", "<|tool_call>", "<tool_call|>", parse_gemma4_calls))
"""Gemma 4's ``<|tool_call>call:name{...}<tool_call|>`` form."""
