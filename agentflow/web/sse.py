"""A Starlette response that streams an agent call as Server-Sent Events.

Works in Starlette and FastAPI (a FastAPI route may return any Starlette
``Response``)::

    @app.post("/extract")
    async def extract(request: Request) -> EventStreamResponse:
        body = await request.json()
        return sse_response(agent, body["text"], Contact)

The frames follow ``agentflow.web.wire`` (one typed JSON event per frame,
with ids). While the call runs, the response listens for the client going
away (``http.disconnect``, or a failed write): the call is then cancelled at
once — its model request is aborted and its ``AgentState`` left exactly as
it was (and, with a store, nothing is saved). ``outcome`` tells afterwards
what happened, and ``on_close`` is awaited with it.

A bad request that fails before the call starts (``UsageError``: no
message, an invalid input) is answered ``400`` with ``{"error": {"type",
"message"}}`` instead of a stream.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Literal

import anyio
import orjson
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agentflow._logging import get_logger
from agentflow.agent import ReActAgent
from agentflow.errors import AgentflowError, UsageError
from agentflow.events import Event
from agentflow.messages import Msg
from agentflow.output.strategies import OutputStrategy
from agentflow.state import AgentState
from agentflow.web.store import StateStore, stream_with_store
from agentflow.web.wire import PING_FRAME, error_to_dict, event_to_dict, sse_frame

__all__ = ["EventStreamResponse", "Outcome", "sse_response"]

_log = get_logger()

Outcome = Literal["pending", "completed", "failed", "disconnected"]

_END = object()


class EventStreamResponse(Response):
    """Streams ``events`` (an ``agent.stream(...)``) as SSE frames.

    Args:
        events: the events; the response owns the iterator (closes it).
        ping_interval: seconds of silence before a ``: ping`` comment (> 0).
        headers: extra response headers.
        on_close: awaited once with the ``outcome`` when the stream is over
            (also after a disconnect).
        background: a Starlette background task, run after the response.

    Attributes:
        outcome: ``"pending"`` until the stream is over, then
            ``"completed"`` (the last frame was ``complete``), ``"failed"``
            (an ``error`` frame or a 400 was sent) or ``"disconnected"``
            (the client went away; the call was cancelled).
        error: the exception of a failed call, if any.

    Raises:
        ValueError: ``ping_interval`` <= 0.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterable[Event],
        *,
        ping_interval: float = 15.0,
        headers: Mapping[str, str] | None = None,
        on_close: Callable[[Outcome], Awaitable[None]] | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        if not ping_interval > 0 or math.isinf(ping_interval):
            raise ValueError(f"ping_interval must be a positive number of seconds, "
                             f"got {ping_interval!r}")
        self.events = events
        self.ping_interval = ping_interval
        self.on_close = on_close
        self.background = background
        self.status_code = 200
        self.outcome: Outcome = "pending"
        self.error: BaseException | None = None
        self.init_headers({
            "cache-control": "no-cache",
            "x-accel-buffering": "no",  # proxies (nginx) must not buffer the stream
            **(headers or {}),
        })

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        send_frames, frames = anyio.create_memory_object_stream[Any](max_buffer_size=16)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._produce, send_frames)
                tg.start_soon(self._watch, receive, tg.cancel_scope)
                try:
                    await self._write(frames, send)
                except OSError:  # the server could not write: the client is gone
                    self.outcome = "disconnected"
                tg.cancel_scope.cancel()
        finally:
            frames.close()
            if self.outcome == "pending":
                self.outcome = "disconnected"
            if self.on_close is not None:
                await self.on_close(self.outcome)
        if self.background is not None and self.outcome != "disconnected":
            await self.background()

    async def _produce(self, out: ObjectSendStream[Any]) -> None:
        """Iterate the events (in this task only) and queue encoded frames;
        an exception is queued as itself, then the end."""
        async with out:
            try:
                async with aclosing(self.events) as events:  # type: ignore[type-var]
                    async for event in events:
                        await out.send(event_to_dict(event))
            except Exception as exc:
                await out.send(exc)
            await out.send(_END)

    async def _watch(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # servers also say so after the end
                if self.outcome == "pending":
                    self.outcome = "disconnected"
                scope.cancel()
                return

    async def _write(self, frames: MemoryObjectReceiveStream[Any], send: Send) -> None:
        """Send the queued frames; what is already queued goes out in one write
        (frames are never held back waiting for more)."""
        event_id = 0
        started = False
        ended = False
        while not ended:
            first: Any = None
            with anyio.move_on_after(self.ping_interval if started else None):
                first = await frames.receive()
            if first is None:  # silence: keep the connection alive
                await send({"type": "http.response.body", "body": PING_FRAME, "more_body": True})
                continue
            batch = [first]
            with contextlib.suppress(anyio.WouldBlock):
                while batch[-1] is not _END and not isinstance(batch[-1], BaseException):
                    batch.append(frames.receive_nowait())
            body: list[bytes] = []
            for item in batch:
                if item is _END:
                    ended = True
                    break
                data = item
                if isinstance(item, BaseException):
                    self.error = item
                    self.outcome = "failed"
                    if not started and not body and isinstance(item, UsageError):
                        await self._refuse(send, item)
                        return
                    if not isinstance(item, AgentflowError):
                        _log.error("web.stream_failed", error_type=type(item).__name__,
                                   exc_info=item)
                    data = error_to_dict(item)
                elif item["type"] == "complete":
                    self.outcome = "completed"
                event_id += 1
                body.append(sse_frame(event_id, data))
            if not started:
                await send({"type": "http.response.start", "status": self.status_code,
                            "headers": self.raw_headers})
                started = True
            if body:
                await send({"type": "http.response.body", "body": b"".join(body),
                            "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _refuse(self, send: Send, error: UsageError) -> None:
        body = orjson.dumps({"error": error_to_dict(error)["error"]})
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def sse_response(
    agent: ReActAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any = None,
    *,
    state: AgentState | None = None,
    strategy: OutputStrategy | None = None,
    store: StateStore | None = None,
    key: str | None = None,
    ping_interval: float = 15.0,
    headers: Mapping[str, str] | None = None,
    on_close: Callable[[Outcome], Awaitable[None]] | None = None,
) -> EventStreamResponse:
    """``agent.stream(msg, output, ...)`` as an ``EventStreamResponse``.

    With ``store`` and ``key`` the call runs on the conversation stored under
    ``key`` and saves it when the call completes (``stream_with_store``: a
    concurrent update ends the stream with a ``StateConflictError`` event;
    a failed or cancelled call saves nothing). Otherwise it runs on
    ``state`` (default: the agent's own).

    Raises:
        ValueError: ``store`` without ``key`` (or the reverse), or with ``state``.
    """
    if (store is None) != (key is None):
        raise ValueError("pass store and key together (the conversation's key in the store)")
    if store is not None and state is not None:
        raise ValueError("pass either state or store/key: the store provides the state")
    events: AsyncIterable[Event]
    if store is not None and key is not None:
        events = stream_with_store(agent, store, key, msg, output, strategy=strategy)
    else:
        events = agent.stream(msg, output, state=state, strategy=strategy)
    return EventStreamResponse(events, ping_interval=ping_interval, headers=headers,
                               on_close=on_close)
