"""The calls half of ``MCPServer`` (the base of ``_server_tools.ServerTools``,
itself the base of ``MCPServer``): ``call_tool`` over the open session, with
its timeout, and the SDK's ``MCPError`` as agentflow's error for it
(``MCPTimeoutError``, ``MCPConnectionError``, ``MCPStatusError`` for an HTTP
error status, ``ToolError``); a call on a lost connection reconnects first
(``MCPServer._reconnect``), a request the server refused for an expired
session is sent again on a new one (``_request``), and over HTTP a request
whose own connection was cut while the session answers a ping fails alone
(``_only_cut``). The arguments are made JSON first (``sendable``): the
SDK writes every request of the session in one task, and a value it cannot
write ended that task, and with it the session and every other call waiting
on it. The class holds no state of its own, only the methods, over the
attributes ``MCPServer`` sets."""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
from mcp import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError as SDKError
from mcp_types import CONNECTION_CLOSED, INVALID_REQUEST, REQUEST_TIMEOUT
from pydantic_core import to_jsonable_python

from agentflow._arguments import check_function, check_number
from agentflow._clean_text import clean_data
from agentflow._secrets import mask_secrets
from agentflow.errors import (
    InvalidInputError,
    MCPConnectionError,
    MCPStatusError,
    MCPTimeoutError,
    ToolError,
)
from agentflow.mcp._call_reads import call_reads
from agentflow.mcp._results import MCPToolResult, read_result
from agentflow.mcp._transports import HTTP_STATUS, HTTPTarget, Target
from agentflow.tools import Tool
from agentflow.tools.progress import Reporter, reporter

__all__ = ["InFlight", "Progress", "ServerCalls", "sendable"]


class _Default:
    def __repr__(self) -> str:
        return "<the server's timeout>"


_DEFAULT = _Default()
_T = TypeVar("_T")
_EXPIRED = "the server no longer knows the session (it restarted or ended it)"
_OVER_LIMIT = re.compile(r"exceeded the (\d+) byte limit")
"""The SDK's reason for a streamable HTTP response whose SSE event was over its
``max_sse_event_size`` (httpx2's ``SSEError``: "Server-sent event exceeded the
N byte limit.")."""
_GENERIC_CLOSE = frozenset({"", "Connection closed"})
"""The SDK's reasons for a closed connection that say no more than that."""
_PING_LIMIT = 5.0
"""Seconds a ping may take to show that the session outlived a cut request (``_only_cut``)."""


_STATUS_MEANS = {401: "its credentials were refused: a missing or expired token",
                 403: "its credentials may not do this", 429: "rate limited",
                 500: "the server, or a gateway before it, failed"}
"""What an HTTP status a server answered says, for ``MCPStatusError``'s message
(a 5xx by its hundred)."""


def _http_status(exc: SDKError) -> dict[str, Any] | None:
    """The HTTP status ``_transports``' status transport put in the error's data."""
    data = exc.error.data
    status = data.get(HTTP_STATUS) if isinstance(data, dict) else None
    return status if isinstance(status, dict) and isinstance(status.get("status"), int) else None


def _seconds(value: Any) -> float | None:
    """A ``Retry-After`` of seconds, or ``None`` (an HTTP date, or none)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _said(exc: SDKError) -> str:
    """`` (the SDK: <its reason>)`` for a closed connection whose reason says
    more than that (an SSE stream that ended without a response), else ``""``."""
    reason = exc.error.message.strip()
    return "" if reason in _GENERIC_CLOSE else f" (the SDK: {mask_secrets(reason)})"


def sendable(server: str, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arguments`` as the JSON a ``tools/call`` carries: read as the SDK's
    serializer reads them (pydantic's JSON mode: a set as a list, a date as
    ISO text), every lone UTF-16 surrogate (half an emoji, from a client's
    ``"\\ud83d"``) replaced by U+FFFD (``clean_data``). The SDK wrote such a
    string only in the session's one writer task, whose ``UnicodeEncodeError``
    ended the session: every call waiting on it, other users' too, failed with
    ``MCPConnectionError``.

    Raises:
        InvalidInputError: a value JSON cannot carry (an object of no JSON
            kind, bytes that are not UTF-8), naming its place; nothing is sent.
    """
    data = dict(arguments or {})
    try:
        plain = to_jsonable_python(data)
    except ValueError as exc:  # PydanticSerializationError, UnicodeDecodeError
        raise InvalidInputError(
            f"MCP server {server!r}: tool {tool!r}: {_unsendable(data) or 'arguments'} cannot "
            f"be sent as JSON ({mask_secrets(str(exc))}); nothing was sent") from None
    return dict(clean_data(plain))


