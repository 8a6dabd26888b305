"""``ToolSource``s in a ``Toolkit`` and an agent: tools that change while the
agent lives (``agentflow.tools``; an MCP server is one, ``agentflow.mcp``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentflow import ReActAgent, Tool, Toolkit, ToolSource
from agentflow.errors import ToolNameError, UsageError
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply


def make(name: str, answer: str = "ok") -> Tool:
    async def function() -> str:
        return answer

    return Tool.from_function(function, name=name, description=f"the {name} tool")


class Source:
    """A tool source whose tools the test changes (``changed`` is what a
    server's list-changed notification does: refreshed before the next request)."""

    def __init__(self, name: str, tools: list[Tool], ready: bool = True) -> None:
        self.source_name = name
        self.tools_ready = ready
        self.tools_revision = 0
        self._tools = tools
        self._pending: list[Tool] | None = None
        self.refreshes = 0

    def current_tools(self) -> Sequence[Tool]:
        if not self.tools_ready:
            raise UsageError(f"{self.source_name} is not running")
        return self._tools

    def changed(self, tools: list[Tool]) -> None:
        self._pending = tools

    async def refresh_tools(self) -> None:
        self.refreshes += 1
        if self._pending is not None:
            self._tools, self._pending = self._pending, None
            self.tools_revision += 1


def test_a_source_is_a_tool_source_and_its_tools_follow_its_revision() -> None:
    source = Source("s", [make("a")])
    assert isinstance(source, ToolSource)
    kit = Toolkit([make("own"), source])
    assert kit.names == ["own", "a"] and len(kit) == 2 and "a" in kit
    revision = kit.revision
    source._tools, source.tools_revision = [make("a"), make("b")], 1
    assert kit.names == ["own", "a", "b"] and kit.get("b") is not None
    assert kit.revision != revision


def test_collisions_name_both_sources_when_the_tools_are_read() -> None:
    with pytest.raises(ToolNameError, match=r"'a'.*tool source 'one' and from tool source 'two'"):
        Toolkit([Source("one", [make("a")]), Source("two", [make("a")])])
    late = Source("late", [make("own")], ready=False)
    kit = Toolkit([make("own"), late])  # not ready: checked when it is
    late.tools_ready = True
    with pytest.raises(ToolNameError, match=r"'own'.*the agent's own tools.*'late'"):
        kit.names  # noqa: B018
    with pytest.raises(ToolNameError, match="reserved for structured output"):
        ReActAgent("a", FunctionModel(lambda r: "x"), tools=[Source("s", [make(
            "generate_response")])])


async def test_the_agent_reads_a_changed_source_before_its_next_request() -> None:
    source = Source("s", [make("first")])

    def step(request: RecordedRequest) -> Reply | str:
        names = [t.name for t in request.tools]
        if names == ["first"]:
            source.changed([make("first"), make("second", "found it")])
            return Reply(tool_calls=[Call("first", {})])
        if "second" in names and not any(r.name == "second"
                                         for r in request.messages[-1].tool_results):
            return Reply(tool_calls=[Call("second", {})])
        return request.messages[-1].tool_results[0].output

    model = FunctionModel(step)
    reply = await ReActAgent("a", model, tools=[source]).call("go")
    assert reply.text == "found it"
    assert [[t.name for t in r.tools] for r in model.requests] == [
        ["first"], ["first", "second"], ["first", "second"]]
    assert source.refreshes == 3  # at the call's start, then before each later request


async def test_a_source_that_is_not_ready_fails_the_call_before_any_request() -> None:
    model = FunctionModel(lambda r: "x")
    agent = ReActAgent("a", model, tools=[Source("s", [make("a")], ready=False)])
    with pytest.raises(UsageError, match="not running"):
        await agent.call("go")
    assert model.requests == []
