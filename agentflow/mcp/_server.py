"""``MCPServer``: one MCP server's tools as an agent's tool source, over the
official SDK's ``ClientSession``.

Lifecycle (``async with server:``, entered and left in one task, as every
anyio resource is): start the process or connect, ``initialize``,
``tools/list`` (every page); declare the tools; on
``notifications/tools/list_changed`` mark the list stale, and list again
before the agent's next model request (``refresh_tools``); on exit close the
session and the transport, also when cancelled (the SDK's stdio
transport closes stdin, then sends SIGTERM and SIGKILL to the server's
process group, each wait bounded; the HTTP transport ends the session with a
DELETE and closes its connections).

A lost connection (the process exited, the endpoint went away) fails the
call that met it (``MCPConnectionError``, a tool error the model reads); the
next call reconnects first, once (``_reconnect``), or raises
``MCPReconnectError``. A session the server no longer knows (an HTTP 404 to
its id: it expired it, or restarted) is started anew and the request sent
again, once, within the same call (``ServerCalls._request``: the spec's
"the client MUST start a new session"; the server refused the request, so
it runs once).

This module holds the server's configuration, constructors and lifecycle;
its two halves are its bases: ``_server_tools.ServerTools`` (the
``ToolSource`` protocol, listing and declaring the tools), over
``_server_calls.ServerCalls`` (``call_tool`` and the SDK's errors as
agentflow's).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

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
    ToolNameError,
    UsageError,
)
from agentflow.mcp._server_tools import ServerTools
from agentflow.mcp._transports import HTTPTarget, StdioTarget, Target, stdio_target
from agentflow.tools import TOOL_NAME_PATTERN, Tool

__all__ = ["MCPServer"]

_log = get_logger()


class MCPServer(ServerTools):
    """An MCP server whose tools an agent may call, beside Python tools::

        server = MCPServer.stdio("python", ["server.py"], prefix="files")
        async with server:
            agent = ReActAgent("a", model, tools=[server, my_function])
            reply = await agent.call("...", Invoice)

    Build one with ``stdio``, ``http`` (streamable HTTP) or ``sse`` (the
    legacy HTTP+SSE transport). It is a ``ToolSource``: the agent reads its
    tools as they are at each model request, so a server's
    ``notifications/tools/list_changed`` reaches the next request. Several
    agents (and concurrent calls) may share one running server: calls are
    multiplexed over its one session.

    Args:
        target: where the server runs (``stdio``/``http``/``sse`` make it).
        name: the server's name in errors and logs (default: the script's or
            command's stem, or the URL's host).
        prefix: put before every tool name (``prefix_name``), so that two
            servers' tools, or a server's and the agent's own, cannot collide.
        include: only these tools (the server's names); a name the server
            does not list is an error at start.
        exclude: leave these tools out (the server's names).
        timeout: seconds a tool call may take before it fails with
            ``MCPTimeoutError`` (the model reads it as an error result);
            ``None``: no limit. Default 60.
        connect_timeout: seconds each start-up request (``initialize``,
            ``tools/list``) may take. Default 30.
        on_invalid_schema: a tool whose input schema cannot be sent to a
            model (``MCPToolSchemaError``): ``"raise"`` (default) or
            ``"skip"`` it (logged, and kept in ``skipped``).
        max_retries: each tool's ``Tool.max_retries`` (``None``: the agent's
            ``tool_retries``).
        reconnect: whether a call after a lost connection reconnects first
            (default); ``False``: every later call fails with
            ``MCPConnectionError``.

    Raises (at construction):
        ToolNameError: ``prefix`` is not a valid start of a tool name.
        ValueError: a timeout is not positive.
    """

    def __init__(
        self,
        target: Target,
        *,
        name: str | None = None,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        timeout: float | None = 60.0,
        connect_timeout: float = 30.0,
        on_invalid_schema: Literal["raise", "skip"] = "raise",
        max_retries: int | None = None,
        reconnect: bool = True,
    ) -> None:
        if prefix is not None and not TOOL_NAME_PATTERN.fullmatch(f"{prefix}_x"):
            raise ToolNameError(f"invalid tool prefix {prefix!r}: a prefix must start with a "
                                "letter or '_' and hold only ASCII letters, digits, '_' and '-'")
        for label, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{label} must be a positive number of seconds, got {value!r}")
        if on_invalid_schema not in ("raise", "skip"):
            raise ValueError(
                f"on_invalid_schema must be 'raise' or 'skip', got {on_invalid_schema!r}")
        if isinstance(include, str) or isinstance(exclude, str):
            raise TypeError("include and exclude take lists of tool names, not a string")
        self.target = target
        self.name = name or _default_name(target)
        self.prefix = prefix
        self.include = frozenset(include) if include is not None else None
        self.exclude = frozenset(exclude)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.on_invalid_schema = on_invalid_schema
        self.max_retries = max_retries
        self.reconnect = reconnect
        self.reconnects = 0
        """How many times a lost connection was reconnected."""
        self.skipped: dict[str, str] = {}
        """Tools left out for their schemas (``on_invalid_schema="skip"``): name -> why."""
        self._group: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()
        self._closed = anyio.Event()
        self._expired: weakref.WeakSet[ClientSession] = weakref.WeakSet()
        """The sessions whose id the server answered with HTTP 404."""
        self._retired: weakref.WeakSet[ClientSession] = weakref.WeakSet()
        """The sessions closed by a reconnection (their waiting requests fail)."""
        self._reconnecting = anyio.Lock()
        self._failure: Exception | None = None
        self._lost: str | None = None
        self._session: ClientSession | None = None
        self._entered = 0
        self._tools: list[Tool] = []
        self._revision = 0
        self._stale = False
        self._lock = anyio.Lock()

    # ------------------------------------------------------------------ constructors

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        stderr: TextIO | None = None,
        **options: Any,
    ) -> MCPServer:
        """A server started as ``command args...`` and spoken to over its
        stdin/stdout. ``env`` is added to the SDK's safe default environment
        (``HOME``, ``PATH``, ``USER``...; nothing else of this process's);
        the server's stderr goes to ``stderr`` (default ``sys.stderr``).
        ``options``: as the constructor."""
        return cls(stdio_target(command, args, env, cwd, stderr), **options)

    @classmethod
    def http(cls, url: str, *, headers: Mapping[str, str] | None = None,
             **options: Any) -> MCPServer:
        """A server at ``url`` over streamable HTTP (the MCP endpoint, e.g.
        ``http://127.0.0.1:8000/mcp``); ``headers`` go with every request.
        ``options``: as the constructor."""
        return cls(HTTPTarget(url, headers), **options)

    @classmethod
    def sse(cls, url: str, *, headers: Mapping[str, str] | None = None,
            **options: Any) -> MCPServer:
        """A server at ``url`` over the legacy HTTP+SSE transport (the SSE
        endpoint, e.g. ``http://127.0.0.1:8000/sse``; deprecated by the MCP
        spec since 2025-03-26, kept by the SDK for older servers)."""
        return cls(HTTPTarget(url, headers, sse=True), **options)

    def __repr__(self) -> str:
        state = ("stopped" if self._group is None else "running" if self._lost is None
                 else "connection lost")
        return (f"MCPServer(name={self.name!r}, {self.target.kind} {self.target.describe()!r}, "
                f"{state})")

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> MCPServer:
        if self._entered == 0:
            await self.start()
        self._entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._entered = max(0, self._entered - 1)
        if self._entered == 0:
            await self.aclose()

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
            if self._session is not None:
                self._retired.add(self._session)
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

        ready = False
        try:
            async with AsyncExitStack() as stack:
                read, write = await self.target.open(stack, expired)
                session = await stack.enter_async_context(ClientSession(
                    read, write, read_timeout_seconds=self.connect_timeout,
                    message_handler=self._on_message,
                    client_info=types.Implementation(name="agentflow", version=_version())))
                try:
                    await session.initialize()
                except SDKError as refused:
                    raise self._error(refused, "initialize", self.connect_timeout) from refused
                self._session = session
                self._stale = False
                await self._list(first=True)
                ready = True
                task_status.started()
                await stop.wait()
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
        self._entered = 0
        if group is not None:
            self._stop.set()
            await group.__aexit__(None, None, None)
        self._session = None

    async def _on_message(self, message: Any) -> None:
        """The session's message handler: a tool-list change marks the list stale."""
        if isinstance(message, types.ToolListChangedNotification):
            self._stale = True
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


def _default_name(target: Target) -> str:
    """The script's stem (``server`` for ``python server.py``), else the
    command's name (``npx``); a URL's host."""
    if isinstance(target, StdioTarget):
        script = next((a for a in target.args if not a.startswith("-")
                       and Path(a).suffix in (".py", ".js", ".mjs", ".cjs", ".ts")), None)
        return Path(script).stem if script else Path(target.command).name
    return urlsplit(target.url).hostname or "mcp"


def _version() -> str:
    from agentflow._version import __version__

    return __version__
