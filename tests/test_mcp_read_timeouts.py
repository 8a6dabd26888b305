"""How long a tool call's response may go without a byte over streamable
HTTP (``agentflow.mcp._transports.call_reads``), against the real test
server (``tests/mcp_server.py --http``) on 127.0.0.1."""

from __future__ import annotations

from agentflow.mcp import HTTPTarget, MCPServer
from tests.mcp_servers import http_server


async def test_a_call_waits_as_long_as_its_timeout_past_the_clients_read_timeout() -> None:
    """The HTTP client's one read timeout (300 s, here 0.3 s) capped every
    call: one made with ``timeout=None``, or a longer one, whose tool sent
    nothing for that long failed (``ReadTimeout`` under the SDK) though its
    timeout said to wait. Now the call's requests wait as long as the call."""
    with http_server(quiet=True) as base:
        target = HTTPTarget(f"{base}/mcp", read_timeout=0.3)
        async with MCPServer(target, timeout=None) as server:
            assert (await server.call_tool("slow", {"seconds": 1.0})).text == "done"
            assert (await server.call_tool("slow", {"seconds": 1.0}, timeout=30)).text == "done"
            assert server.lost is None and server.reconnects == 0

