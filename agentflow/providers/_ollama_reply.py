"""Reading an Ollama ``/api/chat`` reply (used by ``providers.ollama``): NDJSON
lines while streaming, one object otherwise, folded into chunks
(shared/providers.md §6; docs/api.md).

Tool calls arrive whole in one line; the last line has ``done: true``,
``done_reason`` (``stop`` for tool calls too) and the token counts. An error
after the 200 is a line ``{"error": "..."}``. A ``done_reason`` of
``load`` or ``unload`` means nothing was generated (``NOT_GENERATED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentflow.errors import BadRequestError
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
from agentflow.providers._ollama_errors import VENDOR, payload_error
from agentflow.providers._payload import counted

__all__ = ["Reader"]

_DONE: dict[str, FinishReason] = {"stop": "stop", "length": "length"}

NOT_GENERATED = frozenset({"load", "unload"})
"""``done_reason``s of a reply that generated nothing: Ollama only loaded (or
unloaded, ``keep_alive: 0``) the model, as it answers a request with no
messages, or none it can prompt from (no user turn: can1357/oh-my-pi#7465,
ollama/ollama#8395). Read as a clean empty stop, every retry got the same
empty reply; the same request always does, so it is a ``BadRequestError``."""


class Reader:
    """Folds ``/api/chat`` reply objects (NDJSON lines or a whole reply) into chunks."""

    def __init__(self) -> None:
        self.calls = 0
        self.done = False

    def feed(self, data: Any) -> Iterable[ModelChunk]:
        """The chunks of one reply object; ``done`` once its ``done`` line is read.

        Raises:
            TypeError: ``data`` is not a JSON object.
            ProviderError: an ``{"error": ...}`` object (``payload_error``).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a {type(data).__name__}, not a JSON object")
        if data.get("error"):
            raise payload_error(str(data["error"]))
        message = data.get("message") or {}
        if message.get("thinking"):
            yield ThinkingDelta(message["thinking"])
        if message.get("content"):
            yield TextDelta(message["content"])
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            args = function.get("arguments")
            yield ToolCallDelta(
                self.calls, id=call.get("id") or None, name=function.get("name"),
                arguments_obj=args if isinstance(args, Mapping) else None,
                arguments=args if isinstance(args, str) else "",
            )
            self.calls += 1
        if data.get("done"):
            self.done = True
            yield UsageChunk(counted(Usage(input_tokens=int(data.get("prompt_eval_count") or 0),
                                           output_tokens=int(data.get("eval_count") or 0))))
            raw = data.get("done_reason") or ""  # "": none given (older servers)
            if raw in NOT_GENERATED:
                raise BadRequestError(
                    f"Ollama generated nothing (done_reason {raw!r}): it only "
                    f"{raw}ed the model, as it answers a request with no message it "
                    "can prompt from (no user turn)", status=200, code=raw, vendor=VENDOR)
            reason = _DONE.get(raw or "stop", "other")
            model = data.get("model")
            yield FinishChunk("tool_calls" if reason == "stop" and self.calls else reason, raw,
                              model if isinstance(model, str) and model else None)

