"""How long a tool call's response may go without a byte over streamable
HTTP and the legacy SSE transport (``agentflow.mcp._call_reads``), against
the real test server (``tests/mcp_server.py --http`` / ``--sse``) on 127.0.0.1."""

from __future__ import annotations

import anyio
import pytest

from agentflow.errors import MCPConnectionError
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



async def test_over_the_legacy_sse_transport_reads_follow_the_calls_too(
        caplog: pytest.LogCaptureFixture) -> None:
    """The legacy transport answers every call on its one SSE stream, whose
    read timeout the SDK fixed when the session opened (300 s): a call made
    with ``timeout=None``, or a longer one, whose tool sent nothing for that
    long lost the session, and ``read_timeout`` was not applied. Now the
    stream waits as long as the calls waiting on it, and ``read_timeout`` while
    none waits (the stream is lost then, as under the SDK's own timeout: the
    next call fails, the one after reconnects)."""
    with http_server("--sse", quiet=True) as base:
        target = HTTPTarget(f"{base}/sse", sse=True, read_timeout=1.5)
        async with MCPServer(target, timeout=None) as server:
            assert (await server.call_tool("slow", {"seconds": 3.0})).text == "done"
            assert (await server.call_tool("slow", {"seconds": 3.0}, timeout=30)).text == "done"
            assert server.lost is None and server.reconnects == 0
            assert not _stream_timed_out(caplog)
            with anyio.fail_after(30):  # no call waits: read_timeout bounds the stream
                while not _stream_timed_out(caplog):  # noqa: ASYNC110 - no event offered
                    await anyio.sleep(0.05)
            with pytest.raises(MCPConnectionError):
                await server.call_tool("slow", {"seconds": 0.1})
            assert (await server.call_tool("slow", {"seconds": 0.1})).text == "done"
            assert server.reconnects == 1


def _stream_timed_out(caplog: pytest.LogCaptureFixture) -> bool:
    return "no byte on the SSE stream for 1.5 s" in caplog.text  # (the SDK logs it)
