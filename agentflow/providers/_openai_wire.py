"""The OpenAI chat-completions wire format, shared by every OpenAI-style
adapter (OpenAI, DeepSeek, DashScope compatible mode, GLM, MiniMax, and any
OpenAI-compatible server such as llama.cpp, vLLM or LM Studio).

Request side: ``format_messages``, ``format_tools``, ``format_tool_choice``,
``format_response_format`` and the JSON-mode instruction helpers. Reply side:
``ChunkParser`` folds stream chunks (``chat.completion.chunk``) or a whole
reply (``chat.completion``) into ``ModelChunk``s; ``parse_usage`` and
``finish_reason`` normalize what vendors report.

Wire facts follow shared/providers.md section 1 (OpenAI Chat Completions):
tool-call arguments travel as a JSON *string*; tool results are ``role:
"tool"`` messages with ``tool_call_id``; stream tool-call deltas are keyed by
``index``; a refusal arrives in ``refusal`` instead of ``content``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from agentflow.errors import ContextLengthError
from agentflow.messages import (
    DocumentBlock,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ResponseFormat,
    TextDelta,
    ThinkingDelta,
    TokenLogprob,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.providers._call_ids import OPENAI_MAX_ID, openai_call_id
from agentflow.providers._media import ImageUrlStyle, openai_part
from agentflow.providers._payload import dump_json

__all__ = [
    "JSON_INSTRUCTION",
    "SCHEMA_INSTRUCTION",
    "ChunkParser",
    "ReasoningHistory",
    "finish_reason",
    "format_messages",
    "format_response_format",
    "format_tool_choice",
    "format_tools",
    "insert_instruction",
    "mentions_json",
    "parse_usage",
    "sanitize_schema_name",
    "token_logprobs",
]

ReasoningHistory: TypeAlias = Literal["drop", "field", "tags"]
"""How an assistant turn's thinking goes back to the vendor: ``drop`` it,
send it as ``reasoning_content`` on turns that made tool calls (DeepSeek), or
inline as ``<think>...</think>`` before the text (MiniMax)."""

JSON_INSTRUCTION = "Reply with a JSON object."
SCHEMA_INSTRUCTION = (
    "Reply with a single JSON object that validates against this JSON Schema, and "
    "nothing else:\n{schema}"
)

# ----------------------------------------------------------------------------- request


def format_messages(
    messages: Sequence[Msg],
    *,
    reasoning: ReasoningHistory = "drop",
    late_system: Literal["system", "user"] = "system",
    images: ImageUrlStyle = "data_url",
) -> list[dict[str, Any]]:
    """``Msg``s as chat-completions messages.

    System messages stay inline; ``late_system="user"`` turns the ones after
    the first non-system message into user messages (for chat templates that
    accept a system prompt only at the start). A ``tool`` message becomes one
    ``role: "tool"`` message per result; an error result is prefixed
    ``"Error: "`` (the wire has no error flag). A user turn with images or
    documents has a list of content parts, in block order (``images``: how
    inline image bytes are written, see ``providers._media``).
    """
    out: list[dict[str, Any]] = []
    started = False
    for msg in messages:
        role = msg.role
        if role == "system":
            out.append({"role": "user" if started and late_system == "user" else "system",
                        "content": msg.text})
            continue
        started = True
        if role == "assistant":
            out.append(_assistant(msg, reasoning))
            continue
        results = msg.tool_results
        out.extend(_tool_result(block) for block in results)
        media = msg.media
        if role == "user" and (msg.text or not results or media):
            out.append({"role": "user",
                        "content": _parts(msg, images) if media else msg.text})
    return out


def _parts(msg: Msg, images: ImageUrlStyle) -> list[dict[str, Any]]:
    """A user turn's text, image and document blocks as content parts."""
    parts: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock | DocumentBlock):
            parts.append(openai_part(block, images))
    return parts


