"""A fake Anthropic Messages API (``POST /v1/messages``) on 127.0.0.1.

Speaks the wire protocol of shared/providers.md §3: typed SSE events
(``message_start``, ``content_block_*``, ``message_delta``, ``message_stop``,
``ping``), whole ``message`` objects when not streaming, and the error
envelope ``{"type":"error","error":{"type","message"},"request_id"}``.

Refuses what the real API refuses (each a 400 ``invalid_request_error``):
roles other than user/assistant or not alternating, tool results not first
in their turn or not answering the previous turn's calls, a ``tool_use`` id
used twice in the request ("`tool_use` ids must be unique"), empty text blocks,
a conversation ending on an assistant turn (Claude 4.6+: "This model does
not support assistant message prefill..."; older models: trailing whitespace)
unless that turn sends back a paused server-tool turn (``pause_turn``),
more than 4 ``cache_control`` blocks, a forced ``tool_choice`` while thinking
("Thinking may not be enabled when tool_choice forces tool use."), thinking
with ``temperature`` or a budget >= ``max_tokens``, thinking blocks sent back
altered (bad signature) or missing before a tool loop's calls,
``output_config`` on a model without native output or with an open object,
and image/document blocks off the vision and PDF docs (source type, media
type, bytes not of that type, an image over 5 MB of base64, over 100 PDF
pages; a body over 32 MB is a 413 ``request_too_large``).

``FakeReply.extra`` keys: ``no_finish`` (message_delta without stop_reason),
``redacted`` (add a redacted_thinking block),
``stop_reason``, ``error`` (an error object sent as ``event: error`` after
``error_after`` events), ``cache_read`` (tokens reported read from cache),
``input_in_start`` (a streamed tool_use carries its whole ``input`` in
``content_block_start`` and no ``input_json_delta``, as some
Anthropic-compatible servers send it), ``start_usage`` / ``delta_usage``
(override the usage of ``message_start`` / ``message_delta``: Anthropic-compatible
servers send ``input_tokens: 0`` in one or the other), ``thinking_tokens``
(``usage.output_tokens_details.thinking_tokens``, whole and in ``message_delta``:
anthropic-sdk-python 2.10 ``types/output_tokens_details.py``), ``stop_details``
(a refusal's ``{"type": "refusal", "category", "explanation"}``, on the whole
message and on ``message_delta.delta``: ``types/raw_message_delta_event.py``),
``cache_write`` (``cache_creation_input_tokens``, whole, in ``message_start``
and in ``message_delta``).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiohttp import web

from . import media
from .anthropic_batches import AnthropicBatches
from .base import FakeError, FakeReply, FakeServer, pieces, sse
from .limits import LimitState

__all__ = ["FORCED_WITH_THINKING", "NO_PREFILL", "AnthropicFake", "anthropic_error"]

FORCED_WITH_THINKING = "Thinking may not be enabled when tool_choice forces tool use."
NO_PREFILL = ("This model does not support assistant message prefill. The conversation must end "
              "with a user message.")


def anthropic_error(status: int, kind: str, message: str,
                    headers: Mapping[str, str] | None = None) -> FakeError:
    """A scripted error in Anthropic's envelope."""
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}
    return FakeError(status, body, headers or {})


_CALL_ID = re.compile(r"[A-Za-z0-9_-]+")
"""What the API takes as a tool_use id (400 "String should match pattern")."""
_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
"""The API's per-image limit, measured on the base64 text."""
MAX_PDF_PAGES = 100
MAX_REQUEST_BYTES = 32 * 1024 * 1024


def _bad(message: str) -> FakeError:
    return anthropic_error(400, "invalid_request_error", message)


def signature_of(thinking: str) -> str:
    """The signature this fake issues for a thinking text."""
    return "sig_" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


