"""Tool results larger than one SSE event of the streamable HTTP transport
may hold, against the real test server (``tests/mcp_server.py --http``, its
``big`` tool) on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from agentflow.errors import ToolError
from agentflow.mcp import MCPServer
from tests.mcp_servers import SERVER, http_server


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(quiet=True) as base:
        yield f"{base}/mcp"


async def test_a_result_over_a_megabyte_arrives_over_http_as_over_stdio(http_url: str) -> None:
    """The SDK reads at most 1 MiB per SSE event by default: a 2 MB result
    (a screenshot in base64 is one) failed over HTTP with an
    ``MCPConnectionError`` saying the server went away, while stdio carried
    it whole. Now up to 32 MiB by default arrives, as over stdio."""
    async with MCPServer.http(http_url) as server:
        result = await server.call_tool("big", {"megabytes": 2})
        assert len(result.text) == 2 * 2**20 and server.lost is None
    async with MCPServer.stdio(sys.executable, [SERVER]) as local:
        assert len((await local.call_tool("big", {"megabytes": 2})).text) == 2 * 2**20


async def test_a_result_over_the_limit_is_a_tool_error_naming_it(http_url: str) -> None:
    """Over the limit (``max_result_bytes``), the call fails with a
    ``ToolError`` naming the limit and how to raise it; it said the server
    process exited. The session goes on."""
    async with MCPServer.http(http_url, max_result_bytes=2**20) as server:
        with pytest.raises(ToolError, match=r"tool 'big' answered with a message over the "
                                            r"1,048,576 bytes .*max_result_bytes"):
            await server.call_tool("big", {"megabytes": 2})
        assert (await server.call_tool("echo", {"text": "next"})).text == "next"
        assert server.reconnects == 0 and server.lost is None
    with pytest.raises(ValueError, match="max_result_bytes must be an int >= 1 or None"):
        MCPServer.http(http_url, max_result_bytes=0)