def _unsendable(value: Any, path: str = "") -> str | None:
    """The place (``arguments.a[2]``) of the first value in ``value`` that
    ``to_jsonable_python`` refuses, or ``None``."""
    items: Any = (value.items() if isinstance(value, Mapping)
                  else enumerate(value) if isinstance(value, list | tuple) else None)
    if items is None:
        try:
            to_jsonable_python(value)
        except ValueError:
            return f"arguments{path}" if path else "arguments"
        return None
    for key, item in items:
        place = f"{path}.{key}" if isinstance(value, Mapping) else f"{path}[{key}]"
        if (found := _unsendable(item, place)) is not None:
            return found
    return None


Progress = ProgressFnT
"""``async (progress, total, message) -> None``: ``call_tool``'s ``progress``."""


def _passed_on(report: Reporter) -> Progress:
    """A ``progress`` callback that passes a server's notifications on to the
    tool run's reporter (``agentflow.tools.progress``)."""

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        report(progress, total, message)

    return progress


class InFlight:
    """How many requests wait on each session, and a wait until one has none."""

    def __init__(self) -> None:
        self._counts: weakref.WeakKeyDictionary[ClientSession, int] = weakref.WeakKeyDictionary()
        self._drained: weakref.WeakKeyDictionary[ClientSession, anyio.Event] = (
            weakref.WeakKeyDictionary())

    @contextmanager
    def on(self, session: ClientSession) -> Iterator[None]:
        """Count a request on ``session`` while it waits."""
        self._counts[session] = self._counts.get(session, 0) + 1
        try:
            yield
        finally:
            self._counts[session] -= 1
            if not self._counts[session] and (drained := self._drained.pop(session, None)):
                drained.set()

    async def drained(self, session: ClientSession, limit: float) -> None:
        """Return once no request waits on ``session``, or after ``limit`` seconds."""
        if self._counts.get(session):
            with anyio.move_on_after(limit):
                await self._drained.setdefault(session, anyio.Event()).wait()


