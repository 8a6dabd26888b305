"""A fake DeepSeek API (``POST /chat/completions``, also under ``/v1`` and
``/beta``) on 127.0.0.1.

Speaks shared/providers.md §2 on top of the OpenAI-style fake:
``reasoning_content`` streamed before the content in thinking mode, usage on
the last (finish) chunk with ``prompt_cache_hit_tokens``, ``: keep-alive``
comments before the first frame, tool-call ids like ``call_00_...``, and
error bodies sent as ``application/octet-stream``.

Thinking mode: ``deepseek-chat`` is off unless ``thinking.type`` is
``enabled``; every other model (``deepseek-reasoner``, V4) is on unless
``disabled``. Refuses what DeepSeek refuses: ``json_schema`` (400 "This
response_format type is unavailable now"), JSON mode without "json" in the
prompt, a forced ``tool_choice`` in thinking mode (400 "Thinking mode does
not support this tool_choice"), and, in thinking mode, an assistant turn
with tool calls sent back without ``reasoning_content``.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from .base import FakeCall, FakeError, FakeReply, pieces
from .openai import OpenAIStyleFake, openai_error

__all__ = ["DeepSeekFake"]

FORCED_IN_THINKING = "Thinking mode does not support this tool_choice"
NO_JSON_SCHEMA = "This response_format type is unavailable now"
JSON_WORD = ("Prompt must contain the word 'json' in some form to use 'response_format' of "
             "type 'json_object'.")


class DeepSeekFake(OpenAIStyleFake):
    """The fake. ``keep_alives``: comment lines sent before the first frame."""

    routes = ("/chat/completions", "/v1/chat/completions", "/beta/chat/completions")
    vendor = "deepseek"
    usage_on_finish = True
    content_parts = False  # string content only: a list with image_url fails to deserialize

    def __init__(self, *, api_key: str | None = None, keep_alives: int = 2) -> None:
        super().__init__(api_key=api_key)
        self.keep_alives = keep_alives

    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        return openai_error(400, message, param=None, code="invalid_request_error")

    def unauthorized(self) -> FakeError:
        return openai_error(401, "Authentication Fails, Your api key: ****key is invalid",
                            "authentication_error", code="invalid_request_error")

    def render_error(self, error: FakeError) -> web.Response:
        data = error.body if isinstance(error.body, bytes) else orjson.dumps(error.body)
        return web.Response(status=error.status, body=data, headers=dict(error.headers),
                            content_type="application/octet-stream")

    def thinking_on(self, body: dict[str, Any]) -> bool:
        kind = (body.get("thinking") or {}).get("type")
        if body.get("model") == "deepseek-chat":
            return kind == "enabled"
        return kind != "disabled"

    def check_tool_choice(self, body: dict[str, Any]) -> FakeError | None:
        choice = body.get("tool_choice")
        if self.thinking_on(body) and (choice == "required" or isinstance(choice, dict)):
            return self.bad(FORCED_IN_THINKING)
        return super().check_tool_choice(body)

    def check_response_format(self, body: dict[str, Any]) -> FakeError | None:
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return self.bad(NO_JSON_SCHEMA)
        if rf.get("type") == "json_object" and "json" not in orjson.dumps(
                body["messages"]).decode().lower():
            return self.bad(JSON_WORD)
        return None

    def check_messages(self, body: dict[str, Any]) -> FakeError | None:
        if self.thinking_on(body):
            for i, m in enumerate(body.get("messages") or ()):
                if m.get("role") == "assistant" and m.get("tool_calls") and (
                        "reasoning_content" not in m):
                    return self.bad("Missing `reasoning_content` field in the assistant "
                                    f"message at message index {i}")
        return super().check_messages(body)

    def call_id(self, index: int, call: FakeCall) -> str:
        return call.id or f"call_{index:02d}_fakeid"

    def usage_json(self, reply: FakeReply) -> dict[str, Any] | None:
        usage = super().usage_json(reply)
        if usage is None:
            return None
        hit = usage["prompt_tokens_details"]["cached_tokens"]
        usage["prompt_cache_hit_tokens"] = hit
        usage["prompt_cache_miss_tokens"] = usage["prompt_tokens"] - hit
        return usage

    def tool_json(self, index: int, call: FakeCall, reply: FakeReply) -> dict[str, Any]:
        return {"index": index, **super().tool_json(index, call, reply)}

    def preamble(self) -> list[bytes]:
        return [b": keep-alive\n\n"] * self.keep_alives

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().delta_frames(reply, body)
        if reply.thinking and self.thinking_on(body):  # thinking deltas carry content: null
            for frame in frames[1:1 + len(pieces(reply.thinking, reply.chunk_size))]:
                frame["choices"][0]["delta"]["content"] = None
        return frames
