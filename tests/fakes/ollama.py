"""A fake Ollama server (``POST /api/chat``) on 127.0.0.1.

Speaks the wire protocol of shared/providers.md §6: NDJSON streaming (the
default: ``stream`` absent means true), one JSON object per line with
``message`` deltas, tool calls whole in one line with object arguments and
no id, a final line with ``done: true``, ``done_reason`` (``stop`` for tool
calls too), ``prompt_eval_count`` / ``eval_count`` and durations in ns;
errors are ``{"error": "..."}``, and after the 200 status an error is such a
line. Unknown fields (``tool_choice``) are ignored, as Go decoding does.

Refuses what the real server refuses: ``tools`` for a model without the
tools capability (400 "registry.ollama.ai/library/<model> does not support
tools"), ``think: true`` for a model that cannot think, tool-call arguments
sent back as a string (C10: 400 "Value looks like object, but can't find
closing '}' symbol"), an unknown model (404), and a message's ``images``
that are not base64 ("illegal base64 data at input byte N", Go's decoder),
not PNG/JPEG ("image: unknown format"), or sent to a model without vision
("this model is missing data required for image input").

A ``format`` schema holds the reply to it as the real server's grammar does:
the model can call no tool then (ollama/ollama#8095: an empty ``tool_calls``),
so a scripted reply's tool calls are dropped from a request carrying both
``format`` and ``tools``.

``FakeReply.extra`` keys: ``done_reason``, ``error`` (a message sent as an
error line after ``error_after`` lines), ``with_ids`` (give tool calls ids),
``string_arguments`` (send arguments as a JSON string, as some proxies do).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from aiohttp import web

from . import media
from .base import FakeError, FakeReply, FakeServer, pieces

__all__ = ["OllamaFake", "ollama_error"]


def _grammar_bound(body: Any) -> bool:
    """Whether a ``format`` schema constrains the reply so that no tool call can be written."""
    return isinstance(body.get("format"), dict)


def ollama_error(status: int, message: str) -> FakeError:
    """A scripted error in Ollama's envelope."""
    return FakeError(status, {"error": message})


