"""More calls waiting on one streamable HTTP session than its HTTP client
has connections (100: each waiting call holds one, its response stream),
against the real test server (``tests/mcp_server.py --http``) on 127.0.0.1."""

from __future__ import annotations

import anyio

from agentflow.mcp import HTTPTarget, MCPServer
from tests.mcp_servers import http_server


async def test_calls_beyond_the_connection_pool_wait_their_turn() -> None:
    """130 calls of a tool that takes a while: the 30 beyond the pool waited
    for a connection past the HTTP timeout (``http_timeout``, 30 s by default;
    0.5 here), and the pool's timeout ended the SDK's transport: all 130
    calls, those the server was running too, failed with
    ``MCPConnectionError`` and the session was lost. Now they wait their turn
    (bounded by the call's own timeout) and all succeed."""
    with http_server(quiet=True) as base:
        target = HTTPTarget(f"{base}/mcp", http_timeout=0.5)
        async with MCPServer(target, timeout=60) as server:
            done: list[str] = []

            async def call() -> None:
                done.append((await server.call_tool("slow", {"seconds": 0.8})).text)

            async with anyio.create_task_group() as tg:
                for _ in range(130):
                    tg.start_soon(call)
            assert done == ["done"] * 130
            assert server.reconnects == 0 and server.lost is None
            assert (await server.call_tool("echo", {"text": "after"})).text == "after"
            assert server.reconnects == 0
