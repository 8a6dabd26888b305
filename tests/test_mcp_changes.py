"""A running MCP server that changes its tools
(``notifications/tools/list_changed``) into something the agent cannot take,
against the real test server (``tests/mcp_server.py --grow``) over stdio: a
tool no model takes, one named as the output tool, one named as another
server's tool. At start each is an error (tests/test_mcp.py); a change used
to end the call under way, and every later call of every user, until the
server was restarted. Now the tool is left out and logged, and the tools
that worked go on working."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from agentflow import ReActAgent
from agentflow.errors import ToolNameError
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from tests.mcp_servers import SERVER


def grower(**options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER, "--grow"], **options)


def names(request: RecordedRequest) -> list[str]:
    return [t.name for t in request.tools]


async def test_a_tool_added_that_no_model_takes_is_left_out_and_the_call_goes_on() -> None:
    model = ScriptedModel([
        Reply(tool_calls=[Call("grow", {"name": "remote", "bad": True}),
                          Call("grow", {"name": "generate_response"})]),
        Reply(tool_calls=[Call("echo", {"text": "still here"})]),
        "done",
    ])
    async with grower(include=None) as server:
        agent = ReActAgent("a", model, tools=[server])
        assert (await agent.call("grow")).text == "done"
        assert model.requests[2].messages[-1].tool_results[0].output == "still here"
        assert "remote" not in names(model.requests[1])
        assert names(model.requests[1]).count("generate_response") == 0
        assert set(server.skipped) == {"remote", "generate_response"}
        assert "is not local" in server.skipped["remote"]
        assert "reserved for structured output" in server.skipped["generate_response"]
        later = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 2})]), "3"])
        assert (await ReActAgent("b", later, tools=[server]).call("add")).text == "3"


async def test_a_tool_added_under_another_servers_tool_name_never_takes_it_over() -> None:
    """Server ``A`` adds ``b_echo``, the name server ``B`` (``prefix="b"``)
    gives its ``echo``: ``B``'s keeps the name, so the model's call reaches
    ``B`` (a server's change can take no other server's tool over), and the
    call goes on."""

    def step(request: RecordedRequest) -> Reply | str:
        done = [r.output for m in request.messages for r in m.tool_results]
        if not done:
            return Reply(tool_calls=[Call("grow", {"name": "b_echo"})])
        if len(done) == 1:
            return Reply(tool_calls=[Call("b_echo", {"text": "from B"})])
        return " | ".join(done)

    async with grower(name="A") as a, \
            MCPServer.stdio(sys.executable, [SERVER], name="B", prefix="b",
                            include=["echo"]) as b:
        model = FunctionModel(step)
        agent = ReActAgent("x", model, tools=[a, b])
        assert (await agent.call("go")).text == "grew b_echo | from B"
        assert names(model.requests[1]).count("b_echo") == 1
        assert "b_echo" in [t.name for t in a.tools]  # A lists it; the agent leaves it out
        assert (await agent.call("again")).text == "grew b_echo | from B"  # later calls too
        # an agent made now is set up with both: the clash is an error naming both servers
        with pytest.raises(ToolNameError, match=r"'b_echo': it comes from tool source 'A' and "
                                                r"from tool source 'B'"):
            ReActAgent("y", FunctionModel(step), tools=[a, b])


async def test_a_listing_that_fails_after_a_change_keeps_the_tools_as_last_listed(
        caplog: pytest.LogCaptureFixture) -> None:
    """The server says its tools changed, then answers ``tools/list`` with an
    error: the listing raised ``ToolError`` before the next model request,
    ending the call and every later one while it failed. The tools as last
    listed serve on (logged), and the listing is tried again each request."""
    model = ScriptedModel([
        Reply(tool_calls=[Call("grow", {"name": "later", "down": True})]),
        Reply(tool_calls=[Call("echo", {"text": "still here"})]),
        "done",
    ])
    async with grower() as server:
        server._clock = lambda: 0.0
        agent = ReActAgent("a", model, tools=[server])
        assert (await agent.call("grow")).text == "done"
        assert model.requests[2].messages[-1].tool_results[0].output == "still here"
        assert "later" not in names(model.requests[2]) and "echo" in names(model.requests[2])
        failed = [r for r in caplog.records if "mcp.refresh_failed" in r.getMessage()]
        assert len(failed) == 1 and "the tool catalogue is down" in failed[0].getMessage()


async def test_calls_waiting_on_a_failed_listing_take_its_outcome(
        caplog: pytest.LogCaptureFixture) -> None:
    """Several users' steps refresh at once after the change, the listing
    fails: each one that waited for the lock listed again in turn, so a
    listing that times out held the last of them up to connect_timeout once
    per user before it. One listing is tried; the waiters keep the tools as
    last listed; a step once the backoff has passed tries again."""
    now = [0.0]
    async with grower() as server:
        server._clock = lambda: now[0]
        await server.call_tool("grow", {"name": "later", "down": True})
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(server.refresh_tools)
        failed = [r for r in caplog.records if "mcp.refresh_failed" in r.getMessage()]
        assert len(failed) == 1 and "echo" in [t.name for t in server.tools]
        now[0] = 1.0
        await server.refresh_tools()  # the next step's refresh, the backoff passed, tries again
        failed = [r for r in caplog.records if "mcp.refresh_failed" in r.getMessage()]
        assert len(failed) == 2


async def test_a_failed_listing_waits_a_backoff_that_doubles_and_success_resets_it(
        caplog: pytest.LogCaptureFixture) -> None:
    """A listing that fails was tried again before every step of every user:
    one that hangs cost each of them up to connect_timeout for as long as it
    hung. Now a refresh before the backoff has passed (on the server's clock,
    advanced here) returns at once with the tools as last listed; the wait
    doubles with each failure up to 60 s; a listing that succeeds resets it."""
    now = [0.0]

    def waits() -> list[str]:
        return [r.getMessage().partition("retry_in=")[2].split(" ")[0] for r in caplog.records
                if "mcp.refresh_failed" in r.getMessage()]

    async with grower() as server:
        server._clock = lambda: now[0]
        await server.call_tool("grow", {"name": "later", "down": True})
        await server.refresh_tools()
        await server.refresh_tools()  # within the first second: not tried
        assert waits() == ["1.0"] and "later" not in [t.name for t in server.tools]
        now[0] = 1.0
        await server.refresh_tools()
        now[0] = 2.5
        await server.refresh_tools()  # the wait is 2 s now
        assert waits() == ["1.0", "2.0"]
        for _ in range(6):
            now[0] += 64.0
            await server.refresh_tools()
        assert waits() == ["1.0", "2.0", "4.0", "8.0", "16.0", "32.0", "60.0", "60.0"]
        await server.call_tool("grow", {"name": "again"})  # the catalogue is up again
        now[0] += 60.0
        await server.refresh_tools()
        assert {"later", "again"} <= {t.name for t in server.tools} and len(waits()) == 8
        await server.call_tool("grow", {"name": "third", "down": True})
        await server.refresh_tools()
        assert waits()[8:] == ["1.0"]  # the success reset the wait


async def test_a_change_announced_during_the_backoff_is_listed_at_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """A listing failed, and the backoff grew (4 s here); the server then
    fixed its catalogue and said so (``notifications/tools/list_changed``):
    the tools it announced waited out the backoff, up to 60 s. Now the
    refresh after the announcement lists at once, one backoff step (1 s)
    after the failure at the soonest."""
    now = [0.0]
    async with grower() as server:
        server._clock = lambda: now[0]
        await server.call_tool("grow", {"name": "later", "down": True})
        for now[0] in (0.0, 1.0, 3.0):
            await server.refresh_tools()
        failed = [r for r in caplog.records if "mcp.refresh_failed" in r.getMessage()]
        assert len(failed) == 3 and "retry_in=4.0" in failed[-1].getMessage()
        await server.call_tool("grow", {"name": "again"})  # up again, and it says so
        await server.call_tool("echo", {"text": "a round trip after the notification"})
        await server.refresh_tools()  # the same instant as the failure: not yet
        assert "again" not in [t.name for t in server.tools]
        now[0] = 4.0  # 1 s after the failure, 3 s before its backoff ends
        await server.refresh_tools()
        assert {"later", "again"} <= {t.name for t in server.tools}
