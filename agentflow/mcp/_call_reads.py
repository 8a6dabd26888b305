"""How long an MCP server's HTTP responses may go without a byte: the
target's ``read_timeout`` for the requests no tool call makes, and as long as
the call for a tool call's (its own timeout; ``None``: no limit), over both
HTTP transports.

* Streamable HTTP answers each call on its own response: that request's read
  timeout is the call's (``call_reads`` in the caller's context, read by the
  transport: ``follow_call``).
* The legacy HTTP+SSE transport answers every call on the session's one SSE
  stream, opened before any call. The SDK (``mcp.client.sse.sse_client``)
  fixes that stream's read timeout when the session opens
  (``sse_read_timeout``, 300 s), and httpcore reads a response's read timeout
  once, when its body starts. So the stream is opened with none, and
  ``limited_stream`` bounds each wait for its next bytes itself, by a limit
  that follows the calls (``CallWaits``): the target's ``read_timeout`` while
  no call waits, the longest waiting call's timeout past it, none while a
  call with no limit waits. A stream that passes it fails as it did under the SDK's own
  timeout (``httpx2.ReadTimeout``: the connection is lost).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import Any

import anyio

__all__ = ["READ_TIMEOUT", "CallWaits", "call_reads", "follow_call", "limited_stream",
           "unlimited_reads"]

READ_TIMEOUT = 300.0
"""Seconds an HTTP response may go without a byte, by default, for the
requests no tool call makes (``initialize``, ``tools/list``, the notification
stream; over the legacy transport, the SSE stream while no call waits): the
SDK's own default."""

_CALL_READS: ContextVar[tuple[float | None] | None] = ContextVar("agentflow_mcp_call_reads",
                                                                 default=None)
"""The timeout of the tool call under way in this context (``call_reads``), as a 1-tuple."""


class CallWaits:
    """The timeouts of the tool calls waiting on one target's server (``None``:
    no limit), and the waits of its SSE stream for its next bytes, whose
    deadlines follow them: a call that starts or ends while the stream waits
    moves that wait's deadline (counted from its start)."""

    __slots__ = ("_limits", "_reads", "read_timeout")

    def __init__(self, read_timeout: float) -> None:
        self.read_timeout = read_timeout
        self._limits: list[float | None] = []
        self._reads: dict[anyio.CancelScope, float] = {}  # a wait's scope -> its start

    def limit(self) -> float | None:
        """Seconds the stream may now go without a byte (``None``: no limit)."""
        if any(limit is None for limit in self._limits):
            return None
        return max([self.read_timeout, *(limit for limit in self._limits if limit is not None)])

    def _retime(self) -> None:
        limit = self.limit()
        for scope, start in self._reads.items():
            scope.deadline = float("inf") if limit is None else start + limit

    @contextlib.contextmanager
    def waiting(self, limit: float | None) -> Iterator[None]:
        """A call with timeout ``limit`` waits within the block."""
        self._limits.append(limit)
        self._retime()
        try:
            yield
        finally:
            self._limits.remove(limit)
            self._retime()

    @contextlib.contextmanager
    def reading(self) -> Iterator[anyio.CancelScope]:
        """A wait for the stream's next bytes, within the block's scope, which
        is cancelled once the stream has gone ``limit()`` seconds without one."""
        with anyio.CancelScope() as scope:
            self._reads[scope] = anyio.current_time()
            self._retime()
            try:
                yield scope
            finally:
                del self._reads[scope]


@contextlib.contextmanager
def call_reads(limit: float | None, waits: CallWaits | None = None) -> Iterator[None]:
    """Within the block, the tool call under way in this context waits for its
    answer as long as ``limit`` seconds (``None``: with no limit), never less
    than the target's ``read_timeout``: its streamable HTTP requests (the SDK
    sends them with the caller's context, ``follow_call``), and the legacy
    transport's SSE stream (``waits``: the target's ``CallWaits``). The
    client's one read timeout (300 s) failed a call made with ``timeout=None``,
    or over 300 s, whose tool sent nothing for 5 minutes."""
    token = _CALL_READS.set((limit,))
    try:
        with waits.waiting(limit) if waits is not None else contextlib.nullcontext():
            yield
    finally:
        _CALL_READS.reset(token)


def follow_call(request: Any) -> None:
    """Set ``request``'s read timeout to the tool call's under way (``call_reads``)."""
    if (call := _CALL_READS.get()) is None:
        return
    timeouts = dict(request.extensions.get("timeout") or {})
    limit, read = call[0], timeouts.get("read")
    timeouts["read"] = None if limit is None or read is None else max(limit, read)
    request.extensions["timeout"] = timeouts


def limited_stream(request: Any, response: Any, waits: CallWaits) -> None:
    """Bound each wait for ``response``'s next bytes (the SSE stream, sent with
    no read timeout: ``unlimited_reads``) by ``waits.limit()``, as it moves
    while the wait lasts; past it, ``httpx2.ReadTimeout``."""
    import httpx2

    inner = response.stream

    class _Limited(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            chunks = inner.__aiter__()
            while True:
                with waits.reading() as scope:
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        return
                if scope.cancelled_caught:
                    raise httpx2.ReadTimeout(f"no byte on the SSE stream for {waits.limit()} s",
                                             request=request)
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    response.stream = _Limited()


def unlimited_reads(request: Any) -> None:
    """Send ``request`` (the SSE stream's GET) with no read timeout of
    httpcore's (``limited_stream`` bounds its reads)."""
    timeouts = dict(request.extensions.get("timeout") or {})
    timeouts["read"] = None
    request.extensions["timeout"] = timeouts
