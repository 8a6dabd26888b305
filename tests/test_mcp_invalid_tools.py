"""A server that lists a tool the protocol's own ``Tool`` refuses (an
``inputSchema`` without ``"type": "object"``, one that is not an object, a
tool without a name), against a hand-written stdio server
(``tests/mcp_raw_server.py``: the SDK's own server refuses to send them):
that tool is left out, flagged, and the others work (``agentflow.mcp._listing``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from agentflow.errors import MCPToolSchemaError
from agentflow.mcp import MCPServer

RAW = str(Path(__file__).with_name("mcp_raw_server.py"))
NAMELESS = "<tool #3 of the listing, no name>"


def raw(**options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [RAW], name="raw", **options)


async def test_an_invalid_tool_is_left_out_and_flagged_the_others_work(
        caplog: pytest.LogCaptureFixture) -> None:
    """One tool whose inputSchema had no ``type`` failed the whole listing
    (pydantic's ``ValidationError`` from the SDK's check of the result): the
    server could not start, whatever ``on_invalid_schema`` said."""
    caplog.set_level(logging.WARNING, logger="agentflow")
    async with raw() as server:
        assert [t.name for t in server.tools] == ["echo"]
        assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
        assert set(server.skipped) == {"untyped", "listed", NAMELESS}
        assert "inputSchema.type: Field required" in server.skipped["untyped"]
        assert "MCP server 'raw'" in server.skipped["untyped"]
        warned = [r.getMessage() for r in caplog.records if "mcp.tool_skipped" in r.getMessage()]
        assert any("server='raw'" in m and "tool='untyped'" in m for m in warned), warned
        # a later listing (a refresh) leaves them out the same way, never raising
        caplog.clear()
        assert [t.name for t in await server.list_tools()] == ["echo"]
        assert set(server.skipped) == {"untyped", "listed", NAMELESS}
        assert any("listing='changed'" in r.getMessage() for r in caplog.records)


async def test_an_invalid_tool_chosen_by_name_is_a_typed_error_at_start() -> None:
    with pytest.raises(MCPToolSchemaError, match=r"tool 'untyped' \(include=...\) is not a "
                                                 r"valid MCP tool.*inputSchema.type") as info:
        async with raw(include=["echo", "untyped"]):
            pass
    assert info.value.server == "raw" and info.value.tool == "untyped"


async def test_an_excluded_invalid_tool_is_not_flagged() -> None:
    async with raw(exclude=["listed"], include=None) as server:
        assert set(server.skipped) == {"untyped", NAMELESS}
    async with raw(include=["echo"]) as server:
        assert server.skipped == {} and [t.name for t in server.tools] == ["echo"]
