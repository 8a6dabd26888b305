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
"""

from __future__ import annotations

import math
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
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from agentflow._logging import get_logger
from agentflow._secrets import mask_secrets
from agentflow.errors import (
    MCPConnectionError,
    MCPNotRunningError,
    MCPServerStartError,
    MCPTimeoutError,
    MCPToolSchemaError,
    ToolDefinitionError,
    ToolError,
    ToolNameError,
    UsageError,
)
from agentflow.mcp._declare import agent_tool_name, declare_tool
from agentflow.mcp._results import MCPToolResult, read_result
from agentflow.mcp._transports import HTTPTarget, StdioTarget, Target, stdio_target
from agentflow.output.reminders import TOOL_NAME
from agentflow.tools import TOOL_NAME_PATTERN, Tool

__all__ = ["MCPServer"]

_log = get_logger()

_MAX_PAGES = 1000
"""``tools/list`` pages read at most (a server whose cursor never ends cannot hang a start)."""


class _Default:
    def __repr__(self) -> str:
        return "<the server's timeout>"


_DEFAULT = _Default()


class MCPServer:
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
        self.skipped: dict[str, str] = {}
        """Tools left out for their schemas (``on_invalid_schema="skip"``): name -> why."""
        self._group: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()
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
        have been lost since: ``lost`` says so, and calls then fail with
        ``MCPConnectionError``)."""
        return self._group is not None

    @property
    def lost(self) -> str | None:
        """Why the connection was lost while running (``None``: it was not)."""
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
        self._stop = anyio.Event()
        group = anyio.create_task_group()
        await group.__aenter__()
        try:
            await group.start(self._serve)
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

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """The session's task: open, initialize, list, then wait for ``aclose``.
        Never raises but a cancellation: a failure before it is ready is kept
        for ``start``, one after it marks the server ``lost``."""
        ready = False
        try:
            async with AsyncExitStack() as stack:
                read, write = await self.target.open(stack)
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
                await self._stop.wait()
        except Exception as raised:
            exc = _leaf(raised)
            if not ready:
                self._failure = exc
            elif self._stop.is_set():  # while closing (a server that died: no DELETE answered)
                _log.debug("mcp.close_failed", server=self.name, error=_reason(exc))
            else:
                self._lost = _reason(exc)
                _log.warning("mcp.connection_lost", server=self.name,
                             target=self.target.describe(), error=self._lost)
        finally:
            self._session = None
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

    # ------------------------------------------------------------------ tools

    @property
    def source_name(self) -> str:
        """``ToolSource``: the server's name."""
        return self.name

    @property
    def tools_ready(self) -> bool:
        """``ToolSource``: whether the server is running (its connection may be
        lost: its tools then answer with ``MCPConnectionError``)."""
        return self._group is not None

    @property
    def tools_revision(self) -> int:
        """``ToolSource``: grows with each listing of the tools."""
        return self._revision

    def current_tools(self) -> Sequence[Tool]:
        """``ToolSource``: the server's tools as agent ``Tool``s, filtered and
        prefixed, as last listed.

        Raises:
            MCPNotRunningError: the server is not running.
        """
        if self._group is None:
            raise MCPNotRunningError(
                f"MCP server {self.name!r} ({self.target.describe()}) is not running: use "
                "its tools inside `async with server:`")
        return self._tools

    @property
    def tools(self) -> list[Tool]:
        """The tools as last listed (``current_tools``)."""
        return list(self.current_tools())

    async def refresh_tools(self) -> None:
        """``ToolSource``: list the tools again if the server said they
        changed since the last listing.

        Raises:
            MCPConnectionError: the server went away.
            MCPToolSchemaError / ToolNameError: a new tool cannot be declared.
        """
        if not self._stale or self._session is None:
            return
        async with self._lock:
            if self._stale:
                self._stale = False
                try:
                    await self._list(first=False)
                except BaseException:
                    self._stale = True
                    raise

    async def list_tools(self) -> list[Tool]:
        """List the tools now (whether or not the server said they changed)."""
        async with self._lock:
            self._stale = False
            await self._list(first=False)
        return list(self._tools)

    async def _list(self, first: bool) -> None:
        session = self._running()
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            try:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            except SDKError as exc:
                raise self._error(exc, "tools/list") from exc
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self._tools = self._declare(listed, first)
        self._revision += 1

    def _declare(self, listed: list[Any], first: bool) -> list[Tool]:
        names = [t.name for t in listed]
        if first and self.include is not None and (missing := self.include - set(names)):
            raise ToolDefinitionError(
                f"MCP server {self.name!r} has no tool {', '.join(sorted(map(repr, missing)))} "
                f"(include=...); it lists: {', '.join(names) or 'none'}")
        tools: list[Tool] = []
        seen: dict[str, str] = {}
        skipped: dict[str, str] = {}
        for mcp_tool in listed:
            remote = mcp_tool.name
            if (self.include is not None and remote not in self.include) or remote in self.exclude:
                continue
            name = agent_tool_name(remote, self.prefix)
            if name == TOOL_NAME:
                raise ToolNameError(
                    f"MCP server {self.name!r}: its tool {remote!r} would be called {TOOL_NAME!r}, "
                    "the name reserved for structured output; give the server a prefix "
                    "(prefix=...) or leave the tool out (exclude=[...])")
            if name in seen:
                raise ToolNameError(
                    f"MCP server {self.name!r}: its tools {seen[name]!r} and {remote!r} both "
                    f"become {name!r}")
            try:
                tools.append(declare_tool(self.name, mcp_tool, name, self._call_for_agent,
                                          self.max_retries))
            except MCPToolSchemaError as exc:
                if self.on_invalid_schema == "raise":
                    raise
                skipped[remote] = str(exc)
                _log.warning("mcp.tool_skipped", server=self.name, tool=remote, reason=str(exc))
                continue
            seen[name] = remote
        self.skipped = skipped
        return tools

    # ------------------------------------------------------------------ calls

    async def _call_for_agent(self, name: str, arguments: dict[str, Any]) -> MCPToolResult:
        return await self.call_tool(name, arguments)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | _Default | None = _DEFAULT,  # noqa: ASYNC109
                        ) -> MCPToolResult:
        """Call the server's tool ``name`` (its own name, not prefixed).

        Args:
            timeout: seconds (``None``: no limit); default: the server's.

        Returns:
            The result, ``is_error`` set when the server said the tool failed.

        Raises:
            MCPTimeoutError: no result within the timeout (the SDK sends the
                server a cancellation).
            MCPConnectionError: the connection was lost (the server exited).
            ToolError: the server answered with a JSON-RPC error (an unknown
                tool, invalid arguments), or a result that does not fit the
                tool's output schema.
            MCPNotRunningError: the server is not running.
        """
        session = self._running()
        limit = self.timeout if isinstance(timeout, _Default) else timeout
        try:
            raw = await session.call_tool(name, dict(arguments or {}), read_timeout_seconds=limit)
        except SDKError as exc:
            error = self._error(exc, f"tool {name!r}", limit)
            if isinstance(error, MCPTimeoutError):
                error.tool = name
            raise error from exc
        except RuntimeError as exc:  # the SDK's check of structuredContent against outputSchema
            raise ToolError(f"MCP server {self.name!r}: tool {name!r} returned an invalid "
                            f"result: {mask_secrets(str(exc))}") from exc
        return read_result(raw)

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

    def _error(self, exc: SDKError, what: str, limit: float | None = None) -> Exception:
        """An SDK ``MCPError`` as agentflow's error for it."""
        target = self.target.describe()
        code = exc.error.code
        if code == REQUEST_TIMEOUT:
            return MCPTimeoutError(
                f"MCP server {self.name!r} ({target}): {what} gave no result within "
                f"{limit if limit is not None else self.connect_timeout:g} s; the server was "
                "asked to cancel it", server=self.name, target=target, tool="",
                timeout=limit if limit is not None else self.connect_timeout)
        if code == CONNECTION_CLOSED:
            self._lost = self._lost or ("the server closed the connection (its process exited "
                                        "or the endpoint went away)")
            return MCPConnectionError(
                f"MCP server {self.name!r} ({target}) closed the connection during {what}: the "
                "server process exited or the endpoint went away", server=self.name,
                target=target)
        return ToolError(f"MCP server {self.name!r} answered {what} with error {code}: "
                         f"{mask_secrets(exc.error.message)}")


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
