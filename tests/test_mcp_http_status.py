"""HTTP error statuses an MCP server (or the proxy, gateway before it)
answers with a body that is no JSON-RPC error: the SDK said only "Server
returned an error response" (a ``ToolError`` with code -32603), whatever the
status. Against the real test server behind a bearer token
(``tests/mcp_server.py --http --token T``, tests/mcp_http_faults.py) on
127.0.0.1."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.errors import MCPServerStartError, MCPStatusError
from agentflow.mcp import MCPServer
from agentflow.mcp._transports import ERROR_BODY_BYTES
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_http_faults import BLOAT_BYTES
from tests.mcp_servers import http_server

TOKEN = "zq7-bearer-a1b2c3d4e5f6g7h8"


@pytest.fixture
def base() -> Iterator[str]:
    with http_server("--token", TOKEN, quiet=True) as url:
        yield url


async def post(url: str) -> None:
    def send() -> None:
        urllib.request.urlopen(urllib.request.Request(url, method="POST", data=b"")).close()

    await anyio.to_thread.run_sync(send)


async def test_a_refused_token_at_start_names_the_status(base: str) -> None:
    with pytest.raises(MCPServerStartError, match=r"answered initialize with HTTP 401 "
                                                  r"Unauthorized \(its credentials were refused"
                       ) as info:
        async with MCPServer.http(f"{base}/mcp",
                                  headers={"Authorization": "Bearer zq7-wrong-a1b2c3d4e5f6"}):
            pass
    assert isinstance(info.value.__cause__, MCPStatusError)
    assert info.value.__cause__.status == 401


async def test_a_token_that_expires_mid_session_and_a_gateways_503(base: str) -> None:
    """The model reads what happened (not "Server returned an error
    response"); the caller gets ``MCPStatusError`` with the status and the
    ``Retry-After``; the token never appears."""
    async with MCPServer.http(f"{base}/mcp", headers={"Authorization": f"Bearer {TOKEN}"}
                              ) as server:
        assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
        await post(f"{base}/overload")
        with pytest.raises(MCPStatusError, match=r"with HTTP 503 Service Unavailable \(the "
                                                 r"server, or a gateway before it, failed\)"
                           ) as busy:
            await server.call_tool("echo", {"text": "busy"})
        assert busy.value.status == 503 and busy.value.retry_after == 7.0
        assert (await server.call_tool("echo", {"text": "again"})).text == "again"
        await post(f"{base}/revoke")
        model = ScriptedModel([Reply(tool_calls=[Call("echo", {"text": "x"})]), "done"])
        await ReActAgent("a", model, tools=[server]).call("go")
        [result] = model.requests[1].messages[-1].tool_results
        assert result.is_error and "MCPStatusError" in result.output
        assert "HTTP 401 Unauthorized" in result.output and "The access token expired" in \
            result.output
        with pytest.raises(MCPStatusError) as refused:
            await server.call_tool("echo", {"text": "x"})
        assert refused.value.status == 401 and refused.value.retry_after is None
        assert TOKEN not in str(refused.value) and server.lost is None


class _Recording:
    """An httpx2 transport over a real one that keeps the responses it hands on
    (``num_bytes_downloaded``: what the client read of each body)."""

    def __init__(self) -> None:
        import httpx2

        self.inner = httpx2.AsyncHTTPTransport()
        self.responses: list[httpx2.Response] = []
        self.closed = 0

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.inner.handle_async_request(request)
        self.responses.append(response)
        return response

    async def aclose(self) -> None:
        self.closed += 1
        await self.inner.aclose()


async def test_a_gateways_huge_error_body_is_read_only_up_to_the_cap(base: str) -> None:
    """A gateway answers 502 with a body of 64 MiB (as good as endless): it
    was read whole, though only its first 300 characters are the message.
    The error names the status; the client reads at most ``ERROR_BODY_BYTES``
    (and the rest of the network read that reached it, at most as much
    again) before it hangs up: seen by a transport that records what it
    carries (``HTTPTarget.transport``)."""
    recording = _Recording()
    async with MCPServer.http(f"{base}/mcp", headers={"Authorization": f"Bearer {TOKEN}"},
                              transport=recording) as server:
        await post(f"{base}/bloat")
        with pytest.raises(MCPStatusError, match=r"with HTTP 502 Bad Gateway") as bad:
            await server.call_tool("echo", {"text": "x"})
        assert bad.value.status == 502 and "Bad Gateway" in str(bad.value)
        assert (await server.call_tool("echo", {"text": "again"})).text == "again"
    assert BLOAT_BYTES > 100 * ERROR_BODY_BYTES
    [raw] = [r for r in recording.responses if r.status_code == 502]
    assert ERROR_BODY_BYTES <= raw.num_bytes_downloaded <= 2 * ERROR_BODY_BYTES
    assert recording.closed == 0  # (the session closes only what it made)