class OllamaFake(FakeServer):
    """The fake.

    Args:
        no_tools: models without the tools capability.
        thinking: models that can think.
        known: if given, the only models installed (others get 404).
        vision: models that take images.
        num_ctx: the server's context window (``OLLAMA_CONTEXT_LENGTH``; a
            request's ``options.num_ctx`` overrides it). A longer prompt
            (4 characters a token) is cut silently, as Ollama does: its
            ``prompt_eval_count`` is the window's, and ``cut_prompts`` counts it.
    """

    routes = ("/api/chat",)
    vendor = "ollama"

    def __init__(self, *, no_tools: frozenset[str] = frozenset({"gemma3:1b"}),
                 thinking: frozenset[str] = frozenset({"qwen3:8b"}),
                 known: frozenset[str] | None = None,
                 vision: frozenset[str] = frozenset({"llava:7b", "gemma3:4b", "qwen2.5vl:7b"}),
                 num_ctx: int = 4096) -> None:
        super().__init__()
        self.num_ctx = num_ctx
        self.cut_prompts = 0
        self.vision = vision
        self.no_tools = no_tools
        self.thinking = thinking
        self.known = known

    def key_error(self, key: str) -> FakeError:
        return ollama_error(401, f"unauthorized: invalid key {key} ({key[:12]}...)")

    def is_stream(self, request: web.Request, body: Any) -> bool:
        return bool(body.get("stream", True)) if isinstance(body, dict) else True

    def stream_content_type(self) -> str:
        return "application/x-ndjson"

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        if not isinstance(body, dict) or "model" not in body:
            return ollama_error(400, "model is required")
        model = body["model"]
        if self.known is not None and model not in self.known:
            return ollama_error(404, f'model "{model}" not found, try pulling it first')
        if body.get("tools") and model in self.no_tools:
            return ollama_error(400, f"registry.ollama.ai/library/{model} does not support tools")
        if body.get("think") is True and model not in self.thinking:
            return ollama_error(400, f'"{model}" does not support thinking')
        for message in body.get("messages", []):
            if message.get("role") not in ("system", "user", "assistant", "tool"):
                return ollama_error(400, f"invalid role: {message.get('role')}")
            for call in message.get("tool_calls") or []:
                if not isinstance((call.get("function") or {}).get("arguments"), dict):
                    return ollama_error(400, "Value looks like object, but can't find closing "
                                        "'}' symbol")
            for image in message.get("images") or []:
                data = media.decode(image)
                if data is None:
                    bad = next((i for i, c in enumerate(str(image)) if not (
                        c.isalnum() or c in "+/=")), 0)
                    return ollama_error(400, f"illegal base64 data at input byte {bad}")
                if media.kind_of(data) not in ("image/png", "image/jpeg"):
                    return ollama_error(400, "image: unknown format")
                if model not in self.vision:
                    return ollama_error(500, "this model is missing data required for image "
                                        "input")
        return None

    # -- replies -------------------------------------------------------------
    def _calls(self, reply: FakeReply) -> list[dict[str, Any]]:
        calls = []
        for i, call in enumerate(reply.tool_calls):
            args: Any = call.arguments
            if reply.extra.get("string_arguments") and not isinstance(args, str):
                args = orjson.dumps(args).decode()
            item: dict[str, Any] = {"function": {"index": i, "name": call.name,
                                                 "arguments": args}}
            if reply.extra.get("with_ids") or call.id:
                item["id"] = call.id or f"call_{i}"
            calls.append(item)
        return calls

    def _prompt_tokens(self, reply: FakeReply, body: Any) -> int:
        """The prompt's tokens as evaluated: cut to the window when longer."""
        window = int((body.get("options") or {}).get("num_ctx") or self.num_ctx)
        chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        if chars // 4 > window:
            self.cut_prompts += 1
            return window
        return reply.usage[0]

    @staticmethod
    def _counted(final: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
        """``final`` without its counts when ``no_usage`` (Ollama leaves
        ``prompt_eval_count`` out when the prompt was served from its cache)."""
        if reply.extra.get("no_usage"):
            final.pop("prompt_eval_count", None)
            final.pop("eval_count", None)
        return final

    def _final(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        return {"model": body["model"], "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": ""}, "done": True,
                "done_reason": reply.extra.get("done_reason") or reply.finish_reason or "stop",
                "total_duration": 1_000_000, "load_duration": 1000,
                "prompt_eval_count": self._prompt_tokens(reply, body),
                "prompt_eval_duration": 1000,
                "eval_count": reply.usage[1], "eval_duration": 1000}

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        final = self._counted(self._final(reply, body), reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.thinking and body.get("think") is not False and body["model"] in self.thinking:
            message["thinking"] = reply.thinking
        if reply.tool_calls and not _grammar_bound(body):
            message["tool_calls"] = self._calls(reply)
        return {**final, "message": message}

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        lines = [orjson.dumps(line) + b"\n" for line in self._lines(reply, body)]
        if reply.extra.get("error") is not None:
            at = int(reply.extra.get("error_after", 1))
            lines = [*lines[:at], orjson.dumps({"error": reply.extra["error"]}) + b"\n"]
        return lines

    def _lines(self, reply: FakeReply, body: Any) -> Iterator[dict[str, Any]]:
        def line(**message: Any) -> dict[str, Any]:
            return {"model": body["model"], "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": "", **message}, "done": False}

        if reply.thinking and body.get("think") is not False and body["model"] in self.thinking:
            for piece in pieces(reply.thinking, reply.chunk_size):
                yield line(thinking=piece)
        if reply.text:
            for piece in pieces(reply.text, reply.chunk_size):
                yield line(content=piece)
        if reply.tool_calls and not _grammar_bound(body):
            yield line(tool_calls=self._calls(reply))
        yield self._counted(self._final(reply, body), reply)

    # -- request inspectors (for tests) --------------------------------------
    @staticmethod
    def tool_names(body: Any) -> list[str]:
        """Names of the tools the request declares."""
        return [t["function"]["name"] for t in body.get("tools", [])]

    @staticmethod
    def forced_tool(body: Any) -> str | None:
        """The tool an emulated forcing names: Ollama has no tool_choice, so a
        forced turn offers one tool and ends with a system message naming it."""
        names = OllamaFake.tool_names(body)
        last = (body.get("messages") or [{}])[-1]
        if len(names) == 1 and last.get("role") == "system" and f"`{names[0]}`" in str(
            last.get("content")
        ):
            return names[0]
        return None

    @staticmethod
    def request_text(body: Any) -> str:
        """All message contents of the request."""
        return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))

    @staticmethod
    def has_native_output(body: Any) -> bool:
        """Whether the request asks for ``format`` output."""
        return "format" in body

    @staticmethod
    def rate_limited(retry_after: float = 0) -> FakeError:
        """A 429 as Ollama cloud sends it (Retry-After undocumented; sent here)."""
        error = ollama_error(429, "too many requests")
        return FakeError(error.status, error.body, {"Retry-After": f"{retry_after:g}"})
