"""A tool call's arguments on their way to an MCP server
(``agentflow.mcp._server_calls.sendable``), against the real test server
(``tests/mcp_server.py``) over stdio and streamable HTTP on 127.0.0.1: what
the SDK cannot write never reaches its session's one writer task, which a
value it could not encode ended, with every other call on the session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.approvals import Approve, RequireApproval, pending_calls, resolve_approvals
from agentflow.errors import InvalidInputError
from agentflow.mcp import MCPServer, MCPToolResult
from agentflow.state import AgentState
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_servers import SERVER, http_server


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(quiet=True) as base:
        yield f"{base}/mcp"


def server_over(transport: str, http_url: str) -> MCPServer:
    if transport == "stdio":
        return MCPServer.stdio(sys.executable, [SERVER], timeout=30)
    return MCPServer.http(http_url, timeout=30)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_half_an_emoji_never_ends_the_session_other_calls_wait_on(
        transport: str, http_url: str) -> None:
    """A lone surrogate (half an emoji: a client's ``"\\ud83d"``) in one
    call's arguments ended the SDK's writer task: the session was lost, and
    another user's call waiting on it failed with ``MCPConnectionError``; it
    is sent as U+FFFD, as agentflow sends such a string to every vendor."""
    async with server_over(transport, http_url) as server:
        results: dict[str, MCPToolResult] = {}

        async def other_user() -> None:
            results["slow"] = await server.call_tool("slow", {"seconds": 0.5})

        async with anyio.create_task_group() as tg:
            tg.start_soon(other_user)
            await anyio.sleep(0.1)
            results["echo"] = await server.call_tool("echo", {"text": "smile \ud83d!"})
        assert results["echo"].text == "smile \ufffd!"
        assert results["slow"].text == "done"
        assert server.reconnects == 0 and server.lost is None
        # in a key, in a list, in a tuple too
        echoed = await server.call_tool("echo",
                                        {"text": "ok", "tags": ("a\udc00", ["\ud800"])})
        assert echoed.text == "ok" and server.reconnects == 0


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_value_json_cannot_carry_is_a_typed_error_naming_it(
        transport: str, http_url: str) -> None:
    """An object of no JSON kind, or bytes that are not UTF-8, escaped
    ``call_tool`` as pydantic's ``PydanticSerializationError`` or a bare
    ``UnicodeDecodeError``; now an ``InvalidInputError`` naming the
    argument, and nothing is sent. What pydantic's JSON mode writes (a set, a
    date) is sent as before."""

    class Opaque:
        pass

    async with server_over(transport, http_url) as server:
        with pytest.raises(InvalidInputError,
                           match=r"tool 'echo': arguments\.extra\[1\]\.deep cannot be sent as "
                                 r"JSON \(.*Opaque.*\); nothing was sent"):
            await server.call_tool("echo", {"text": "x", "extra": [1, {"deep": Opaque()}]})
        with pytest.raises(InvalidInputError, match=r"arguments\.raw cannot be sent as JSON"):
            await server.call_tool("echo", {"text": "x", "raw": b"\xff\xfe"})
        import datetime

        sent = await server.call_tool("echo", {"text": "x", "on": datetime.date(2026, 1, 2),
                                               "ids": {3}})
        assert sent.text == "x" and server.reconnects == 0


async def test_an_edited_approval_with_half_an_emoji_runs_and_keeps_the_session(
        http_url: str) -> None:
    """The same through an approval edited by a person (a web client's JSON
    may hold ``"\\ud83d"``): the approved call runs once, on U+FFFD, and the
    shared session is not lost."""
    model = ScriptedModel([Reply(tool_calls=[Call("echo", {"text": "draft"})]), "sent"])
    async with MCPServer.http(http_url) as server:
        agent = ReActAgent("a", model, tools=[server], middleware=[RequireApproval({"echo"})])
        state = AgentState()
        await agent.call("send it", state=state)
        [call] = pending_calls(state)
        edited: dict[str, Any] = {"text": "final \ud83d"}
        [result] = await resolve_approvals(agent, state, {call.id: Approve(edited)})
        assert not result.is_error and result.output == "final \ufffd"
        assert server.reconnects == 0 and server.lost is None
