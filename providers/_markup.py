"""In-band tool-call markup: tool calls a model wrote into its reply *text*
(open-weight chat templates served without a tool parser), turned into real
tool calls, streamed and whole.

A ``ToolMarkup`` is one format: its opening and closing tokens and a
``parse`` function from the text between them to calls. Each format lives in
its vendor's module (``minimax``: ``<minimax:tool_call>``, ``dashscope``:
Qwen/Hermes ``<tool_call>{json}</tool_call>``, ``deepseek``:
``<｜tool▁calls▁begin｜>``, ``glm``: ``<tool_call>name<arg_key>…``,
``moonshot``: Kimi K2's ``<|tool_calls_section_begin|>``) and is
registered by name here, as are forms with no tokens at all, where the whole
reply is the call (``_reply_markup.ReplyMarkup``: GLM-4-0414's name line and
JSON object, read only against the offered tools); an OpenAI-compatible
adapter is given the names to look for (``tool_markups=``; each vendor
adapter defaults to its own, and a generic server's model name picks them
through ``MODEL_MARKUPS``).

``MarkupFilter`` runs over one reply's chunks: text before a block passes on
at once, a block's text is held until its closing token, then becomes
``ToolCallDelta``s and leaves the text. A block that no format can parse,
one never closed, or markup after real (structured) tool calls stays text.
Values of formats that carry strings only (MiniMax, GLM) are typed from the
tool's JSON Schema: a parameter that accepts a string keeps the text, others
are decoded as JSON or a Python literal when they are one.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any, TypeVar

import orjson

from agentflow.messages import new_id
from agentflow.model import (
    FinishChunk,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentflow.output.brackets import rebalanced, trailing_closers
from agentflow.output.decoding import decode_value
from agentflow.output.dialects import resolve_ref, schema_types
from agentflow.providers._reply_markup import LeadHold, ReplyMarkup

__all__ = [
    "MODEL_MARKUPS",
    "AnyMarkup",
    "MarkupCall",
    "MarkupFilter",
    "ReplyMarkup",
    "ToolMarkup",
    "json_calls",
    "markups_for_model",
    "register_markup",
    "resolve_markups",
    "typed_value",
]


@dataclass(frozen=True, slots=True)
class MarkupCall:
    """One call read from markup: the tool name and its arguments (a dict,
    or a mapping of parameter name to raw text for string-only formats)."""

    name: str
    arguments: Mapping[str, Any]
    raw_values: bool = False
    """``arguments`` values are raw text to be typed from the tool's schema."""


