"""One streamable HTTP request whose connection is cut (a proxy's idle
timeout on a long call's response stream, a network blip) while the server
and the session live on, against the real test server
(``tests/mcp_server.py --http --cut``, which cuts the response to ``echo``
of ``"cut"`` after its headers). A server that went away is still a lost
session, reconnected by the next call (tests/test_mcp.py,
``test_http_server_gone_then_back_is_reconnected_by_the_next_call``)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.errors import MCPConnectionError
from agentflow.mcp import MCPServer, MCPToolResult
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_servers import http_server


@pytest.fixture(scope="module")
def cut_url() -> Iterator[str]:
    with http_server("--cut", quiet=True) as base:
        yield f"{base}/mcp"


async def test_a_cut_request_fails_alone_and_the_other_calls_go_on(cut_url: str) -> None:
    """The cut request marked the whole session lost, so the next call
    reconnected first, closing the session under another user's call still
    waiting on it (``MCPConnectionError`` for a call the server was running
    fine). Now a ping shows the session lives: only the cut call fails,
    saying it may or may not have run; nothing reconnects."""
    async with MCPServer.http(cut_url, timeout=30) as server:
        results: dict[str, MCPToolResult] = {}

        async def other_user() -> None:
            results["slow"] = await server.call_tool("slow", {"seconds": 1})

        async with anyio.create_task_group() as tg:
            tg.start_soon(other_user)
            await anyio.sleep(0.1)
            with pytest.raises(MCPConnectionError, match=r"the connection carrying tool 'echo' "
                                                         r"was cut .*may or may not have run"):
                await server.call_tool("echo", {"text": "cut"})
            assert server.lost is None
            results["next"] = await server.call_tool("echo", {"text": "next"})
        assert results["slow"].text == "done" and results["next"].text == "next"
        assert server.reconnects == 0
        # through an agent: the model reads the cut call's error, the next step runs
        model = ScriptedModel([Reply(tool_calls=[Call("echo", {"text": "cut"})]),
                               Reply(tool_calls=[Call("add", {"a": 1, "b": 2})]), "done"])
        await ReActAgent("a", model, tools=[server]).call("go")
        cut = model.requests[1].messages[-1].tool_results[0]
        assert cut.is_error and "may or may not have run" in cut.output
        assert model.requests[2].messages[-1].tool_results[0].output == '{"sum":3}'
        assert server.reconnects == 0