class AnthropicFake(AnthropicBatches, FakeServer):
    """The fake. ``native_output``: whether ``output_config`` is accepted;
    ``prefill``: whether a conversation may end on an assistant turn (models
    before Claude 4.6; trailing whitespace is refused then). The Message
    Batches endpoints: ``AnthropicBatches`` (``batches.script`` steers them,
    ``batches.submitted`` counts submissions per ``custom_id``)."""

    routes = ("/v1/messages",)
    vendor = "anthropic"

    def __init__(self, *, native_output: bool = True, prefill: bool = False) -> None:
        super().__init__()
        self.native_output = native_output
        self.prefill = prefill
        self._ids = itertools.count(1)
        self._init_batches()

    # -- refusals ------------------------------------------------------------
    def key_error(self, key: str) -> FakeError:
        return anthropic_error(401, "authentication_error",
                               f"invalid x-api-key {key} (starts {key[:12]})")

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        bearer = request.headers.get("authorization", "").startswith("Bearer ")
        if not request.headers.get("x-api-key") and not bearer:  # the SDK sends a Bearer key
            return anthropic_error(401, "authentication_error", "x-api-key header is required")
        version = request.headers.get("anthropic-version", "")
        if not _VERSION.fullmatch(version) or version < "2023-06-01":
            return _bad("anthropic-version header is required (a date, 2023-06-01 or later)")
        if not isinstance(body, dict) or not {"model", "max_tokens", "messages"} <= body.keys():
            return _bad("model, max_tokens and messages are required")
        return (self._check_tools(body) or self._check_thinking(body)
                or self._check_messages(body) or self._check_media(body)
                or self._check_cache(body) or self._check_output(body))

    def _check_media(self, body: dict[str, Any]) -> FakeError | None:
        """Image and document blocks as the vision and PDF-support docs state:
        base64 or url sources; JPEG/PNG/GIF/WebP images of at most 5 MB of
        base64 each, matching their ``media_type``; PDFs of at most 100 pages in
        all; a request of at most 32 MB (413 ``request_too_large``)."""
        if len(orjson.dumps(body)) > MAX_REQUEST_BYTES:
            return anthropic_error(413, "request_too_large",
                                   "Request exceeds the maximum allowed number of bytes.")
        pages = 0
        for i, message in enumerate(body["messages"]):
            content = message["content"]
            for j, block in enumerate(content if isinstance(content, list) else ()):
                if block["type"] not in ("image", "document"):
                    continue
                where = f"messages.{i}.content.{j}.{block['type']}.source"
                if message["role"] != "user":
                    return _bad(f"messages.{i}.content.{j}: {block['type']} blocks are only "
                                "allowed in user messages")
                source = block.get("source") or {}
                if source.get("type") == "url":
                    if not str(source.get("url", "")).startswith(("http://", "https://")):
                        return _bad(f"{where}.url: Input should be a valid URL")
                    continue
                if source.get("type") != "base64":
                    return _bad(f"{where}: Input tag '{source.get('type')}' found using 'type' "
                                "does not match any of the expected tags: 'base64', 'url', ...")
                allowed = IMAGE_TYPES if block["type"] == "image" else ("application/pdf",)
                if source.get("media_type") not in allowed:
                    return _bad(f"{where}.base64.media_type: Input should be "
                                + ", ".join(repr(t) for t in allowed))
                data = media.decode(source.get("data"))
                if data is None:
                    return _bad(f"{where}.base64.data: invalid base64 data")
                if block["type"] == "image" and len(source["data"]) > MAX_IMAGE_BASE64:
                    return _bad(f"{where}.base64: image exceeds 5 MB maximum: "
                                f"{len(source['data'])} bytes > {MAX_IMAGE_BASE64} bytes")
                if media.kind_of(data) != source["media_type"]:
                    return _bad(f"{where}.base64: The {block['type']} was specified using the "
                                f"{source['media_type']} media type, but it does not appear to "
                                "be a valid file of that type")
                if block["type"] == "document":
                    pages += media.pdf_pages(data)
        if pages > MAX_PDF_PAGES:
            return _bad(f"A maximum of {MAX_PDF_PAGES} PDF pages may be provided.")
        return None

    def _check_tools(self, body: dict[str, Any]) -> FakeError | None:
        names = [t["name"] for t in body.get("tools", [])]
        if any("input_schema" not in t for t in body.get("tools", [])):
            return _bad("tools.0.input_schema: Field required")
        choice = body.get("tool_choice")
        if choice is not None and not names:
            return _bad("tool_choice may only be specified while providing tools")
        if choice and choice.get("type") == "tool" and choice.get("name") not in names:
            return _bad(f"Tool '{choice.get('name')}' not found in provided tools")
        return None

    def _check_thinking(self, body: dict[str, Any]) -> FakeError | None:
        thinking = body.get("thinking") or {}
        if thinking.get("type") != "enabled":
            return None
        if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
            return _bad(FORCED_WITH_THINKING)
        budget = thinking.get("budget_tokens", 0)
        if budget < 1024 or budget >= body["max_tokens"]:
            return _bad("thinking.budget_tokens: must be >= 1024 and less than max_tokens")
        if "temperature" in body:
            return _bad("temperature may only be set to 1 when thinking is enabled")
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block["type"] == "thinking" and block.get("signature") != signature_of(
                    block.get("thinking", "")
                ):
                    return _bad("Invalid `signature` in `thinking` block")
        last_calls = [m for m in body["messages"] if m["role"] == "assistant"
                      and any(b["type"] == "tool_use" for b in m["content"])]
        if last_calls and last_calls[-1] is body["messages"][-2] and last_calls[-1]["content"][0][
            "type"
        ] not in ("thinking", "redacted_thinking"):
            return _bad("Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
                        "`thinking` is enabled, a final `assistant` message must start with a "
                        "thinking block (preceeding the lastmost set of `tool_use` and "
                        "`tool_result` blocks).")
        return None

    def _check_messages(self, body: dict[str, Any]) -> FakeError | None:
        messages = body["messages"]
        if not messages or messages[0]["role"] != "user":
            return _bad("messages: first message must use the \"user\" role")
        if not body.get("tools") and any(
                isinstance(m["content"], list) and any(
                    b["type"] in ("tool_use", "tool_result") for b in m["content"])
                for m in messages):
            return _bad("Requests which include `tool_use` or `tool_result` blocks must define "
                        "tools.")
        pending: set[str] = set()
        used_ids: set[Any] = set()  # every tool_use id of the request
        for i, message in enumerate(messages):
            role, content = message["role"], message["content"]
            if role not in ("user", "assistant"):
                return _bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
            if i and messages[i - 1]["role"] == role:
                return _bad("messages: roles must alternate between \"user\" and \"assistant\"")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            if any(b["type"] == "text" and not b.get("text") for b in blocks):
                return _bad(f"messages.{i}: text content blocks must be non-empty")
            if any(b["type"] == "text" and not b["text"].strip() for b in blocks):
                return _bad("messages: text content blocks must contain non-whitespace text")
            for j, b in enumerate(blocks):
                if b["type"] == "tool_use" and b.get("id") in used_ids:
                    return _bad(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                if b["type"] == "tool_use":
                    used_ids.add(b.get("id"))
                if b["type"] == "tool_use" and not isinstance(b.get("input"), dict):
                    return _bad(f"messages.{i}.content.{j}.tool_use.input: Input should be a "
                                "valid dictionary")
                for key in ("id", "tool_use_id"):
                    if b["type"] in ("tool_use", "tool_result") and key in b and not (
                            _CALL_ID.fullmatch(str(b[key]))):
                        return _bad(f"messages.{i}.content.{j}.{b['type']}.{key}: String should "
                                    "match pattern '^[a-zA-Z0-9_-]+$'")
            answered = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            kinds = [b["type"] for b in blocks]
            if answered and kinds[: len(answered)] != ["tool_result"] * len(answered):
                return _bad(f"messages.{i}: tool_result blocks must come first in the content")
            if pending and not pending <= set(answered):
                return _bad(f"messages.{i}: `tool_use` ids were found without `tool_result` "
                            f"blocks immediately after: {sorted(pending - set(answered))}")
            pending = {b["id"] for b in blocks if b["type"] == "tool_use"}
        last = messages[-1]
        if last["role"] == "assistant" and not self.prefill and not _paused_turn(last):
            return _bad(NO_PREFILL)
        if last["role"] == "assistant" and isinstance(last["content"], list):
            tail = last["content"][-1]
            if tail["type"] == "text" and tail["text"] != tail["text"].rstrip():
                return _bad("messages: final assistant content cannot end with trailing "
                            "whitespace")
        return None

    def _check_cache(self, body: dict[str, Any]) -> FakeError | None:
        found = sum("cache_control" in b for b in _all_blocks(body))
        if found > 4:
            return _bad(f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")
        return None

    def _check_output(self, body: dict[str, Any]) -> FakeError | None:
        config = body.get("output_config")
        if config is None:
            return None
        if not self.native_output:
            return _bad(f"output_config.format: structured outputs are not supported for the "
                        f"model {body['model']}")
        for node in _schema_nodes(config["format"]["schema"]):
            if node.get("type") == "object" and node.get("additionalProperties") is not False:
                return _bad("output_config.format.schema: For 'object' type, "
                            "'additionalProperties' must be explicitly set to false")
        return None

    # -- replies -------------------------------------------------------------
    def _content(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if (body.get("thinking") or {}).get("type") == "enabled":  # a reply always thinks
            thinking = reply.thinking or "Let me think about the request."
            blocks.append({"type": "thinking", "thinking": thinking,
                           "signature": signature_of(thinking)})
            if reply.extra.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": "EncryptedOpaqueData=="})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id or f"toolu_{next(self._ids):04d}",
                           "name": call.name, "input": call.arguments})
        return blocks

    def _stop_reason(self, reply: FakeReply) -> str:
        return str(reply.extra.get("stop_reason") or reply.finish_reason
                   or ("tool_use" if reply.tool_calls else "end_turn"))

    def _usage(self, reply: FakeReply) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "input_tokens": reply.usage[0], "output_tokens": reply.usage[1],
            "cache_creation_input_tokens": int(reply.extra.get("cache_write", 0)),
            "cache_read_input_tokens": int(reply.extra.get("cache_read", 0))}
        if "thinking_tokens" in reply.extra:
            usage["output_tokens_details"] = {"thinking_tokens": reply.extra["thinking_tokens"]}
        return usage

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return {"id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                "content": self._content(reply, body), "stop_reason": self._stop_reason(reply),
                "stop_sequence": None, "usage": self._usage(reply),
                **({"stop_details": reply.extra["stop_details"]}
                   if "stop_details" in reply.extra else {})}

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = list(self._events(reply, body))
        error = reply.extra.get("error")
        if error is not None:
            at = int(reply.extra.get("error_after", 2))
            frames = [*frames[:at], sse({"type": "error", "error": error}, "error")]
        return frames

    def _events(self, reply: FakeReply, body: Any) -> Iterator[bytes]:
        usage = self._usage(reply)
        start = {**usage, "output_tokens": 1, **reply.extra.get("start_usage", {})}
        yield sse({"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": start,
        }}, "message_start")
        yield sse({"type": "ping"}, "ping")
        for index, block in enumerate(self._content(reply, body)):
            yield from self._block_events(index, block, reply.chunk_size,
                                          bool(reply.extra.get("input_in_start")))
        stop = None if reply.extra.get("no_finish") else self._stop_reason(reply)
        delta = {"stop_reason": stop, "stop_sequence": None,
                 **({"stop_details": reply.extra["stop_details"]}
                    if "stop_details" in reply.extra else {})}
        yield sse({"type": "message_delta", "delta": delta,
                   "usage": reply.extra.get("delta_usage", {
                       "output_tokens": usage["output_tokens"],
                       **{k: usage[k] for k in ("output_tokens_details",
                                                "cache_creation_input_tokens") if k in usage}})},
                  "message_delta")
        yield sse({"type": "message_stop"}, "message_stop")

    def _block_events(self, index: int, block: dict[str, Any], size: int | None,
                      input_in_start: bool = False) -> Iterator[bytes]:
        kind = block["type"]
        whole = input_in_start and isinstance(block.get("input"), dict)
        start: dict[str, Any] = {
            "text": {"type": "text", "text": ""},
            "thinking": {"type": "thinking", "thinking": "", "signature": ""},
            "tool_use": {**block, "input": block["input"] if whole else {}},
            "redacted_thinking": block,
        }[kind]
        yield sse({"type": "content_block_start", "index": index, "content_block": start},
                  "content_block_start")
        deltas: list[dict[str, Any]] = []
        if kind == "text":
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], size)]
        elif kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": p}
                      for p in pieces(block["thinking"], size)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "tool_use" and not whole:
            raw = block["input"]
            text = raw if isinstance(raw, str) else orjson.dumps(raw).decode()
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(text, size)]
        for delta in deltas:
            yield sse({"type": "content_block_delta", "index": index, "delta": delta},
                      "content_block_delta")
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")

    # -- request inspectors (for tests) --------------------------------------
    @staticmethod
    def tool_names(body: Any) -> list[str]:
        """Names of the tools the request declares."""
        return [t["name"] for t in body.get("tools", [])]

    @staticmethod
    def forced_tool(body: Any) -> str | None:
        """The tool the request forces (``"*"`` for any), or ``None``."""
        choice = body.get("tool_choice") or {}
        return {"tool": choice.get("name"), "any": "*"}.get(choice.get("type", ""))

    @staticmethod
    def request_text(body: Any) -> str:
        """All text of the request (system, messages, tool results)."""
        parts = []
        for block in _all_blocks(body):
            if block.get("type") in ("text", None):
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(str(block.get("content", "")))
        return "\n".join(parts)

    @staticmethod
    def has_native_output(body: Any) -> bool:
        """Whether the request asks for native structured output."""
        return "output_config" in body

    def limit_headers(self, state: LimitState) -> dict[str, str]:
        """``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`` (resets
        as RFC 3339 times)."""
        now = datetime.now(UTC)
        headers: dict[str, str] = {}
        for dim, limit, remaining, reset in (
                ("requests", state.requests_limit, state.requests_remaining, state.requests_reset),
                ("tokens", state.tokens_limit, state.tokens_remaining, state.tokens_reset)):
            if limit is not None:
                when = (now + timedelta(seconds=reset)).isoformat(timespec="seconds")
                headers[f"anthropic-ratelimit-{dim}-limit"] = str(limit)
                headers[f"anthropic-ratelimit-{dim}-remaining"] = str(remaining)
                headers[f"anthropic-ratelimit-{dim}-reset"] = when.replace("+00:00", "Z")
        return headers

    def rate_limit_error(self, state: LimitState) -> FakeError:
        """Anthropic's 429 ``rate_limit_error`` with ``retry-after`` (whole seconds)."""
        return self.rate_limited(math.ceil(state.retry_after))

    @staticmethod
    def rate_limited(retry_after: float = 0) -> FakeError:
        """A 429 as Anthropic sends it."""
        return anthropic_error(429, "rate_limit_error", "Number of request tokens has exceeded "
                               "your per-minute rate limit", {"retry-after": str(retry_after)})


def _paused_turn(message: dict[str, Any]) -> bool:
    """Whether a final assistant turn sends back a turn the API paused
    (``pause_turn``): it holds a server tool's blocks (the server-tools docs:
    "provide the response back as-is" to let the model continue), which is
    no prefill."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") != "tool_result"
        and (b.get("type") == "server_tool_use" or str(b.get("type", "")).endswith("_tool_result"))
        for b in content)


def _all_blocks(body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    system = body.get("system")
    if isinstance(system, list):
        yield from system
    elif isinstance(system, str):
        yield {"type": "text", "text": system}
    yield from body.get("tools", [])
    for message in body.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            yield {"type": "text", "text": content}
        else:
            yield from content


def _schema_nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schema_nodes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _schema_nodes(item)
