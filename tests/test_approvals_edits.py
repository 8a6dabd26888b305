"""Decisions whose calls could not run as decided, on tools of the real test
MCP server (``tests/mcp_server.py``, stdio): an edited input that does not
fit its tool, a server that is not running. A claimed call never runs again,
so these used up the person's approval on an error result the model read;
now they are refused before anything is decided."""

from __future__ import annotations

import sys

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.approvals import Approve, RequireApproval, pending_calls, resolve_approvals
from agentflow.errors import InvalidInputError, MCPNotRunningError
from agentflow.mcp import MCPServer
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_servers import SERVER


def shop() -> tuple[MCPServer, ReActAgent]:
    server = MCPServer.stdio(sys.executable, [SERVER], include=["add", "echo"])
    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 2})]), "done"])
    agent = ReActAgent("a", model, tools=[server], middleware=[RequireApproval({"add"})])
    return server, agent


async def test_an_edit_that_does_not_fit_is_refused_and_can_be_made_again() -> None:
    server, agent = shop()
    state = AgentState()
    async with server:
        await agent.call("add them", state=state)
        [call] = pending_calls(state)
        before = state.to_json()
        with pytest.raises(InvalidInputError, match=r"(?s)the edited input of call .* does not "
                                                    r"fit: Invalid arguments for tool 'add'.*b: "
                                                    r"'two' is not of type 'integer'.*Nothing "
                                                    r"was decided"):
            await resolve_approvals(agent, state, {call.id: Approve({"a": 1, "b": "two"})})
        assert state.to_json() == before and pending_calls(state) == [call]
        [result] = await resolve_approvals(agent, state, {call.id: Approve({"a": 1, "b": 41})})
        assert not result.is_error and result.output == '{"sum":42}'
        assert (await agent.call(None, state=state)).text == "done"


async def test_a_decision_while_the_server_is_not_running_decides_nothing() -> None:
    server, agent = shop()
    state = AgentState()
    async with server:
        await agent.call("add them", state=state)
    [call] = pending_calls(state)
    with pytest.raises(MCPNotRunningError, match="not running"):
        await resolve_approvals(agent, state, {call.id: Approve()})
    assert pending_calls(state) == [call]
    async with server:
        [result] = await resolve_approvals(agent, state, {call.id: Approve()})
    assert result.output == '{"sum":3}'
