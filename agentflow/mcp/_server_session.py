"""The session half of ``MCPServer`` (its base, over ``_server_tools.ServerTools``
and ``_server_calls.ServerCalls``): the lifecycle of the server's one
session over the official SDK's ``ClientSession``.

``start`` (``async with server:``, entered and left in one task, as every
anyio resource is): start the process or connect, ``initialize``,
``tools/list`` (every page), in a task of its own (``_serve``), so that a
transport that fails marks the server ``lost`` and never cancels the caller;
on ``notifications/tools/list_changed`` mark the list stale
(``_on_message``); ``aclose`` closes the session and the transport, also when
cancelled (the SDK's stdio transport closes stdin, then sends SIGTERM and
SIGKILL to the server's process group, each wait bounded; the HTTP
transport ends the session with a DELETE and closes its connections).

A lost connection (the process exited, the endpoint went away) fails the
call that met it (``MCPConnectionError``, a tool error the model reads); the
next call reconnects first, once (``_reconnect``), or raises
``MCPReconnectError``. A session the server no longer knows (an HTTP 404 to
its id: it expired it, or restarted) is started anew and the request sent
again, once, within the same call (``ServerCalls._request``: the spec's
"the client MUST start a new session"; the server refused the request, so
it runs once); a session that expires during ``start``'s own ``tools/list``
is started anew once too (``_serve``), the listing begun again on it.

The class holds no state of its own, only the methods, over the attributes
``MCPServer`` sets.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError as SDKError

from agentflow._logging import get_logger
from agentflow._secrets import mask_secrets
from agentflow.errors import (
    MCPConnectionError,
    MCPReconnectError,
    MCPServerStartError,
    ToolDefinitionError,
    UsageError,
)
from agentflow.mcp._listing import checked_streams
from agentflow.mcp._server_tools import ServerTools

__all__ = ["ServerSession"]

_log = get_logger()

_EXPIRED_AT_START = "the server ended the session during its first tools/list"


class ServerSession(ServerTools):
    """The session half of ``MCPServer`` (see the module docstring); its
    attributes are the server's."""

    reconnects: int
    _group: anyio.abc.TaskGroup | None
    _stop: anyio.Event
    _closed: anyio.Event
    _reconnecting: anyio.Lock
    _failure: Exception | None
    _entered: int
    _owner: int | None

    @property
    def running(self) -> bool:
        """Whether the server is started and not closed (its connection may
        have been lost since: ``lost`` says so, and the next call reconnects)."""
        return self._group is not None

    @property
    def lost(self) -> str | None:
        """Why the connection was lost while running (``None``: it was not, or
        it was reconnected since)."""
        return self._lost

    async def start(self) -> None:
        """Start (or connect to) the server and list its tools; prefer
        ``async with server:``. ``aclose`` must be awaited in the same task.

        The session lives in a task of its own (in a task group entered here):
        a transport that fails (the server exits, a connection breaks) ends
        that task and marks the server ``lost``, never cancelling the caller.

        Raises:
            MCPServerStartError: the process could not start, the URL could
                not be reached, or ``initialize``/``tools/list`` failed or took
                longer than ``connect_timeout``; names the command or URL.
            MCPToolSchemaError / ToolNameError / ToolDefinitionError: a tool
                cannot be declared (a schema, a name collision, an unknown
                ``include`` name); the server is closed first.
            UsageError: the server is already running.
        """
        if self._group is not None:
            raise UsageError(f"MCP server {self.name!r} is already running (use one "
                             "`async with server:`; nested ones share the running server)")
        self._lost = None
        self._failure = None
        group = anyio.create_task_group()
        await group.__aenter__()
        try:
            await self._connect(group)
        except BaseException as exc:
            self._stop.set()
            await group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        if self._failure is not None:  # the session task ended before it was ready
            failure, self._failure, self._lost = self._failure, None, None
            await group.__aexit__(None, None, None)
            if isinstance(failure, ToolDefinitionError):
                raise failure
            raise MCPServerStartError(
                f"MCP server {self.name!r} could not start over {self.target.kind} "
                f"({self.target.describe()}): {_reason(failure)}",
                server=self.name, target=self.target.describe()) from failure
        self._group = group
        _log.debug("mcp.started", server=self.name, tools=len(self._tools))

    async def _connect(self, group: anyio.abc.TaskGroup) -> None:
        """Start a session task in ``group`` (its own stop and closed events);
        a failure is left in ``_failure``."""
        self._stop, self._closed = anyio.Event(), anyio.Event()
        await group.start(self._serve, self._stop, self._closed)

    async def _reconnect(self) -> ClientSession:
        """The session, opened anew after a lost connection (once, whichever
        of several concurrent calls comes first): the old session is closed,
        then the server started or connected to again.

        Raises:
            MCPReconnectError: it could not start, connect or initialize.
            MCPConnectionError: ``reconnect=False``.
        """
        async with self._reconnecting:
            if self._session is not None and self._lost is None:
                return self._session  # another call reconnected it
            lost = self._lost or "the session ended"
            target = self.target.describe()
            if not self.reconnect or self._group is None:
                raise MCPConnectionError(f"MCP server {self.name!r} ({target}) lost its "
                                         f"connection: {lost}", server=self.name, target=target)
            old = self._session
            if old is not None and old in self._expired:  # (its waiting requests answered
                await self._in_flight.drained(old, self.connect_timeout)  # first: ServerCalls)
            self._stop.set()
            await self._closed.wait()
            self._lost, self._failure = None, None
            await self._connect(self._group)
            failure, session = self._failure, self._session
            if failure is not None or session is None:  # (None: it ended as soon as it began)
                why = _reason(failure) if failure is not None else self._lost or "it ended"
                self._failure, self._lost = None, lost  # the next call tries again
                raise MCPReconnectError(
                    f"MCP server {self.name!r} lost its connection ({lost}) and could not "
                    f"reconnect over {self.target.kind} ({target}): {why}",
                    server=self.name, target=target, lost=lost) from failure
            self.reconnects += 1
            _log.info("mcp.reconnected", server=self.name, target=target, lost=lost)
            return session

    async def _serve(self, stop: anyio.Event, closed: anyio.Event, *,
                     task_status: anyio.abc.TaskStatus[None]) -> None:
        """A session's task: open, initialize, list, then wait for ``stop``
        (``aclose``, or a reconnection); ``closed`` is set once it is closed.
        Never raises but a cancellation: a failure before it is ready is kept
        for ``start``, one after it marks the server ``lost``."""

        session: ClientSession | None = None

        def expired() -> None:  # an HTTP 404 to this session's id
            if session is not None:
                self._expired.add(session)

        def version() -> str | None:  # the session's protocol version, once negotiated
            return session.protocol_version if session is not None else None

        ready = False
        try:
            for anew in (True, False):
                async with AsyncExitStack() as stack:
                    opened_read, opened_write = await self.target.open(stack, expired)
                    read, write = checked_streams(opened_read, opened_write, version,
                                                  self._drop_invalid)
                    session = await stack.enter_async_context(ClientSession(
                        read, write, read_timeout_seconds=self.connect_timeout,
                        message_handler=self._on_message,
                        client_info=types.Implementation(name="agentflow", version=_version())))
                    try:
                        await session.initialize()
                    except SDKError as refused:
                        raise self._error(refused, "initialize", self.connect_timeout,
                                          opening=True) from refused
                    self._session = session
                    self._stale = False
                    try:
                        await self._list(first=True)
                    except MCPConnectionError:
                        if not (anew and self.reconnect and session in self._expired):
                            raise
                        # (the new session expired before it was ready: started anew, once,
                        # as a later expiry is; the SDK's DELETE of it is answered 404)
                        self._session, self._lost = None, None
                        self.reconnects += 1
                        _log.info("mcp.reconnected", server=self.name, lost=_EXPIRED_AT_START)
                        continue
                    ready = True
                    task_status.started()
                    await stop.wait()
                    break
        except Exception as raised:
            exc = _leaf(raised)
            if not ready:
                self._failure = exc
            elif stop.is_set():  # while closing (a server that died: no DELETE answered)
                _log.debug("mcp.close_failed", server=self.name, error=_reason(exc))
            else:
                self._lost = _reason(exc)
                _log.warning("mcp.connection_lost", server=self.name,
                             target=self.target.describe(), error=self._lost)
        finally:
            self._session = None
            closed.set()
            if not ready:
                task_status.started()

    async def aclose(self) -> None:
        """Close the session and stop the server (the SDK's transports shield
        their shutdown from cancellation and bound each wait). Idempotent."""
        group, self._group = self._group, None
        self._entered, self._owner = 0, None
        if group is not None:
            self._stop.set()
            await group.__aexit__(None, None, None)
        self._session = None

    async def _on_message(self, message: Any) -> None:
        """The session's message handler: a tool-list change marks the list stale."""
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, Exception):
            _log.debug("mcp.transport_error", server=self.name, error=_reason(message))


def _leaf(exc: Exception) -> Exception:
    """The exception itself, out of the groups the transports' task groups
    wrap it in (the first one that is not a cancellation)."""
    while isinstance(exc, ExceptionGroup) and exc.exceptions:
        cancelled = anyio.get_cancelled_exc_class()
        exc = next((e for e in exc.exceptions if not isinstance(e, cancelled)), exc.exceptions[0])
    return exc


def _reason(exc: BaseException) -> str:
    """One line naming what went wrong (the first of an exception group's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, SDKError):
        return mask_secrets(f"{exc.error.message} (MCP error {exc.error.code})")
    text = str(exc) or "no message"
    return mask_secrets(f"{type(exc).__name__}: {text}")



def _version() -> str:
    from agentflow._version import __version__

    return __version__
