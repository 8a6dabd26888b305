"""A call the client gives up on is cancelled on the server
(``notifications/cancelled``, MCP spec, Cancellation), against the real test
server (``tests/mcp_server.py``, its ``slow`` tool marks a file when
cancelled) over stdio and streamable HTTP: its timeout, and an agent's
stream closed early (a client that went away). The server stops the work
instead of running it to its end for nobody."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.errors import MCPTimeoutError
from agentflow.mcp import MCPServer
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_servers import SERVER, http_server


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(quiet=True) as base:
        yield f"{base}/mcp"


async def marked(path: Path) -> None:
    """Wait until the server created ``path`` (it was cancelled)."""
    with anyio.fail_after(10):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 (another process makes it)
            await anyio.sleep(0.02)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_timed_out_call_and_a_closed_stream_cancel_the_servers_work(
        transport: str, http_url: str, tmp_path: Path) -> None:
    server = (MCPServer.stdio(sys.executable, [SERVER], timeout=None) if transport == "stdio"
              else MCPServer.http(http_url, timeout=None))
    async with server:
        timed_out = tmp_path / "timed-out"
        with pytest.raises(MCPTimeoutError):
            await server.call_tool("slow", {"seconds": 60, "mark": str(timed_out)}, timeout=0.5)
        await marked(timed_out)
        gone = tmp_path / "gone"
        model = ScriptedModel([Reply(tool_calls=[Call("slow", {"seconds": 60,
                                                               "mark": str(gone)})]), "done"])
        agent = ReActAgent("a", model, tools=[server])
        async with anyio.create_task_group() as tg:  # the client goes away mid-call
            async def read() -> None:
                async for _ in agent.stream("go"):
                    pass

            tg.start_soon(read)
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
        await marked(gone)
        assert (await server.call_tool("echo", {"text": "next"})).text == "next"
