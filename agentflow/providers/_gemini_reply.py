"""Gemini replies read into chunks (``providers.gemini`` uses it for the
stream, whole replies and batch replies alike): ``GenerateContentResponse``
objects, their ``functionCall`` / thought / text parts, finish reasons and
usage (shared/providers.md §4; googleapis/python-genai types.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from agentflow.errors import TruncatedStreamError
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
from agentflow.providers._gemini_errors import VENDOR, map_error
from agentflow.providers._gemini_request import CALL_ID, SIGNATURE

__all__ = ["ReplyReader", "validates_signatures"]


_FINISH: dict[str, FinishReason] = {
    "STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
    "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error", "TOO_MANY_TOOL_CALLS": "error",
}


_GENERATION = re.compile(r"gemini-(\d+)")


def validates_signatures(model: str) -> bool:
    """Whether ``model`` refuses function calls in history without a thought
    signature (Gemini 3 and later; ai.google.dev/gemini-api/docs/thought-signatures)."""
    match = _GENERATION.search(model.lower())
    return match is not None and int(match.group(1)) >= 3


def _usage(raw: Mapping[str, Any]) -> Usage:
    """Gemini counts thinking apart from candidates; our output includes it."""
    thoughts = int(raw.get("thoughtsTokenCount") or 0)
    return Usage(
        input_tokens=int(raw.get("promptTokenCount") or 0)
        + int(raw.get("toolUsePromptTokenCount") or 0),
        output_tokens=int(raw.get("candidatesTokenCount") or 0) + thoughts,
        cached_tokens=int(raw.get("cachedContentTokenCount") or 0),
        reasoning_tokens=thoughts,
    )


def _call_delta(index: int, call: Mapping[str, Any],
                data: Mapping[str, Any] | None) -> ToolCallDelta:
    """A ``functionCall`` as a tool-call delta. ``args`` is a ``Struct`` (an
    object) on the wire, but Gemini-compatible gateways and proxies have
    been seen to hand it over as a JSON *string* (the form OpenAI uses for
    ``arguments``): a string is argument text for the tolerant decoder (a
    bad one goes back to the model as invalid); absent or ``null`` is ``{}``;
    anything else its JSON text, refused by validation."""
    args = call.get("args")
    if isinstance(args, Mapping) or args is None:
        return ToolCallDelta(index, id=call.get("id"), name=call["name"],
                             arguments_obj=args or {}, provider_data=data)
    text = args if isinstance(args, str) else orjson.dumps(args).decode()
    return ToolCallDelta(index, id=call.get("id"), name=call["name"], arguments=text,
                         provider_data=data)


class ReplyReader:
    """Folds ``GenerateContentResponse`` objects (stream events or a whole
    reply) into chunks."""

    def __init__(self) -> None:
        self.calls = 0
        self.finish: str | None = None
        self.model: str | None = None
        self.reply_id: str | None = None

    def feed(self, data: Any) -> Iterable[ModelChunk]:
        if isinstance(data, list):  # an error (or reply) wrapped in a one-element list
            data = data[0] if data else {}
        if "error" in data:
            code = data["error"].get("code") if isinstance(data["error"], Mapping) else None
            raise map_error(code if isinstance(code, int) else 500, {}, orjson.dumps(data))
        if isinstance(data.get("modelVersion"), str):  # for tracing
            self.model = data["modelVersion"]
        if isinstance(data.get("responseId"), str):
            self.reply_id = data["responseId"]
        if data.get("usageMetadata"):
            yield UsageChunk(_usage(data["usageMetadata"]))
        candidates = data.get("candidates") or []
        if not candidates:
            blocked = (data.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                self.finish = f"BLOCKED:{blocked}"
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or []:
            yield from self._part(part)
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]

    def _part(self, part: Mapping[str, Any]) -> Iterable[ModelChunk]:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            call = part["functionCall"]
            data = {k: v for k, v in ((SIGNATURE, signature), (CALL_ID, call.get("id"))) if v}
            yield _call_delta(self.calls, call, data or None)
            self.calls += 1
            return
        if part.get("thought"):
            if part.get("text"):
                yield ThinkingDelta(part["text"])
        elif part.get("text"):
            yield TextDelta(part["text"])
        if signature:
            yield ThinkingDelta(provider_data={SIGNATURE: signature})

    def end(self, *, cut_if_unfinished: bool = True) -> Iterable[ModelChunk]:
        """The finish chunk (a whole reply without ``finishReason`` counts as
        ``STOP``, with ``raw=""``: the vendor gave no reason).

        Raises:
            TruncatedStreamError: a stream ended without ``finishReason``
                (nor a block reason): it was cut.
        """
        if self.finish is None and cut_if_unfinished:
            raise TruncatedStreamError("the stream ended without a finishReason; the reply "
                                       "is incomplete", vendor=VENDOR)
        raw = self.finish or ""
        if raw.startswith("BLOCKED:"):
            reason: FinishReason = "content_filter"
        elif raw in ("STOP", "") and self.calls:
            reason = "tool_calls"
        else:
            reason = _FINISH.get(raw or "STOP", "other")
        yield FinishChunk(reason, raw, self.model, self.reply_id)
