"""``MCPServer``: one MCP server's tools as an agent's tool source, over the
official SDK's ``ClientSession``.

This module holds the server's configuration, constructors and ``async
with``; its halves are its bases: ``_server_session.ServerSession`` (the
session's lifecycle: start, reconnect, close), over
``_server_tools.ServerTools`` (the ``ToolSource`` protocol, listing and
declaring the tools), over ``_server_calls.ServerCalls`` (``call_tool`` and
the SDK's errors as agentflow's).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import anyio
import anyio.abc
from mcp import ClientSession

from agentflow._arguments import (
    check_choice,
    check_flag,
    check_int,
    check_list,
    check_number,
)
from agentflow.errors import ToolNameError, UsageError
from agentflow.mcp._server_calls import InFlight
from agentflow.mcp._server_session import ServerSession
from agentflow.mcp._server_tools import REFRESH_BACKOFF
from agentflow.mcp._transports import (
    MAX_RESULT_BYTES,
    HTTPTarget,
    StdioTarget,
    Target,
    stdio_target,
)
from agentflow.tools import TOOL_NAME_PATTERN, Tool

__all__ = ["MCPServer"]


class MCPServer(ServerSession):
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
            ``None``: no limit (over HTTP too: a call's response, or the
            legacy transport's SSE stream while it waits, may go that long
            without a byte, past ``HTTPTarget.read_timeout``).
            Default 60.
        connect_timeout: seconds each start-up request (``initialize``,
            ``tools/list``) may take. Default 30.
        on_invalid_schema: a tool whose input schema cannot be sent to a
            model (``MCPToolSchemaError``) at start: ``"raise"`` (default) or
            ``"skip"`` it (logged, and kept in ``skipped``). One the running
            server adds later is skipped so, as is one it names as the output
            tool or as another of its tools.
        max_retries: each tool's ``Tool.max_retries`` (``None``: the agent's
            ``tool_retries``).
        reconnect: whether a call after a lost connection reconnects first
            (default); ``False``: every later call fails with
            ``MCPConnectionError``.

    Raises (at construction):
        ToolNameError: ``prefix`` is not a valid start of a tool name.
        ArgumentTypeError / ArgumentValueError: (a ``TypeError`` /
            ``ValueError``) an argument of the wrong type (``include="add"``,
            ``timeout="5"``) or value (a timeout not positive; an unknown
            ``on_invalid_schema``), naming it (``agentflow._arguments``).
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
        check_number("timeout", timeout, "a number of seconds > 0", _positive, optional=True)
        check_number("connect_timeout", connect_timeout, "a number of seconds > 0", _positive)
        check_choice("on_invalid_schema", on_invalid_schema, ("raise", "skip"))
        if include is not None:
            check_list("include", include, "tool names")
        check_list("exclude", exclude, "tool names")
        check_int("max_retries", max_retries, 0, optional=True)
        check_flag("reconnect", reconnect)
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
        """How many times a lost connection (or an expired session) was opened anew."""
        self.skipped: dict[str, str] = {}
        """Tools left out for their schemas (``on_invalid_schema="skip"``): name -> why."""
        self._group: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()
        self._closed = anyio.Event()
        self._expired: weakref.WeakSet[ClientSession] = weakref.WeakSet()
        """The sessions whose id the server answered with HTTP 404."""
        self._in_flight = InFlight()
        self._reconnecting = anyio.Lock()
        self._failure: Exception | None = None
        self._lost: str | None = None
        self._session: ClientSession | None = None
        self._entered = 0
        self._owner: int | None = None
        """The id of the task whose ``async with`` started the server (it owns its task group)."""
        self._tools: list[Tool] = []
        self._revision = 0
        self._stale = False
        self._lock = anyio.Lock()
        self._refresh_failures = 0  # (``refresh_tools``: waiters take a failure's outcome)
        self._clock: Callable[[], float] = anyio.current_time
        """The clock of ``refresh_tools``'s backoff (a test sets one it advances)."""
        self._retry_at = -math.inf
        """``_clock`` time before which a failed listing is not tried again."""
        self._backoff = REFRESH_BACKOFF[0]
        """The wait after the next failed listing."""
        self._failed_at = -math.inf
        """``_clock`` time of the last failed listing."""
        self._invalid: dict[str, str] = {}
        """The tools of the listing under way the protocol's ``Tool`` refuses (``_listing``)."""

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
             max_result_bytes: int | None = MAX_RESULT_BYTES, transport: Any = None,
             **options: Any) -> MCPServer:
        """A server at ``url`` over streamable HTTP (the MCP endpoint, e.g.
        ``http://127.0.0.1:8000/mcp``); ``headers`` go with every request.
        ``max_result_bytes``: the largest result (one SSE event) the server
        may send, default 32 MiB (``None``: no limit); a larger one fails its
        call with a ``ToolError`` naming the limit. ``transport``: the
        ``httpx2.AsyncBaseTransport`` the requests go through (default: a new
        ``httpx2.AsyncHTTPTransport()`` per session; ``HTTPTarget``).
        ``options``: as the constructor.

        Raises:
            ArgumentTypeError / ArgumentValueError: ``max_result_bytes`` is
                not an int >= 1 or None.
        """
        check_int("max_result_bytes", max_result_bytes, 1, optional=True)
        return cls(HTTPTarget(url, headers, max_result_bytes=max_result_bytes,
                              transport=transport), **options)

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

    async def __aenter__(self) -> MCPServer:
        """Start the server, or share it when this task's ``async with``
        already did (nested ones).

        Raises:
            UsageError: another task's ``async with`` started it (or is
                starting it): its task group is that task's, and the exit
                that closed it from here failed with anyio's ``RuntimeError``
                ("a cancel scope that isn't the current task's") after a
                second process or session had been started.
            as ``start``.
        """
        me = anyio.get_current_task().id
        if self._owner is not None and self._owner != me:
            raise UsageError(
                f"MCP server {self.name!r} is running (or starting) in another task's "
                "`async with`: enter it once where the app starts (a web app's lifespan, the "
                "script's main) and let every task and agent use it; nested `async with` "
                "blocks in that task share it")
        if self._entered == 0:
            self._owner = me
            try:
                await self.start()
            except BaseException:
                self._owner = None
                raise
        self._entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._entered = max(0, self._entered - 1)
        if self._entered == 0:
            await self.aclose()


def _positive(value: float) -> bool:
    return value > 0


def _default_name(target: Target) -> str:
    """The script's stem (``server`` for ``python server.py``), else the
    command's name (``npx``); a URL's host."""
    if isinstance(target, StdioTarget):
        script = next((a for a in target.args if not a.startswith("-")
                       and Path(a).suffix in (".py", ".js", ".mjs", ".cjs", ".ts")), None)
        return Path(script).stem if script else Path(target.command).name
    return urlsplit(target.url).hostname or "mcp"

