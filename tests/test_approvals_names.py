"""``RequireApproval``'s tool names against the names an agent gives an MCP
server's tools (prefixed, made valid), with the real test server
(``tests/mcp_server.py``) over stdio: a name the agent offers under another
name fails the call before the model is asked, where the tool used to run
without approval."""

from __future__ import annotations

import sys

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.approvals import RequireApproval, pending_calls
from agentflow.errors import ToolNameError
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from tests.mcp_servers import SERVER


async def test_a_server_tool_named_without_its_prefix_never_runs_unasked() -> None:
    """``RequireApproval({"echo"})`` beside a server with ``prefix="shop"``:
    the model calls ``shop_echo``, which ran without approval (the names did
    not match, silently); and a server's own name with a dot, which the
    agent makes valid, likewise."""
    async with MCPServer.stdio(sys.executable, [SERVER], prefix="shop") as server:
        for named, offered in (("echo", "'shop_echo'"), ("text.upper", "'shop_text_upper_")):
            model = ScriptedModel([Reply(tool_calls=[Call("shop_echo", {"text": "hi"})]), "ran"])
            agent = ReActAgent("a", model, tools=[server], middleware=[RequireApproval({named})])
            state = AgentState()
            with pytest.raises(ToolNameError, match=rf"RequireApproval names the tool "
                                                    rf"'{named}', but this agent calls it "
                                                    rf"{offered}.*without approval"):
                await agent.call("say hi", state=state)
            assert model.requests == [] and state.memory == []  # nothing asked, nothing ran
        model = ScriptedModel([Reply(tool_calls=[Call("shop_echo", {"text": "hi"})]), "ran"])
        agent = ReActAgent("a", model, tools=[server], middleware=[RequireApproval({"shop_echo"})])
        state = AgentState()
        await agent.call("say hi", state=state)
        assert [c.name for c in pending_calls(state)] == ["shop_echo"]


async def test_names_no_tool_can_have_and_a_bare_string_are_refused() -> None:
    """A name no tool can be called (a dot) when no tool is offered under it,
    and ``RequireApproval("send")`` (a string: a set of its letters, which
    matched nothing)."""
    async with MCPServer.stdio(sys.executable, [SERVER], include=["echo"]) as server:
        agent = ReActAgent("a", ScriptedModel(["hi"]), tools=[server],
                           middleware=[RequireApproval({"files.delete"})])
        with pytest.raises(ToolNameError, match=r"'files.delete', but no tool can be called so"):
            await agent.call("go")
    with pytest.raises(TypeError, match=r"tools must be a list of tool names, got 'echo'"):
        RequireApproval("echo")


async def test_a_tool_the_server_adds_later_waits_for_approval_once_it_comes() -> None:
    """A name no tool answers to yet (``secret``, which the server lists after
    ``unlock``) is not refused: its call waits once the tool is there."""

    def step(request: RecordedRequest) -> Reply:
        names = [t.name for t in request.tools]
        return Reply(tool_calls=[Call("secret" if "secret" in names else "unlock", {})])

    async with MCPServer.stdio(sys.executable, [SERVER]) as server:
        agent = ReActAgent("a", FunctionModel(step), tools=[server],
                           middleware=[RequireApproval({"secret"})])
        state = AgentState()
        await agent.call("find the secret", state=state)
        assert [c.name for c in pending_calls(state)] == ["secret"]


def bulk_delete(ids: list[str]) -> str:
    """Delete records by id (the agent's own tool)."""
    return f"deleted {len(ids)}"


async def test_an_own_tool_ending_in_the_name_is_no_renaming() -> None:
    """``RequireApproval({"delete"})`` for a tool no source offers yet, beside
    the agent's own ``bulk_delete`` (and a server that prefixes its tools):
    no source renamed anything, so the call goes on, where it was refused
    (every offered name ending in ``_delete`` read as a renaming)."""
    async with MCPServer.stdio(sys.executable, [SERVER], prefix="shop") as server:
        for tools in ([bulk_delete], [bulk_delete, server]):
            model = ScriptedModel([Reply(tool_calls=[Call("bulk_delete", {"ids": ["a"]})]),
                                   "done"])
            agent = ReActAgent("a", model, tools=tools,
                               middleware=[RequireApproval({"delete"})])
            state = AgentState()
            assert (await agent.call("clean up", state=state)).text == "done"
            assert pending_calls(state) == []