@dataclass(frozen=True, slots=True)
class ToolMarkup:
    """One in-band tool-call format.

    Attributes:
        name: the registry name (``"minimax"``, ``"hermes"``...).
        start / end: the tokens that open and close a block.
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
_M = TypeVar("_M", ToolMarkup, ReplyMarkup)

_REGISTRY: dict[str, AnyMarkup] = {}
_HOMES = {
    "minimax": "agentflow.providers.minimax",
    "minimax-m1": "agentflow.providers.minimax",
    "hermes": "agentflow.providers.dashscope",
    "qwen": "agentflow.providers.dashscope",
    "qwen-xml": "agentflow.providers.dashscope",
    "qwen-function": "agentflow.providers.dashscope",
    "deepseek": "agentflow.providers.deepseek",
    "deepseek-dsml": "agentflow.providers.deepseek",
    "deepseek-dsml-v4": "agentflow.providers.deepseek",
    "deepseek-dsml-ascii": "agentflow.providers.deepseek",
    "deepseek-dsml-v4-ascii": "agentflow.providers.deepseek",
    "glm": "agentflow.providers.glm",
    "glm-4-0414": "agentflow.providers.glm",
    "kimi-k2": "agentflow.providers.moonshot",
    "kimi-k2-singular": "agentflow.providers.moonshot",
}
"""Which vendor module defines each built-in markup (imported on first use)."""

MODEL_MARKUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("*minimax*", ("minimax", "minimax-m1")),
    ("*qwen*", ("hermes", "qwen-xml", "qwen-function")),
    ("*llama*", ("qwen-function",)),
    ("*hermes*", ("hermes",)),
    ("*deepseek*", ("deepseek", "deepseek-dsml", "deepseek-dsml-v4", "deepseek-dsml-ascii",
                    "deepseek-dsml-v4-ascii")),
    ("*glm*", ("glm", "glm-4-0414")),
    ("*kimi*", ("kimi-k2", "kimi-k2-singular")),
)
"""Model-name globs (lower case) -> the markups a generic OpenAI-compatible
server (llama.cpp, vLLM, LM Studio) hosting that model may leave in text."""


def register_markup(markup: _M, *aliases: str) -> _M:
    """Register ``markup`` under its name (and ``aliases``); returns it."""
    for name in (markup.name, *aliases):
        _REGISTRY[name] = markup
    return markup


def resolve_markups(names: Iterable[str | AnyMarkup]) -> tuple[AnyMarkup, ...]:
    """The markups for ``names`` (registered names, ``ToolMarkup``s or ``ReplyMarkup``s).

    Raises:
        ValueError: an unknown markup name.
    """
    out: list[AnyMarkup] = []
    for item in names:
        if isinstance(item, ToolMarkup | ReplyMarkup):
            out.append(item)
            continue
        if item not in _REGISTRY and item in _HOMES:
            importlib.import_module(_HOMES[item])
        if item not in _REGISTRY:
            known = ", ".join(sorted({*_REGISTRY, *_HOMES}))
            raise ValueError(f"unknown tool-call markup {item!r}; known: {known}")
        if _REGISTRY[item] not in out:
            out.append(_REGISTRY[item])
    return tuple(out)


def markups_for_model(model: str) -> tuple[str, ...]:
    """The markup names ``MODEL_MARKUPS`` gives ``model`` (may be empty)."""
    lowered = model.lower()
    names: list[str] = []
    for pattern, found in MODEL_MARKUPS:
        if fnmatch(lowered, pattern):
            names.extend(n for n in found if n not in names)
    return tuple(names)


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


def call_object(data: Any) -> MarkupCall | None:
    """The call a decoded ``{"name": str, "arguments": object | JSON string}``
    object names (``parameters`` read for ``arguments``; absent, null or an
    empty string: no arguments); ``None`` for any other value.

    Raises:
        ValueError: ``arguments`` is a string that is not JSON.
    """
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", data.get("parameters", {}))
    if isinstance(args, str):
        args = decode_value(args) if args.strip() else {}
    if args is None:
        args = {}
    return MarkupCall(data["name"], args) if isinstance(args, dict) else None


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


class _Scan:
    """The markup state of one channel of a reply (its text, or its reasoning)."""

    __slots__ = ("block", "held", "start")

    def __init__(self) -> None:
        self.held = ""
        self.block: str | None = None
        self.start = ""

    def rest(self) -> str:
        """What is held (an unclosed block, a partial start token), emptied."""
        rest = (self.start + self.block if self.block is not None else "") + self.held
        self.block, self.start, self.held = None, "", ""
        return rest


class MarkupFilter:
    """Turns markup in one reply's text chunks into tool calls (see the
    module docstring). ``feed`` each chunk's output, then ``close``.

    Markup in the reasoning (``ThinkingDelta`` text: DeepSeek's
    ``reasoning_content``, a vLLM reasoning parser that kept a call inside
    ``<think>``) is read too, for a model that wrote its call there and no
    call in its answer: those calls are kept until the reply ends and used
    only if the answer made no call (structured or markup); otherwise their
    text goes back to the reasoning, as written.

    A whole-reply form (``ReplyMarkup``) is looked for only when ``tools``
    are offered: the reply's head is held while it may be one (``LeadHold``),
    and a real tool call or the reply's end settles it.

    Args:
        markups: the formats to look for.
        tools: the request's tools, for typing string-only formats' values
            and naming the tools a whole-reply form may call.
    """

    _BASE_INDEX = 1000
    """Indices of markup calls start here, clear of the vendor's own."""

    def __init__(self, markups: Sequence[AnyMarkup], tools: Sequence[ToolSpec] = ()) -> None:
        self._markups = tuple(m for m in markups if isinstance(m, ToolMarkup))
        forms = [m for m in markups if isinstance(m, ReplyMarkup)]
        lead = LeadHold(forms, frozenset(t.name for t in tools)) if forms and tools else None
        self._lead = lead
        self._starts = tuple(dict.fromkeys(m.start for m in self._markups))
        self._schemas = ({t.name: t.parameters for t in tools}
                         if self._markups or lead is not None else {})
        self._scan = _Scan()
        self._thought: _Scan | None = None
        self._thought_calls: list[tuple[str, list[MarkupCall]]] = []
        self._calls = 0
        self._structured = False

    @property
    def active(self) -> bool:
        """Whether there is anything to look for."""
        return bool(self._markups) or self._lead is not None

    def feed(self, chunks: Iterable[ModelChunk]) -> list[ModelChunk]:
        """The chunks to pass on for ``chunks`` (``chunks`` itself, when it is
        a list and there is nothing to look for)."""
        if not self._markups and self._lead is None:
            return chunks if isinstance(chunks, list) else list(chunks)
        out: list[ModelChunk] = []
        for chunk in chunks:
            if isinstance(chunk, TextDelta) and not self._structured:
                lead = self._lead
                if lead is not None and not lead.done:
                    passed = lead.take(chunk.text)
                    if passed:
                        self._text(passed, out)
                    continue
                self._text(chunk.text, out)
            elif (isinstance(chunk, ThinkingDelta) and chunk.text and chunk.signature is None
                  and chunk.provider_data is None):
                self._thinking(chunk.text, out)
            elif isinstance(chunk, FinishChunk):
                self._settle(out)
                self._flush(out)
                if self._calls and chunk.reason in ("stop", "tool_calls"):
                    chunk = FinishChunk("tool_calls", chunk.raw)
                out.append(chunk)
            else:
                if isinstance(chunk, ToolCallDelta) and chunk.index < self._BASE_INDEX:
                    self._settle(out, parse=False)  # a held head is text beside real calls
                    self._structured = True  # real tool calls: markup after them stays text
                out.append(chunk)
        return out

    def close(self) -> list[ModelChunk]:
        """What is still held at the end of the reply (as text)."""
        out: list[ModelChunk] = []
        if self._markups or self._lead is not None:  # nothing is held without them
            self._settle(out)
            self._flush(out)
        return out

    # -- internals --------------------------------------------------------
    def _settle(self, out: list[ModelChunk], parse: bool = True) -> None:
        """End the hold of the reply's head: its calls (when ``parse`` and a
        whole-reply form reads it), else its text, read for markup as usual."""
        lead = self._lead
        if lead is None or lead.done:
            return
        found = lead.settle() if parse else lead.release()
        if isinstance(found, str):
            if found:
                self._text(found, out)
        else:
            out.extend(self._deltas(found))
    def _flush(self, out: list[ModelChunk]) -> None:
        if self._thought is not None:
            rest = self._thought.rest()
            if rest:
                out.append(ThinkingDelta(rest))
            if self._calls or self._structured:  # the answer made its own calls
                out.extend(ThinkingDelta(raw) for raw, _ in self._thought_calls)
            else:  # the calls were written in the reasoning only: they are the reply's
                out.extend(d for _, calls in self._thought_calls for d in self._deltas(calls))
            self._thought_calls.clear()
        rest = self._scan.rest()
        if rest:
            out.append(TextDelta(rest))  # broken or unclosed markup stays text

    def _thinking(self, piece: str, out: list[ModelChunk]) -> None:
        if self._thought is None:
            self._thought = _Scan()
        for item in self._blocks(self._thought, piece):
            if isinstance(item, str):
                out.append(ThinkingDelta(item))
            else:
                self._thought_calls.append(item)

    def _text(self, piece: str, out: list[ModelChunk]) -> None:
        for item in self._blocks(self._scan, piece):
            if isinstance(item, str):
                out.append(TextDelta(item))
            else:
                out.extend(self._deltas(item[1]))

    def _blocks(self, scan: _Scan, piece: str) -> list[str | tuple[str, list[MarkupCall]]]:
        """``piece`` read on from ``scan``'s state: plain text (a ``str``) and
        the parsed blocks (their raw text and calls), in order."""
        out: list[str | tuple[str, list[MarkupCall]]] = []
        text = scan.held + piece
        scan.held = ""
        while text:
            if scan.block is None:
                at, start = self._find_start(text)
                if start is None:
                    keep = self._partial_start(text)
                    if len(text) > keep:
                        out.append(text[: len(text) - keep])
                    scan.held = text[len(text) - keep:]
                    return out
                if at:
                    out.append(text[:at])
                scan.block, scan.start = "", start
                text = text[at + len(start):]
                continue
            ends = {m.end for m in self._markups if m.start == scan.start}
            buffer = scan.block + text
            found = min(((buffer.find(e), e) for e in ends if e in buffer), default=None)
            if found is None:
                scan.block = buffer
                return out
            at, end = found
            body, text = buffer[:at], buffer[at + len(end):]
            raw = scan.start + body + end
            calls = self._parse(scan.start, body)
            out.append(raw if calls is None else (raw, calls))
            scan.block, scan.start = None, ""
        return out

    def _find_start(self, text: str) -> tuple[int, str | None]:
        best: tuple[int, str | None] = (-1, None)
        for start in self._starts:
            at = text.find(start)
            if at >= 0 and (best[1] is None or at < best[0]):
                best = (at, start)
        return best

    def _partial_start(self, text: str) -> int:
        """Length of the longest end of ``text`` that may begin a start token."""
        longest = 0
        for start in self._starts:
            for k in range(min(len(start) - 1, len(text)), longest, -1):
                if text.endswith(start[:k]):
                    longest = k
                    break
        return longest

    def _parse(self, start: str, body: str) -> list[MarkupCall] | None:
        for markup in self._markups:
            if markup.start != start:
                continue
            try:
                calls = markup.parse(body)
            except (ValueError, TypeError, KeyError, IndexError):
                calls = None
            if calls:
                return calls
        return None

    def _deltas(self, calls: list[MarkupCall]) -> list[ModelChunk]:
        out: list[ModelChunk] = []
        for call in calls:
            args: Mapping[str, Any] = call.arguments
            if call.raw_values:
                schema = self._schemas.get(call.name) or {}
                props = schema.get("properties") or {}
                args = {k: typed_value(str(v), props.get(k), schema) for k, v in args.items()}
            index = self._BASE_INDEX + self._calls
            self._calls += 1
            out.append(ToolCallDelta(index, id=f"call_{new_id()}", name=call.name,
                                     arguments=orjson.dumps(dict(args)).decode()))
        return out
