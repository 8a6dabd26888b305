"""Fifty users of one shared agent whose tools come from one MCP server (one
session, stdio and streamable HTTP): their tool calls go out on that session
at once, and each call's result reaches its own call only (the SDK's request
ids, never the order of replies); every request the model sees holds its own
user's text only.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.mcp_servers import SERVER, http_server

USERS = 50
MARK = re.compile(r"\bU\d{3}m\b")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server() as base:
        yield f"{base}/mcp"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_fifty_calls_share_one_mcp_session_and_keep_their_results(
        transport: str, http_url: str) -> None:
    everyone_in = anyio.Event()
    first = 0

    async def answer(request: RecordedRequest) -> Reply:
        nonlocal first
        mark = MARK.findall(request.messages[0].text)[0]
        last = request.messages[-1]
        if last.role == "user":  # each first request waits for all: the tool calls overlap
            first += 1
            if first == USERS:
                everyone_in.set()
            await everyone_in.wait()
            return Reply(tool_calls=[Call("echo", {"text": f"echo of {mark}"})])
        return Reply(text=f"done: {last.tool_results[0].output}")

    model = FunctionModel(answer)
    server = (MCPServer.stdio(sys.executable, [SERVER]) if transport == "stdio"
              else MCPServer.http(http_url))
    replies: dict[str, str] = {}
    async with server:
        agent = ReActAgent("shared", model, tools=[server])

        async def user(n: int) -> None:
            mark = f"U{n:03d}m"
            replies[mark] = (await agent.call(f"I am {mark}")).text

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for n in range(USERS):
                    tg.start_soon(user, n)
    assert replies == {f"U{n:03d}m": f"done: echo of U{n:03d}m" for n in range(USERS)}
    for request in model.requests:
        own = MARK.findall(request.messages[0].text)
        marks = {m for msg in request.messages for m in MARK.findall(
            msg.text + "".join(str(r.output) for r in msg.tool_results)
            + "".join(str(dict(c.input)) for c in msg.tool_uses))}
        assert marks == set(own)