def _assistant(msg: Msg, reasoning: ReasoningHistory) -> dict[str, Any]:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            calls.append({
                "id": block.id if len(block.id) <= OPENAI_MAX_ID else openai_call_id(block.id),
                "type": "function",
                "function": {"name": block.name,
                             "arguments": dump_json(dict(block.input)).decode()},
            })
    text = "".join(texts)
    out: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if reasoning == "tags" and thinking:
        out["content"] = f"<think>\n{''.join(thinking).strip()}\n</think>\n\n{text}"
    if calls:
        out["tool_calls"] = calls
        if reasoning == "field":
            out["reasoning_content"] = "".join(thinking)
    return out


def _tool_result(block: ToolResultBlock) -> dict[str, Any]:
    content = block.output
    if block.is_error and not content.lower().startswith("error"):
        content = f"Error: {content}"
    call_id = block.tool_use_id
    if len(call_id) > OPENAI_MAX_ID:  # another vendor's id (providers._call_ids)
        call_id = openai_call_id(call_id)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def format_tools(tools: Sequence[ToolSpec], *, strict: bool = True) -> list[dict[str, Any]]:
    """Function tools. ``strict: true`` is sent for specs that ask for it when
    ``strict`` is on (vendors that reject or ignore the flag turn it off)."""
    out = []
    for spec in tools:
        params = dict(spec.parameters) if spec.parameters else {}
        params.setdefault("type", "object")
        if params["type"] == "object":
            params.setdefault("properties", {})
        fn: dict[str, Any] = {"name": spec.name, "description": spec.description,
                              "parameters": params}
        if strict and spec.strict:
            fn["strict"] = True
        out.append({"type": "function", "function": fn})
    return out


def format_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    """``"auto"`` | ``"none"`` | ``"required"`` | ``{"type": "function",
    "function": {"name": ...}}`` for ``specific``."""
    if choice.mode == "specific":
        return {"type": "function", "function": {"name": choice.name or ""}}
    return choice.mode


_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]+")


def sanitize_schema_name(name: str) -> str:
    """``name`` made to match OpenAI's ``[a-zA-Z0-9_-]{1,64}`` (other characters
    become ``_``; empty -> ``"output"``)."""
    clean = _NAME_BAD.sub("_", name)[:64]
    return clean if clean.strip("_") else "output"


def format_response_format(rf: ResponseFormat) -> dict[str, Any]:
    """``{"type": "json_object"}`` or ``{"type": "json_schema", "json_schema":
    {"name", "schema", "strict", "description"?}}`` (name sanitized)."""
    if rf.type == "json_object" or rf.schema is None:
        return {"type": "json_object"}
    spec: dict[str, Any] = {"name": sanitize_schema_name(rf.name), "schema": dict(rf.schema),
                            "strict": rf.strict}
    if rf.description:
        spec["description"] = rf.description
    return {"type": "json_schema", "json_schema": spec}


