"""A stdio server whose stdout carries bytes that are not UTF-8 (one that
writes its platform's encoding, cp1252 on Windows, or a child process writing
a Latin-1 file to the stdout it inherited), against the real test server
written in Latin-1 (``tests/mcp_server.py --latin1``)."""

from __future__ import annotations

import sys

import anyio

from agentflow import ReActAgent
from agentflow.mcp import MCPServer
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_servers import SERVER


async def test_bytes_that_are_not_utf8_never_wedge_the_session() -> None:
    """The SDK decoded stdout strictly: the ``UnicodeDecodeError`` ended its
    reader inside a drain that lasts as long as the process, so the call
    and every later one waited for their timeouts (without one, for ever),
    though the server answered each. Now such a byte reads as U+FFFD."""
    async with MCPServer.stdio(sys.executable, [SERVER, "--latin1"], timeout=20) as server:
        with anyio.fail_after(15):
            assert (await server.call_tool("echo", {"text": "caf\u00e9"})).text == "caf\ufffd"
            assert (await server.call_tool("echo", {"text": "ok"})).text == "ok"
            model = ScriptedModel([Reply(tool_calls=[Call("echo", {"text": "na\u00efve"})]),
                                   "done"])
            assert (await ReActAgent("a", model, tools=[server]).call("go")).text == "done"
            assert model.requests[1].messages[-1].tool_results[0].output == "na\ufffdve"
        assert server.reconnects == 0 and server.lost is None