class ServerCalls:
    """The calls half of ``MCPServer`` (see the module docstring); its
    attributes are the server's."""

    name: str
    target: Target
    timeout: float | None
    connect_timeout: float
    _session: ClientSession | None
    _lost: str | None
    _expired: weakref.WeakSet[ClientSession]  # the sessions an HTTP 404 answered
    _in_flight: InFlight
    reconnect: bool
    current_tools: Callable[[], Sequence[Tool]]  # ServerTools': raises when not running
    _reconnect: Callable[[], Awaitable[ClientSession]]  # MCPServer's

    async def _call_for_agent(self, name: str, arguments: dict[str, Any]) -> MCPToolResult:
        report = reporter()  # (a streamed call's tool run: its progress is read)
        return await self.call_tool(name, arguments,
                                    progress=None if report is None else _passed_on(report))

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | _Default | None = _DEFAULT,  # noqa: ASYNC109
                        progress: Progress | None = None,
                        ) -> MCPToolResult:
        """Call the server's tool ``name`` (its own name, not prefixed).

        Args:
            timeout: seconds (``None``: no limit); default: the server's.
                Over HTTP the call's response (streamable HTTP), or the SSE
                stream it comes on (the legacy transport), may go that long
                without a byte (``None``: for ever), past the target's
                ``read_timeout`` (300 s) that bounds the other requests
                (``agentflow.mcp._call_reads``).
            progress: awaited with ``(progress, total, message)`` for each
                ``notifications/progress`` the server sends about the call
                (the request carries a ``progressToken`` then, as the MCP
                spec's Progress section has it; ``None``: none is asked for).
                An agent's streamed call passes its tools' progress on as
                ``ToolProgress`` events.

        Returns:
            The result, ``is_error`` set when the server said the tool failed.

        Raises:
            MCPTimeoutError: no result within the timeout (the SDK sends the
                server a cancellation).
            MCPConnectionError: the connection was lost (the server exited,
                the endpoint went away): the next call reconnects first; or,
                over HTTP, only this call's connection was cut (the session
                answered a ping and is kept): it may or may not have run.
            MCPReconnectError: the connection had been lost and could not be
                opened again (the process did not start, the URL did not answer).
            ToolError: the server answered with a JSON-RPC error (an unknown
                tool, invalid arguments), or a result that does not fit the
                tool's output schema.
            InvalidInputError: ``arguments`` hold a value JSON cannot carry
                (``sendable``); nothing was sent.
            MCPNotRunningError: the server is not running.
            ArgumentTypeError / ArgumentValueError: ``timeout`` is not a
                number of seconds > 0 or ``None``, or ``progress`` not a
                function or ``None`` (as the constructor's; nothing is sent).
        """
        if not isinstance(timeout, _Default):
            check_number("timeout", timeout, "a number of seconds > 0", lambda v: v > 0,
                         optional=True)
        check_function("progress", progress, optional=True)
        limit = self.timeout if isinstance(timeout, _Default) else timeout
        sent = sendable(self.name, name, arguments)

        async def call(session: ClientSession) -> Any:
            try:  # (None to the SDK is its session's timeout, the connect_timeout: inf is none)
                return await session.call_tool(
                    name, sent, read_timeout_seconds=math.inf if limit is None else limit,
                    progress_callback=progress)
            except RuntimeError as exc:  # the SDK's check of structuredContent against outputSchema
                raise ToolError(f"MCP server {self.name!r}: tool {name!r} returned an invalid "
                                f"result: {mask_secrets(str(exc))}") from exc

        try:
            waits = self.target.call_waits if isinstance(self.target, HTTPTarget) else None
            with call_reads(limit, waits):  # (its HTTP response, or SSE stream, may be that slow)
                raw = await self._request(call, f"tool {name!r}", limit)
        except MCPTimeoutError as error:
            error.tool = name
            raise
        return read_result(raw)

    async def _request(self, request: Callable[[ClientSession], Awaitable[_T]], what: str,
                       limit: float | None = None) -> _T:
        """``request`` on the open session (reconnected first if its connection
        was lost). A server that answers that it no longer knows the session
        (an HTTP 404 to its id: it expired it, or restarted) gets a new
        session and the request once more (the MCP spec, Session Management:
        "the client MUST start a new session by sending a new
        InitializeRequest"; the server refused the request, so it runs once).
        The other requests waiting on the expired session get their own
        answers before it is closed (``MCPServer._reconnect``): each is sent
        again only if it too was refused.

        Raises:
            MCPTimeoutError / MCPConnectionError / ToolError: as ``_error``
                (a second 404, on the new session, too).
            MCPReconnectError: a new session could not be opened.
            MCPNotRunningError: the server is not running.
        """
        session = await self._session_for_call()
        try:
            with self._in_flight.on(session):
                return await request(session)
        except SDKError as exc:
            refused = exc.error.code == INVALID_REQUEST and session in self._expired
            if not (refused and self.reconnect):
                cut = await self._only_cut(exc, session)
                raise self._error(exc, what, limit, session, cut=cut) from exc
            if session is self._session:  # (else another call has opened a new one)
                self._lost = self._lost or _EXPIRED
        session = await self._session_for_call()
        try:
            with self._in_flight.on(session):
                return await request(session)
        except SDKError as exc:
            cut = await self._only_cut(exc, session)
            raise self._error(exc, what, limit, session, cut=cut) from exc

    async def _only_cut(self, exc: SDKError, session: ClientSession) -> bool:
        """Whether a request's closed connection (``CONNECTION_CLOSED``) over
        HTTP lost that request only: its response stream was cut (a proxy's
        idle timeout, a network blip) while the server and the session live
        on, as a ``ping`` on the session answered within ``_PING_LIMIT``
        seconds says. Then the session is kept: a reconnection would have
        closed it under the other calls still waiting on it, other users'
        too. Over stdio a closed connection is the process gone."""
        if (exc.error.code != CONNECTION_CLOSED or self.target.kind == "stdio"
                or _OVER_LIMIT.search(exc.error.message)
                or session is not self._session or self._lost is not None):
            return False
        with anyio.move_on_after(min(_PING_LIMIT, self.connect_timeout)):
            try:
                await session.send_ping()
            except SDKError:
                return False
            return True
        return False

    async def _session_for_call(self) -> ClientSession:
        """The open session, reconnected first if its connection was lost.

        Raises:
            MCPNotRunningError: the server is not running.
            MCPReconnectError / MCPConnectionError: as ``_reconnect``.
        """
        if self._session is not None and self._lost is None:
            return self._session
        self.current_tools()  # raises MCPNotRunningError when stopped
        return await self._reconnect()

    def _running(self) -> ClientSession:
        """The open session.

        Raises:
            MCPNotRunningError: the server is not running.
            MCPConnectionError: its connection was lost.
        """
        if self._session is None:
            self.current_tools()  # raises MCPNotRunningError when stopped
            target = self.target.describe()
            raise MCPConnectionError(
                f"MCP server {self.name!r} ({target}) lost its connection: "
                f"{self._lost or 'the session ended'}", server=self.name, target=target)
        return self._session

    def _error(self, exc: SDKError, what: str, limit: float | None = None,
               session: ClientSession | None = None, *, opening: bool = False,
               cut: bool = False) -> Exception:
        """An SDK ``MCPError`` as agentflow's error for it (``session``: the
        one that met it, marked lost if it is still the open one, unless
        only the request's connection was ``cut``: ``_only_cut``).

        A lost connection's message says what follows: during a call or a
        later ``tools/list`` (a refresh), the next call reconnects first
        (with ``reconnect``; a reconnection lists the tools again); while the
        session is being opened (``opening``: ``initialize`` and the first
        ``tools/list``, in ``start`` or a reconnection), nothing more: the
        error fails that ``start`` (``MCPServerStartError``) or reconnection
        (``MCPReconnectError``), which say so themselves."""
        target = self.target.describe()
        code = exc.error.code
        current = session is None or session is self._session
        if code == CONNECTION_CLOSED and (over := _OVER_LIMIT.search(exc.error.message)):
            return ToolError(
                f"MCP server {self.name!r}: {what} answered with a message over the "
                f"{int(over[1]):,} bytes its transport reads in one event, so the result is "
                "lost though the tool ran (raise the limit: MCPServer.http(..., "
                "max_result_bytes=...))")
        if cut:
            return MCPConnectionError(
                f"MCP server {self.name!r} ({target}): the connection carrying {what} was cut "
                "before its result came, so it may or may not have run; the server and the "
                f"session are still up (they answered a ping), and the other calls go on"
                f"{_said(exc)}", server=self.name, target=target)
        if code == REQUEST_TIMEOUT:
            return MCPTimeoutError(
                f"MCP server {self.name!r} ({target}): {what} gave no result within "
                f"{limit if limit is not None else self.connect_timeout:g} s; the server was "
                "asked to cancel it", server=self.name, target=target, tool="",
                timeout=limit if limit is not None else self.connect_timeout)
        expired = code == INVALID_REQUEST and (session or self._session) in self._expired
        if code == CONNECTION_CLOSED or expired:
            closed = code == CONNECTION_CLOSED
            why = "the server process exited or the endpoint went away" if closed else _EXPIRED
            if current:
                self._lost = self._lost or why
            then = "; the next call reconnects" if self.reconnect and not opening else ""
            return MCPConnectionError(
                f"MCP server {self.name!r} ({target}) "
                f"{'closed the connection' if closed else 'lost its session'} during {what}: "
                f"{why}{then}{_said(exc)}", server=self.name, target=target)
        if (status := _http_status(exc)) is not None:
            number = int(status["status"])
            reason = f" {status['reason']}" if status.get("reason") else ""
            means = _STATUS_MEANS.get(number) or _STATUS_MEANS.get(number // 100 * 100)
            return MCPStatusError(
                f"MCP server {self.name!r} ({target}) answered {what} with HTTP {number}{reason}"
                f"{f' ({means})' if means else ''}: {mask_secrets(exc.error.message)}",
                server=self.name, target=target, status=number,
                retry_after=_seconds(status.get("retry_after")))
        return ToolError(f"MCP server {self.name!r} answered {what} with error {code}: "
                         f"{mask_secrets(exc.error.message)}")
