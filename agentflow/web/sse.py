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
"message"}}`` instead of a stream, unless ``ping_interval`` passed first: a
stream silent that long gets its keep-alive comment (``: ping``, which every
SSE parser skips) before its first event too (a resumed approval's tools run
before the call starts), and once that is sent a failure is the stream's
error frame. Any other failure ends the stream with the
encoder's error frame, never silently: an exception from the events (one
that is not agentflow's own is logged and sent as ``InternalError``), and a
``CancelledError`` that nobody asked for (raised by a tool's or middleware's
code while the response was not cancelled), a ``SystemExit`` from the events
(code's ``sys.exit``: one request never stops the server), and a
``KeyboardInterrupt`` (sent, then raised on); events that end without the
call's ``complete`` (an ``events`` iterator that stopped early), and an error
the encoder cannot write, are logged and sent as ``InternalError`` too. A
write that finds the client gone, a keep-alive ping's too, cancels the call
like ``http.disconnect``; nothing is logged as an error then.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing, suppress
from typing import Any, Literal

import anyio
import orjson
from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agentflow._arguments import check_number
from agentflow._commit import stray_cancel
from agentflow._logging import get_logger
from agentflow.agent import ReActAgent
from agentflow.errors import AgentflowError, UsageError
from agentflow.events import Event
from agentflow.messages import Msg
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.state import AgentState
from agentflow.web.encoding import AgentflowEncoder, StreamEncoder
from agentflow.web.store import StateStore, stream_with_store
from agentflow.web.wire import TEXT_EVENT, TextEvent, error_to_dict

__all__ = ["EventStreamResponse", "Outcome", "sse_response"]

_log = get_logger()

Outcome = Literal["pending", "completed", "failed", "disconnected"]


class _ClientGone(Exception):
    """A write failed: the client went away."""


class _EndedEarly(Exception):
    """The events ended without ``complete`` (``events=`` an iterator of the
    app's that stopped early): a failure, never a silent end (not agentflow's
    own: logged, and sent as an internal error)."""


class _Unwritable(Exception):
    """A failure the encoder could not write: sent as an internal error
    (not agentflow's own: its text is not shown)."""


class EventStreamResponse(Response):
    """Streams ``events`` (an ``agent.stream(...)``) as SSE frames.

    Args:
        events: the events; the response owns the iterator (closes it).
        encoder: how events become bytes (default: agentflow's own wire,
            ``AgentflowEncoder``; ``agentflow.web.agui`` / ``agentflow.web.aisdk``
            for the AG-UI and AI SDK protocols). One per response.
        ping_interval: seconds of silence before a ``: ping`` comment (> 0),
            from the start of the response.
        headers: extra response headers.
        on_close: awaited once with the ``outcome`` when the stream is over
            (also after a disconnect).
        background: a Starlette background task, run after the response.

    Attributes:
        outcome: ``"pending"`` until the stream is over, then
            ``"completed"`` (the call ended with ``complete``, even if the
            client left before reading it), ``"failed"``
            (an ``error`` frame or a 400 was sent) or ``"disconnected"``
            (the client went away; the call was cancelled).
        error: the exception of a failed call, if any.

    Raises:
        ArgumentValueError: ``ping_interval`` <= 0 or not finite (a ``ValueError``;
            ``ArgumentTypeError``, a ``TypeError``, for one that is no number).
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterable[Event],
        *,
        encoder: StreamEncoder | None = None,
        ping_interval: float = 15.0,
        headers: Mapping[str, str] | None = None,
        on_close: Callable[[Outcome], Awaitable[None]] | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        check_number("ping_interval", ping_interval, "a number of seconds > 0",
                     lambda seconds: seconds > 0)
        self.events = events
        self.encoder: StreamEncoder = encoder if encoder is not None else AgentflowEncoder()
        self.media_type = self.encoder.media_type
        self.ping_interval = ping_interval
        self.on_close = on_close
        self.background = background
        self.status_code = 200
        self.outcome: Outcome = "pending"
        self.error: BaseException | None = None
        self.init_headers({
            "cache-control": "no-cache",
            "x-accel-buffering": "no",  # proxies (nginx) must not buffer the stream
            **self.encoder.headers,
            **(headers or {}),
        })

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._send = send
        self._lock = anyio.Lock(fast_acquire=True)  # the pinger and the events share `send`
        self._started = False
        self._last_write = anyio.current_time()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch, receive, tg.cancel_scope)
                tg.start_soon(self._ping, tg.cancel_scope)
                try:
                    await self._stream()
                except _ClientGone:
                    if self.outcome == "pending":
                        self.outcome = "disconnected"
                tg.cancel_scope.cancel()
        finally:
            if self.outcome == "pending":
                self.outcome = "disconnected"
            if self.on_close is not None:
                await self.on_close(self.outcome)
        if self.background is not None and self.outcome != "disconnected":
            await self.background()

    async def _stream(self) -> None:
        """Iterate the events (the response owns and closes the iterator) and
        send one frame each; a failure becomes the last frame (or a 400)."""
        encode = self.encoder.encode
        try:
            async with aclosing(self.events) as events:  # type: ignore[type-var]
                async for event in events:
                    if event.type == "complete":  # the call ended (and was saved)
                        self.outcome = "completed"
                    frame = encode(event)
                    if frame:
                        await self._write(frame)
        except _ClientGone:
            raise
        except Exception as exc:
            if isinstance(exc, UsageError) and await self._refused(exc):
                return
            await self._fail(exc)
        except asyncio.CancelledError as exc:  # the call's cancellation, or code's own?
            if not stray_cancel(exc):
                raise
            await self._fail(exc)  # raised by code, not asked for: a failure, never a silent end
        except SystemExit as exc:  # code's sys.exit: this stream's failure, never the server's
            await self._fail(exc)
        except KeyboardInterrupt as exc:  # never swallowed, never a stream cut without its end
            with suppress(_ClientGone):  # (the client gone too: the interrupt goes on all the same)
                await self._fail(exc)
                await self._write(self.encoder.end(), more=False)
            raise
        else:
            if self.outcome == "pending":  # the events ended before the call did
                await self._fail(_EndedEarly(
                    "the events ended without the call's complete event (an events iterator "
                    "that stopped early)"))
        await self._write(self.encoder.end(), more=False)

    async def _fail(self, error: BaseException) -> None:
        """Record ``error`` and send the encoder's failure frame(s); an error
        that is not agentflow's own goes to the server's log."""
        self.error = error
        self.outcome = "failed"
        if not isinstance(error, AgentflowError):
            _log.error("web.stream_failed", error_type=type(error).__name__, exc_info=error)
        try:
            frame = self.encoder.failure(error)
        except Exception as unwritten:  # never a silent end: the error frame of an internal one
            _log.error("web.error_frame_failed", error_type=type(error).__name__,
                       exc_info=unwritten)
            frame = self.encoder.failure(_Unwritable())
        await self._write(frame)

    async def _write(self, body: bytes, *, more: bool = True) -> None:
        async with self._lock:
            try:
                if not self._started:
                    await self._send({"type": "http.response.start", "status": self.status_code,
                                      "headers": self.raw_headers})
                    self._started = True
                await self._send({"type": "http.response.body", "body": body,
                                  "more_body": more})
            except OSError as exc:  # the server could not write: the client is gone
                raise _ClientGone from exc
            self._last_write = anyio.current_time()

    async def _ping(self, scope: anyio.CancelScope) -> None:
        """A comment frame whenever the stream was silent for ``ping_interval``,
        before the first event too (a resumed approval runs its tools before
        the call starts: a proxy's idle timeout cut a response silent that
        long; the first ping sends the 200, so a refusal after it is the
        stream's error frame, not a 400); a ping that cannot be written means
        the client is gone: the call is cancelled as on ``http.disconnect``."""
        while True:
            wait = self._last_write + self.ping_interval - anyio.current_time()
            if wait > 0:
                await anyio.sleep(wait)
                continue
            try:
                await self._write(self.encoder.ping)
            except _ClientGone:
                if self.outcome == "pending":
                    self.outcome = "disconnected"
                scope.cancel()
                return

    async def _watch(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # servers also say so after the end
                if self.outcome == "pending":
                    self.outcome = "disconnected"
                scope.cancel()
                return

    async def _refused(self, error: UsageError) -> bool:
        """Whether ``error`` was answered as a ``400`` (the response had not
        begun): under the lock the pinger writes under, so a ping whose write
        is under way (its ``200`` sent) makes it the stream's error frame,
        never a second response start."""
        async with self._lock:
            if self._started:
                return False
            self._started = True
            self.error, self.outcome = error, "failed"
            body = orjson.dumps({"error": error_to_dict(error)["error"]})
            await self._send({"type": "http.response.start", "status": 400,
                              "headers": [(b"content-type", b"application/json"),
                                          (b"content-length", str(len(body)).encode())]})
            await self._send({"type": "http.response.body", "body": body, "more_body": False})
        return True


def sse_response(
    agent: ReActAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any = None,
    *,
    state: AgentState | None = None,
    strategy: OutputStrategy | StrategyName | None = None,
    store: StateStore | None = None,
    key: str | None = None,
    ping_interval: float = 15.0,
    headers: Mapping[str, str] | None = None,
    on_close: Callable[[Outcome], Awaitable[None]] | None = None,
    text_event: TextEvent = TEXT_EVENT,
) -> EventStreamResponse:
    """``agent.stream(msg, output, ...)`` as an ``EventStreamResponse``.

    With ``store`` and ``key`` the call runs on the conversation stored under
    ``key`` and saves it when the call completes (``stream_with_store``: a
    concurrent update ends the stream with a ``StateConflictError`` event;
    a failed or cancelled call saves nothing). Otherwise it runs on
    ``state`` (default: an empty conversation, dropped after the call). A call
    whose output could not be had ends with an ``error`` frame naming its
    ``StructuredOutputError`` (``agent.stream`` raises it), never a
    ``complete`` frame without the output. ``text_event``: the reply text's
    event name, ``text_chunk``, or 0.1.0's ``reasoning_chunk`` for a client
    not yet moved (``AgentflowEncoder``).

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
    return EventStreamResponse(events, encoder=AgentflowEncoder(text_event=text_event),
                               ping_interval=ping_interval, headers=headers,
                               on_close=on_close)
