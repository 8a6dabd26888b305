"""The tool-source half of ``MCPServer`` (its base, over the calls half,
``_server_calls.ServerCalls``): the ``ToolSource`` protocol
(``current_tools``, ``tools_revision``, ``refresh_tools``), listing the
server's tools (``tools/list``, every page, all from one session) and declaring them as agent
``Tool``s, filtered (``include``/``exclude``) and prefixed, the name
reserved for structured output refused. A tool that cannot be declared is an
error at start (``on_invalid_schema``); one a running server adds or changes
(``notifications/tools/list_changed``) is left out, logged and kept in
``skipped``, and a listing that fails keeps the tools as last listed (tried
again after a backoff, ``REFRESH_BACKOFF``), so that
a server's change never ends the calls of every user of the tools that
worked. The class holds no state of its own, only the
methods, over the attributes ``MCPServer`` sets."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import anyio
import anyio.abc
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError as SDKError

from agentflow._logging import get_logger
from agentflow.errors import (
    MCPError,
    MCPNotRunningError,
    MCPToolSchemaError,
    ToolDefinitionError,
    ToolError,
    ToolNameError,
)
from agentflow.mcp._declare import agent_tool_name, declare_tool
from agentflow.mcp._server_calls import ServerCalls
from agentflow.output.reminders import TOOL_NAME
from agentflow.tools import Tool

__all__ = ["REFRESH_BACKOFF", "ServerTools"]

_log = get_logger()

_MAX_PAGES = 1000
"""``tools/list`` pages read at most (a server whose cursor never ends cannot hang a start)."""


REFRESH_BACKOFF = (1.0, 60.0)
"""After a failed listing of changed tools (``refresh_tools``), the first and
the longest wait, in seconds on anyio's clock, before the next is tried; each
failure doubles the wait, a listing that succeeds resets it."""


class ServerTools(ServerCalls):
    """The tool-source half of ``MCPServer`` (see the module docstring); its
    attributes are the server's."""

    prefix: str | None
    include: frozenset[str] | None
    exclude: frozenset[str]
    on_invalid_schema: Literal["raise", "skip"]
    max_retries: int | None
    skipped: dict[str, str]
    _group: anyio.abc.TaskGroup | None
    _tools: list[Tool]
    _revision: int
    _stale: bool
    _lock: anyio.Lock
    _refresh_failures: int
    _clock: Callable[[], float]
    _retry_at: float
    _backoff: float
    _failed_at: float
    _invalid: dict[str, str]

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
        changed since the last listing. A listing that fails (the server
        answers an error, times out, went away) leaves the tools as last
        listed, logged (``mcp.refresh_failed``): it ended the call under way,
        and every later call of every user while it failed. It is tried again
        by the first refresh once a backoff has passed (``REFRESH_BACKOFF``:
        1 s, doubling with each failure up to 60 s, reset by a listing that
        succeeds); until then the tools as last listed serve, and a refresh
        returns at once (a listing that hangs cost each step of each user up
        to ``connect_timeout`` while it hung). A change the server announces
        during the backoff (``notifications/tools/list_changed``: it may be
        the fix) cuts it short: the refresh after it lists at once, though
        never sooner than ``REFRESH_BACKOFF[0]`` after the failure (a server
        that announces changes while its listing fails costs at most one
        listing a second). A tool the change brings that cannot be
        declared is left out (``_declare``). Calls that waited while another's
        listing failed take that outcome: a listing that times out is waited
        for once, not once more by each of them in turn (each holding the
        others up to ``connect_timeout``). Never raises but a cancellation."""
        if not self._stale or self._session is None or self._clock() < self._retry_at:
            return
        failures = self._refresh_failures
        async with self._lock:
            if self._stale and self._refresh_failures == failures:
                self._stale = False
                try:
                    await self._list(first=False)
                except (MCPError, ToolError) as exc:
                    self._stale = True
                    self._refresh_failures += 1
                    wait, self._backoff = self._backoff, min(self._backoff * 2,
                                                             REFRESH_BACKOFF[1])
                    self._failed_at = self._clock()
                    self._retry_at = self._failed_at + wait
                    _log.warning("mcp.refresh_failed", server=self.name, error=str(exc),
                                 tools=len(self._tools), retry_in=wait)
                except BaseException:
                    self._stale = True
                    raise

    def _tools_changed(self) -> None:
        """The server announced a change: list on the next refresh, within
        the backoff after a failed listing too (``refresh_tools``)."""
        self._stale = True
        self._retry_at = min(self._retry_at, self._failed_at + REFRESH_BACKOFF[0])

    async def list_tools(self) -> list[Tool]:
        """List the tools now (whether or not the server said they changed)."""
        async with self._lock:
            self._stale = False
            await self._list(first=False)
        return list(self._tools)

    async def _list(self, first: bool) -> None:
        """List every page of ``tools/list`` and declare the tools. All pages
        come from one session: a cursor is the session's own (the spec's
        cursors are opaque, and a server may keep the listing it stands for
        per session, or have changed its tools since), so a page the listing
        meets on another session (a reconnection between two pages, or an
        expired session's request sent again on a new one, ``_request``)
        restarts the listing from the first page on that session."""
        listed: list[Any] = []
        cursor: str | None = None
        listing: ClientSession | None = None

        async def page(session: ClientSession) -> types.ListToolsResult:
            nonlocal listed, cursor, listing
            if session is not listing:
                if listing is not None:
                    _log.info("mcp.listing_restarted", server=self.name)
                listed, cursor, listing = [], None, session
                self._invalid = {}
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            return await session.list_tools(params=params)

        for _ in range(_MAX_PAGES):
            result = await self._page(page, first)
            listed.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        self._tools = self._declare(listed, self._invalid, set_up=first and self._group is None)
        self._revision += 1
        self._retry_at, self._backoff = -math.inf, REFRESH_BACKOFF[0]

    async def _page(self, page: Callable[[ClientSession], Awaitable[types.ListToolsResult]],
                    first: bool) -> types.ListToolsResult:
        """One page of ``tools/list``: on the session being opened (``first``),
        else as any request (``_request``: a new session for an expired one)."""
        if not first:
            return await self._request(page, "tools/list")
        try:
            return await page(self._running())
        except SDKError as exc:
            raise self._error(exc, "tools/list", opening=True) from exc

    def _drop_invalid(self, name: str, why: str) -> None:
        """``_listing``'s report of a listed tool the protocol's ``Tool`` refuses."""
        self._invalid[name] = why

    def _declare(self, listed: list[Any], invalid: dict[str, str], set_up: bool) -> list[Tool]:
        """The agent ``Tool``s of ``listed``. The tools of ``invalid`` (name ->
        why: the protocol's own ``Tool`` refuses them, ``_listing``) are left
        out, logged (``mcp.tool_skipped``) and kept in ``skipped``, whatever
        ``on_invalid_schema`` says: the SDK reads none of them, so no setting
        can make one usable, and the server's other tools are.

        Raises (``set_up``, the listing of ``start``, only; a later listing,
        after a change or a reconnection, leaves the tool out, logged and
        kept in ``skipped``):
            MCPToolSchemaError: an ``include`` name whose tool is in ``invalid``.
            ToolDefinitionError: an ``include`` name the server does not list.
            ToolNameError: a tool named as the output tool, or two tools
                with one agent name.
            MCPToolSchemaError: a schema no model takes
                (``on_invalid_schema="raise"``).
        """
        names = [t.name for t in listed]
        if set_up and self.include is not None and (chosen := sorted(self.include & set(invalid))):
            raise MCPToolSchemaError(
                f"MCP server {self.name!r}: its tool {chosen[0]!r} (include=...) is not a valid "
                f"MCP tool, so it cannot be called: {invalid[chosen[0]]} (the server must fix "
                "it; the spec's inputSchema is a JSON Schema object with \"type\": \"object\")",
                server=self.name, tool=chosen[0])
        if set_up and self.include is not None and (missing := self.include - set(names)):
            raise ToolDefinitionError(
                f"MCP server {self.name!r} has no tool {', '.join(sorted(map(repr, missing)))} "
                f"(include=...); it lists: {', '.join(names) or 'none'}")
        tools: list[Tool] = []
        seen: dict[str, str] = {}
        skipped: dict[str, str] = {}
        for remote, why in invalid.items():
            if (self.include is not None and remote not in self.include) or remote in self.exclude:
                continue
            skipped[remote] = (f"MCP server {self.name!r}: tool {remote!r} is not a valid MCP "
                               f"tool: {why}")
            _log.warning("mcp.tool_skipped", server=self.name, tool=remote, reason=skipped[remote],
                         listing="start" if set_up else "changed")
        for mcp_tool in listed:
            remote = mcp_tool.name
            if (self.include is not None and remote not in self.include) or remote in self.exclude:
                continue
            name = agent_tool_name(remote, self.prefix)
            try:
                if name == TOOL_NAME:
                    raise ToolNameError(
                        f"MCP server {self.name!r}: its tool {remote!r} would be called "
                        f"{TOOL_NAME!r}, the name reserved for structured output; give the "
                        "server a prefix (prefix=...) or leave the tool out (exclude=[...])")
                if name in seen:
                    raise ToolNameError(
                        f"MCP server {self.name!r}: its tools {seen[name]!r} and {remote!r} both "
                        f"become {name!r}")
                tools.append(declare_tool(self.name, mcp_tool, name, self._call_for_agent,
                                          self.max_retries))
            except (MCPToolSchemaError, ToolNameError) as exc:
                schema = isinstance(exc, MCPToolSchemaError)
                if set_up and not (schema and self.on_invalid_schema == "skip"):
                    raise
                skipped[remote] = str(exc)
                _log.warning("mcp.tool_skipped", server=self.name, tool=remote, reason=str(exc),
                             listing="start" if set_up else "changed")
                continue
            seen[name] = remote
        self.skipped = skipped
        return tools
