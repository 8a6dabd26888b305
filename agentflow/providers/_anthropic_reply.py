"""Reading Anthropic Messages replies (used by ``providers.anthropic``): the
typed SSE stream and the whole ``message`` object, as ``ModelChunk``s.

Facts followed (shared/providers.md §3; docs.anthropic.com/en/api/messages-streaming):

* events ``message_start`` (the message, its first usage), ``content_block_start``
  / ``_delta`` / ``_stop``, ``message_delta`` (the stop reason and *cumulative*
  usage), ``message_stop``, ``ping``, ``error``;
* a tool_use streams its ``input`` as ``input_json_delta`` fragments after an
  empty ``input`` in ``content_block_start`` (some compatible servers send it
  whole there instead); a whole message's ``input`` is an object, or the model's
  raw text as a string when that was no JSON object;
* thinking and redacted_thinking blocks are kept whole (signed) to be sent back;
* a server tool's block (``server_tool_use``: web search, code execution,
  web fetch; ``mcp_tool_use``) streams its input as ``input_json_delta`` too
  (anthropics/anthropic-sdk-python#1421): the vendor runs it, so only a
  ``tool_use`` block's input is a call for the agent to run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from agentflow.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageChunk,
)
from agentflow.providers._anthropic_errors import stream_error
from agentflow.providers._anthropic_request import THINKING_BLOCKS, UNCACHEABLE
from agentflow.providers._payload import counted

__all__ = ["PAUSED_TURN", "STOP_REASONS", "StreamReader", "input_delta", "merge_usage",
           "usage_of"]


STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
    "max_tokens": "length", "model_context_window_exceeded": "length",
    "refusal": "refusal", "pause_turn": "other",
}

PAUSED_TURN = "anthropic_paused_turn"
"""``ThinkingDelta.provider_data`` key of a reply that ended ``pause_turn``: its
content blocks as the API sent them, to send back as they are
(``_anthropic_pause``); never passed on to the agent."""
_KEPT_OUT = frozenset({"streamed", "partial_json"})
"""Keys the reader adds to a streamed block (not the API's)."""


def merge_usage(usage: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Fold ``message_delta``'s usage into ``message_start``'s. The counts are
    cumulative (docs.anthropic.com, "Streaming Messages": "The token counts
    shown in the usage field of the message_delta event are cumulative"), so a
    count never goes down: an Anthropic-compatible server that sends
    ``input_tokens: 0`` (or ``null``, which the anthropic SDK's
    ``accumulate_event`` skips too) in ``message_delta`` keeps the count of
    ``message_start`` (envoyproxy/ai-gateway#1631), and one that sent 0 in
    ``message_start`` takes the later count (sgl-project/sglang#20678)."""
    for key, value in delta.items():
        old = usage.get(key)
        if value is None or (isinstance(value, int | float) and isinstance(old, int | float)
                             and 0 <= value < old):  # a negative one is no count (``counted``)
            continue
        usage[key] = value


def usage_of(raw: Mapping[str, Any]) -> Usage:
    """Anthropic counts cache reads/writes apart from ``input_tokens``; ours
    include them. ``reasoning_tokens`` is ``output_tokens_details.thinking_tokens``:
    "Number of output tokens the model generated as internal reasoning ...
    Always <= ``output_tokens``" (anthropic-sdk-python 2.10
    ``types/output_tokens_details.py``, on ``Usage`` and on the cumulative
    ``MessageDeltaUsage``); it counts the raw reasoning, not the summarized
    thinking text returned, so no count of the text could stand for it."""
    cached = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    given = int(raw.get("input_tokens") or 0)
    details = raw.get("output_tokens_details")  # optional, observability only: never fatal
    count = details.get("thinking_tokens") if isinstance(details, Mapping) else None
    thinking = count if isinstance(count, int) and not isinstance(count, bool) else 0
    return counted(Usage(input_tokens=given + cached + written,
                         output_tokens=int(raw.get("output_tokens") or 0), cached_tokens=cached,
                         reasoning_tokens=thinking, cache_write_tokens=written),
                   given, written)


class StreamReader:
    """Folds typed stream events (or a whole message's blocks) into chunks."""

    def __init__(self) -> None:
        self.done = False
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.thinking: list[dict[str, Any]] = []
        self.message: dict[str, Any] = {}
        """The ``message`` of ``message_start`` (its ``model`` and ``id``)."""

    def feed(self, data: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """Chunks of one stream event (``ping`` and unknown events give none).

        Raises:
            ProviderError: an ``error`` event.
        """
        kind = data.get("type")
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
            self.usage = dict(self.message.get("usage") or {})
            yield UsageChunk(usage_of(self.usage))
        elif kind == "content_block_start":
            index, block = data["index"], dict(data["content_block"])
            self.blocks[index] = block
            if block["type"] == "tool_use":
                yield ToolCallDelta(index, id=block["id"], name=block["name"])
            elif block["type"] == "text" and block.get("text"):
                yield TextDelta(block["text"])
        elif kind == "content_block_delta":
            yield from self._delta(data["index"], data["delta"])
        elif kind == "content_block_stop":
            block = self.blocks.get(data["index"], {})
            yield from self._start_input(data["index"], block)
            yield from self._stop(block)
        elif kind == "message_delta":
            merge_usage(self.usage, data.get("usage") or {})
            yield UsageChunk(usage_of(self.usage))
            delta = data.get("delta") or {}
            yield from self.finish(delta.get("stop_reason"), delta.get("stop_details"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error" or (kind is None and isinstance(data.get("error"), Mapping)):
            # a proxy's error frame may lack the ``"type": "error"`` discriminator
            # (``{"error": {"type": "stream_error", "message": ...}}``,
            # lbjlaq/Antigravity-Manager#3371): an error all the same
            raise stream_error({**data, "type": "error"})

    def _delta(self, index: int, delta: Mapping[str, Any]) -> Iterable[ModelChunk]:
        block = self.blocks.setdefault(index, {"type": "text"})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            yield TextDelta(delta["text"])
        elif kind == "input_json_delta":
            block["streamed"] = True
            block["partial_json"] = block.get("partial_json", "") + (delta.get("partial_json")
                                                                     or "")
            if delta.get("partial_json") and block.get("type") == "tool_use":
                yield ToolCallDelta(index, arguments=delta["partial_json"])
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            yield ThinkingDelta(delta["thinking"])
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta" and isinstance(delta.get("citation"), Mapping):
            block.setdefault("citations", []).append(delta["citation"])

    @staticmethod
    def _start_input(index: int, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """At a streamed tool_use's end: the ``input`` that came whole in its
        ``content_block_start`` when no ``input_json_delta`` followed.
        Anthropic sends ``{}`` there, then deltas; some Anthropic-compatible
        servers send it all at the start, which was read as ``{}``."""
        given = block.get("input")
        if block.get("type") == "tool_use" and not block.get("streamed") and given:
            yield input_delta(index, given)

    def _stop(self, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """At a block's end: keep thinking blocks whole for the next request."""
        if block.get("type") not in UNCACHEABLE:
            return
        self.thinking.append(dict(block))
        yield ThinkingDelta(signature=block.get("signature") or None,
                            provider_data={THINKING_BLOCKS: list(self.thinking)})

    def block(self, index: int, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """Chunks of one block of a whole message."""
        self.blocks[index] = dict(block)
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            yield TextDelta(block["text"])
        elif kind == "tool_use":
            yield input_delta(index, block.get("input"), block["id"], block["name"])
        elif kind == "thinking" and block.get("thinking"):
            yield ThinkingDelta(block["thinking"])
        yield from self._stop(block)

    def content(self) -> list[dict[str, Any]]:
        """The reply's content blocks as the API sent them (a streamed block's
        text and input put back together), in order."""
        out = []
        for _, block in sorted(self.blocks.items()):
            raw = {k: v for k, v in block.items() if k not in _KEPT_OUT}
            if block.get("streamed"):
                try:
                    raw["input"] = orjson.loads(block.get("partial_json") or "{}")
                except orjson.JSONDecodeError:
                    raw["input"] = {}
            out.append(raw)
        return out

    def finish(self, stop_reason: str | None,
               stop_details: Any = None) -> Iterable[ModelChunk]:
        """The normalized finish chunk for ``stop_reason`` (its ``detail``:
        ``stop_details`` in words, ``stop_words``); before it, for a paused
        turn, its content (``PAUSED_TURN``) to send back."""
        if stop_reason == "pause_turn":
            yield ThinkingDelta(provider_data={PAUSED_TURN: self.content()})
        if stop_reason:
            model, reply_id = self.message.get("model"), self.message.get("id")
            yield FinishChunk(STOP_REASONS.get(stop_reason, "other"), stop_reason,
                              model if isinstance(model, str) else None,
                              reply_id if isinstance(reply_id, str) else None,
                              stop_words(stop_details))


def stop_words(details: Any) -> str:
    """A refusal's ``stop_details`` in words: ``"category 'cyber': <explanation>"``
    (either part alone when the other is ``null``; ``""`` for none or another
    shape). Claude models that refuse end with ``stop_reason: "refusal"``,
    often with no content at all, and say why only there
    (anthropic-sdk-python ``types/refusal_stop_details.py``: ``type``
    ``"refusal"``, ``category``, ``explanation``, both nullable; on the whole
    message and on the stream's ``message_delta.delta``); read without it, the
    refusal's error said only "finish reason 'refusal'"
    (Oaklight/llm-rosetta#432, earendil-works/pi#5666). The explanation is
    cut to 500 characters."""
    if not isinstance(details, Mapping):
        return ""
    category, explanation = details.get("category"), details.get("explanation")
    parts = [f"category {category!r}" if isinstance(category, str) and category else "",
             explanation.strip()[:500] if isinstance(explanation, str) else ""]
    return ": ".join(p for p in parts if p)


def input_delta(index: int, given: Any, call_id: str | None = None,
                 name: str | None = None) -> ToolCallDelta:
    """A tool_use's ``input`` as a tool-call delta: an object as it is; a
    string as argument *text* for the tolerant decoder (the API returns the
    model's raw text there when it was not valid JSON, e.g. with Python
    triple quotes: anthropics/anthropic-sdk-python#804), so a bad one is sent
    back to the model as invalid instead of failing the reply; absent or
    ``null`` as ``{}``; anything else as its JSON text (refused by validation)."""
    if isinstance(given, Mapping):
        return ToolCallDelta(index, call_id, name, arguments_obj=given)
    if given is None:
        return ToolCallDelta(index, call_id, name, arguments_obj={})
    text = given if isinstance(given, str) else orjson.dumps(given).decode()
    return ToolCallDelta(index, call_id, name, arguments=text)