def mentions_json(wire_messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any message text holds the word "json" (any case): JSON mode
    (OpenAI, DeepSeek, DashScope) refuses requests where none does."""
    for m in wire_messages:
        content = m.get("content")
        if isinstance(content, str) and "json" in content.lower():
            return True
        if isinstance(content, list) and any(
            isinstance(p, dict) and "json" in str(p.get("text", "")).lower() for p in content
        ):
            return True
    return False


def insert_instruction(wire_messages: list[dict[str, Any]], text: str) -> None:
    """Insert a system message holding ``text`` after the leading system messages."""
    at = next((i for i, m in enumerate(wire_messages) if m.get("role") != "system"),
              len(wire_messages))
    wire_messages.insert(at, {"role": "system", "content": text})


# ----------------------------------------------------------------------------- reply

_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "eos": "stop", "end_turn": "stop",
    "length": "length", "max_tokens": "length", "model_context_window_exceeded": "length",
    "tool_calls": "tool_calls", "function_call": "tool_calls",
    "content_filter": "content_filter", "sensitive": "content_filter",
    "insufficient_system_resource": "error", "network_error": "error", "error": "error",
    "refusal": "refusal",
}


def finish_reason(raw: str) -> FinishReason:
    """A vendor's finish reason, normalized (GLM ``sensitive`` -> ``content_filter``,
    DeepSeek ``insufficient_system_resource`` -> ``error``; unknown -> ``other``)."""
    return _FINISH.get(raw, "other")


def parse_usage(data: Any) -> Usage | None:
    """``Usage`` from a ``usage`` object (``prompt_tokens``, ``completion_tokens``,
    ``prompt_tokens_details.cached_tokens`` or DeepSeek's
    ``prompt_cache_hit_tokens``, ``completion_tokens_details.reasoning_tokens``).

    Raises:
        ValueError, TypeError, AttributeError: counts that are not numbers, or
            details that are not objects (``ReplyGuard`` makes them typed).
    """
    if data is None or not isinstance(data, Mapping):  # None first: no ABC check per chunk
        return None
    prompt = data.get("prompt_tokens") or data.get("input_tokens") or 0
    completion = data.get("completion_tokens") or data.get("output_tokens") or 0
    details = data.get("prompt_tokens_details") or {}
    out_details = data.get("completion_tokens_details") or {}
    cached = details.get("cached_tokens") or data.get("prompt_cache_hit_tokens") or 0
    reasoning = out_details.get("reasoning_tokens") or 0
    return Usage(int(prompt), int(completion), int(cached), int(reasoning))


def token_logprobs(data: Any) -> tuple[TokenLogprob, ...]:
    """The tokens of a choice's ``logprobs`` (``{"content": [{"token",
    "logprob", "bytes", "top_logprobs"}...]}``, OpenAI's chat completions
    reference, whole replies and stream chunks alike; llama.cpp's server
    answers the same): ``()`` when there are none (``null``, no ``content``,
    a refusal's ``refusal`` list). An entry without a numeric ``logprob`` is
    skipped."""
    if not isinstance(data, Mapping):
        return ()
    content = data.get("content")
    if not isinstance(content, list):
        return ()
    out: list[TokenLogprob] = []
    append = out.append
    for entry in content:  # exact-type tests first: orjson's dicts, strs and floats
        if entry.__class__ is not dict and not isinstance(entry, Mapping):
            continue
        token, logprob, raw = entry.get("token"), entry.get("logprob"), entry.get("bytes")
        if token.__class__ is not str and not isinstance(token, str):
            continue
        if logprob.__class__ is not float:
            if not isinstance(logprob, int | float) or isinstance(logprob, bool):
                continue
            logprob = float(logprob)
        data_bytes = None
        if isinstance(raw, list):
            try:  # bytes() takes exactly ints 0-255 (bools too, as isinstance(b, int) did)
                bytes(raw)
                data_bytes = tuple(raw)
            except (TypeError, ValueError):
                pass
        append(TokenLogprob(token, logprob, data_bytes))
    return tuple(out)


class ChunkParser:
    """Folds chat-completion payloads into ``ModelChunk``s, one parser per reply.

    ``feed`` takes one stream chunk (``choices[0].delta``) or a whole reply
    (``choices[0].message``). Tool calls are keyed by ``index``; servers that
    omit it are handled by ``id`` (a new id starts a new call, a fragment
    without id/name continues the last). Arguments given as an object (some
    compatible servers) become ``arguments_obj``. A refusal is streamed as text
    and the finish reason becomes ``refusal``; ``stop`` with tool calls becomes
    ``tool_calls``. The deprecated ``function_call`` (one call, finish reason
    ``function_call``) older compatible servers answer with is read as call 0.
    All-zero usage (MiniMax placeholders) is skipped.
    Subclasses override ``text`` (content handling) and ``close`` (flush).

    Payloads are read as the wire format shapes them: one of another shape
    raises ``LookupError``/``TypeError``/``AttributeError``/``ValueError``
    (or makes a chunk with a field of the wrong type), which the caller's
    ``ReplyGuard.fold`` turns into a typed ``ProviderError``.
    """

    __slots__ = ("_ids", "_last", "_logprobs", "_model", "_next", "_refused", "_reply_id",
                 "_tools_seen", "_usage", "terminal")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._last = -1
        self._next = 0
        self._refused = False
        self._tools_seen = False
        self._usage: Usage | None = None
        self._model: str | None = None
        self._reply_id: str | None = None
        self._logprobs: tuple[TokenLogprob, ...] = ()
        self.terminal = False
        """Set when a payload itself ends the reply (no ``[DONE]`` needed)."""

    def feed(self, payload: Mapping[str, Any]) -> list[ModelChunk]:
        """The chunks of one payload."""
        out: list[ModelChunk] = []
        raw_finish = None
        if self._model is None:  # the answering model and reply id, for tracing
            model, reply_id = payload.get("model"), payload.get("id")
            self._model = model if isinstance(model, str) and model else None
            self._reply_id = reply_id if isinstance(reply_id, str) and reply_id else None
        choices = payload.get("choices")
        if choices:
            choice = choices[0]
            self._logprobs = token_logprobs(choice.get("logprobs"))
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")
            if delta:
                self.delta(delta, out)
            raw_finish = choice.get("finish_reason")
        if payload.get("truncated") is True:  # llama.cpp: the prompt was cut to its window
            raise ContextLengthError(
                "the server says it truncated the prompt to its context window "
                '("truncated": true): the reply read only part of the input')
        raw_usage = payload.get("usage")  # most stream chunks carry none: no call for them
        usage = parse_usage(raw_usage) if raw_usage is not None else None
        if usage is not None and usage.total_tokens and (self._usage is None
                                                         or usage != self._usage):
            self._usage = usage
            out.append(UsageChunk(usage))
        if raw_finish and raw_finish != "null":
            out.append(self.finish(raw_finish))
        return out

    def delta(self, delta: Mapping[str, Any], out: list[ModelChunk]) -> None:
        """Fold one ``delta``/``message`` object in."""
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            out.append(ThinkingDelta(reasoning))
        content = delta.get("content")
        if content:
            if isinstance(content, list):
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            self.text(content, out)
        refusal = delta.get("refusal")
        if refusal:
            self._refused = True
            out.append(TextDelta(refusal))
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                out.append(self.tool_call(call))
        elif isinstance(legacy := delta.get("function_call"), Mapping) and legacy:
            # the deprecated single ``function_call`` (finish reason ``function_call``)
            # that older OpenAI-compatible servers still answer with: call 0
            out.append(self.tool_call({"index": 0, "function": legacy}))

    def text(self, content: str, out: list[ModelChunk]) -> None:
        """Handle reply text (MiniMax splits ``<think>`` tags out here), with
        the tokens of this payload's ``logprobs.content`` when it has some."""
        logprobs, self._logprobs = self._logprobs, ()
        out.append(TextDelta(content, logprobs=logprobs) if logprobs else TextDelta(content))

    def tool_call(self, call: Mapping[str, Any]) -> ToolCallDelta:
        """One ``tool_calls[]`` entry as a ``ToolCallDelta``."""
        fn = call.get("function") or {}
        call_id = call.get("id") or None
        name = fn.get("name") or None
        index = call.get("index")
        if not isinstance(index, int):
            if call_id is not None and call_id in self._ids:
                index = self._ids[call_id]
            elif call_id is not None or name is not None or self._last < 0:
                index = self._next
            else:
                index = self._last
        if call_id is not None:
            self._ids[call_id] = index
        self._last = index
        self._next = max(self._next, index + 1)
        self._tools_seen = True
        args = fn.get("arguments")
        if isinstance(args, Mapping):
            return ToolCallDelta(index, call_id, name, arguments_obj=args)
        return ToolCallDelta(index, call_id, name, args if isinstance(args, str) else "")

    def finish(self, raw: str) -> FinishChunk:
        """The normalized finish chunk for the vendor's ``raw`` reason."""
        reason = finish_reason(raw)
        if self._refused:
            reason = "refusal"
        elif reason == "stop" and self._tools_seen:
            reason = "tool_calls"
        return FinishChunk(reason, raw, self._model, self._reply_id)

    def close(self) -> list[ModelChunk]:
        """Chunks held back until the reply ends (none here)."""
        return []
