"""An approved call's tool reports its progress as in an agent's step:
``resolve_approvals(progress=...)`` takes each ``ToolProgress``, and
``stream_with_store`` streams them before the call's ``ToolResult``. The tools
run by ``resolve_approvals`` reported to nobody (``report_progress`` went
nowhere), so a UI showed no progress for a long approved tool."""

from __future__ import annotations

from pathlib import Path

from agentflow import AgentState, ReActAgent
from agentflow.approvals import Approve, RequireApproval, pending_calls, resolve_approvals
from agentflow.events import CallStarted, Complete, ToolProgress, ToolResult
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.tools import report_progress
from agentflow.web import SQLiteStateStore
from agentflow.web.store import stream_with_store


def _agent() -> ReActAgent:
    async def copy_files(count: int) -> str:
        """Copy files."""
        for n in range(1, count + 1):
            report_progress(n, count, f"copied file {n}")
        return f"copied {count}"

    async def answer(request: RecordedRequest) -> Reply:
        if not any(m.tool_results for m in request.messages):
            return Reply(tool_calls=[Call("copy_files", {"count": 2}, id="c1")])
        return Reply(text="done")

    return ReActAgent("ops", FunctionModel(answer), tools=[copy_files],
                      middleware=[RequireApproval({"copy_files"})])


EXPECTED = [ToolProgress("c1", "copy_files", 1, 2, "copied file 1"),
            ToolProgress("c1", "copy_files", 2, 2, "copied file 2")]


async def test_resolve_approvals_hands_on_the_approved_tools_progress() -> None:
    agent, state = _agent(), AgentState()
    [e async for e in agent.stream("copy", state=state)]
    assert [c.id for c in pending_calls(state)] == ["c1"]
    reported: list[ToolProgress] = []
    (result,) = await resolve_approvals(agent, state, {"c1": Approve()},
                                        progress=reported.append)
    assert result.output == "copied 2"
    assert reported == EXPECTED


async def test_stream_with_store_streams_it_before_the_calls_result(tmp_path: Path) -> None:
    agent = _agent()
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        [e async for e in stream_with_store(agent, store, "k", "copy")]
        events = [e async for e in stream_with_store(agent, store, "k", None,
                                                     decisions={"c1": Approve()})]
    kinds = [type(e) for e in events]
    assert kinds[:4] == [CallStarted, ToolProgress, ToolProgress, ToolResult]
    assert [e for e in events if isinstance(e, ToolProgress)] == EXPECTED
    assert isinstance(events[-1], Complete) and events[-1].message.text == "done"


async def test_a_progress_that_is_no_function_is_refused_before_anything_is_decided() -> None:
    """``progress="log"`` was taken: the approved tool's first report raised
    inside it, after its claim was saved, so the approval was spent on an
    error result. It is an ``ArgumentTypeError`` now, and the call still waits."""
    import pytest

    from agentflow import ArgumentTypeError

    agent, state = _agent(), AgentState()
    [e async for e in agent.stream("copy", state=state)]
    with pytest.raises(ArgumentTypeError, match="progress must be a function"):
        await resolve_approvals(agent, state, {"c1": Approve()},
                                progress="log")  # type: ignore[arg-type]
    assert [c.id for c in pending_calls(state)] == ["c1"]
    (result,) = await resolve_approvals(agent, state, {"c1": Approve()})
    assert result.output == "copied 2"
