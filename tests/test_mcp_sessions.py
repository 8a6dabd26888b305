"""A streamable HTTP session the server ends (an idle timeout, a restart):
its id then answers HTTP 404, and the MCP spec (Session Management) says the
client "MUST start a new session by sending a new InitializeRequest". The
request the server refused is sent again on the new session, within the same
call, so the caller (the model) never sees the expiry. Against the real test
server (``tests/mcp_server.py --http``), whose ``POST /expire`` ends every
open session as its SDK's idle timeout ends one."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.errors import MCPConnectionError, MCPServerStartError
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.mcp_servers import http_server


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with http_server(quiet=True) as url:
        yield url


async def expire(base: str) -> int:
    """End every session the server has open; how many it ended."""
    def post() -> int:
        with urllib.request.urlopen(urllib.request.Request(f"{base}/expire", method="POST",
                                                           data=b"")) as response:
            return int(response.read().split(b":")[1].strip(b" }"))

    return await anyio.to_thread.run_sync(post)


async def test_a_call_after_the_session_expired_runs_on_a_new_session(base: str) -> None:
    async with MCPServer.http(f"{base}/mcp") as server:
        assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
        assert await expire(base) >= 1
        assert (await server.call_tool("add", {"a": 2, "b": 3})).structured == {"sum": 5}
        assert server.reconnects == 1 and server.lost is None
        assert await expire(base) >= 1  # and again: each expiry is one new session
        assert [t.name for t in await server.list_tools()][:2] == ["add", "echo"]
        assert server.reconnects == 2


async def test_concurrent_calls_on_an_expired_session_open_one_new_session(base: str) -> None:
    async with MCPServer.http(f"{base}/mcp") as server:
        await expire(base)
        texts: list[str] = []

        async def echo(i: int) -> None:
            texts.append((await server.call_tool("echo", {"text": f"call {i}"})).text)

        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(echo, i)
        assert sorted(texts) == sorted(f"call {i}" for i in range(20))
        assert server.reconnects == 1


async def test_an_agents_tool_call_never_shows_the_expiry(base: str) -> None:
    results: list[str] = []

    def answer(request: RecordedRequest) -> Reply:
        done = [r.output for m in request.messages for r in m.tool_results]
        if not done:
            return Reply(tool_calls=[Call("echo", {"text": "still here"})])
        results.extend(done)
        return Reply(text="done")

    async with MCPServer.http(f"{base}/mcp") as server:
        await expire(base)
        reply = await ReActAgent("a", FunctionModel(answer), tools=[server]).call("go")
    assert reply.text == "done" and results == ["still here"]


async def test_without_reconnect_an_expired_session_fails_the_call(base: str) -> None:
    async with MCPServer.http(f"{base}/mcp", reconnect=False) as server:
        await expire(base)
        with pytest.raises(MCPConnectionError, match="no longer knows the session"):
            await server.call_tool("echo", {"text": "hi"})
        assert server.reconnects == 0


@pytest.fixture(scope="module", params=["offset cursors", "bound cursors"])
def paged(request: pytest.FixtureRequest) -> Iterator[str]:
    """A server whose tools/list comes in pages of 3, its cursors plain offsets
    (any session takes them) or bound to the session's tool list."""
    bound = ("--bound-cursors",) if request.param == "bound cursors" else ()
    with http_server("--pages", "3", *bound, quiet=True) as url:
        yield url


async def expire_mid_list(base: str) -> int:
    """Make the next tools/list page after the first end every session first
    (it then answers 404) and start a new tool list; the current generation."""
    def post() -> int:
        request = urllib.request.Request(f"{base}/expire-mid-list", method="POST", data=b"")
        with urllib.request.urlopen(request) as response:
            return int(response.read().split(b":")[1].strip(b" }"))

    return await anyio.to_thread.run_sync(post)


async def test_a_listing_cut_by_an_expiry_restarts_on_the_new_session(paged: str) -> None:
    async with MCPServer.http(f"{paged}/mcp") as server:
        before = [t.name for t in server.tools]
        generation = await expire_mid_list(paged)
        assert before[0] == f"v{generation}" and len(before) > 6  # three pages or more
        after = [t.name for t in await server.list_tools()]
        assert server.reconnects == 1 and server.lost is None
        # every page from the new session: its version tool, never the old one's
        assert after == [f"v{generation + 1}", *before[1:]]
        assert [t.name for t in server.tools] == after


async def test_a_session_that_expires_during_the_starts_listing_is_started_anew(
        paged: str) -> None:
    # (armed before the start: the start's own listing meets the 404 at its second page)
    generation = await expire_mid_list(paged)
    async with MCPServer.http(f"{paged}/mcp") as server:
        names = [t.name for t in server.tools]
        # every page from the new session, the listing begun again on it
        assert names[0] == f"v{generation + 1}" and len(names) > 6
        assert server.reconnects == 1 and server.lost is None
        assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"


async def test_without_reconnect_an_expiry_during_the_start_fails_it(paged: str) -> None:
    await expire_mid_list(paged)
    with pytest.raises(MCPServerStartError, match="no longer knows the session"):
        async with MCPServer.http(f"{paged}/mcp", reconnect=False):
            pass
