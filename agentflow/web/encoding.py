"""How a stream of ``agentflow.events`` becomes bytes on the wire.

``EventStreamResponse`` writes what a ``StreamEncoder`` makes of each event:
``AgentflowEncoder`` is agentflow's own SSE wire (``agentflow.web.wire``);
``agentflow.web.agui.AGUIEncoder`` and ``agentflow.web.aisdk.UIMessageEncoder``
speak the AG-UI and the Vercel AI SDK UI message stream protocols. An
encoder holds the state of one stream (ids, open messages): make one per
response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from agentflow.events import Event, ReasoningChunk
from agentflow.web.wire import (
    PING_FRAME,
    TEXT_EVENT,
    TextEvent,
    error_to_dict,
    event_to_dict,
    sse_frame,
)

__all__ = ["AgentflowEncoder", "StreamEncoder"]


class StreamEncoder(Protocol):
    """One stream's encoder.

    Attributes:
        media_type: the response's ``Content-Type``.
        headers: extra response headers the protocol asks for.
        ping: the keep-alive bytes sent while the stream is idle.
    """

    media_type: str
    headers: Mapping[str, str]
    ping: bytes

    def encode(self, event: Event) -> bytes:
        """The bytes for ``event`` (may be empty, or several frames)."""
        ...

    def failure(self, error: BaseException) -> bytes:
        """The bytes that end a failed call (``error`` is never sent raw
        unless it is one of agentflow's own errors)."""
        ...

    def end(self) -> bytes:
        """The bytes after the last event or the failure."""
        ...


class AgentflowEncoder:
    """agentflow's own SSE wire (``agentflow.web.wire``): one frame per event,
    ids from 1.

    Args:
        text_event: the reply text's event name: ``text_chunk`` (default),
            or ``reasoning_chunk``, its name in agentflow 0.1.0, for a client
            not yet moved (``agentflow.web.wire``).
    """

    media_type = "text/event-stream"
    headers: Mapping[str, str] = {}
    ping = PING_FRAME

    def __init__(self, *, text_event: TextEvent = TEXT_EVENT) -> None:
        self._id = 0
        self.text_event = text_event

    def encode(self, event: Event) -> bytes:
        self._id += 1
        data = event_to_dict(event)
        if isinstance(event, ReasoningChunk):
            data["type"] = self.text_event
        return sse_frame(self._id, data)

    def failure(self, error: BaseException) -> bytes:
        self._id += 1
        return sse_frame(self._id, error_to_dict(error))

    def end(self) -> bytes:
        return b""
