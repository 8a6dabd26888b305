"""How a call's loop ends (agentflow/call_outcome.py): a decision applied to
the loop, as a table, and what committing a call writes and returns."""

from __future__ import annotations

import pytest

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.call_outcome import commit, last_reply, stops
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ToolUseBlock
from agentflow.middleware.base import Act, Decision, Finish, ReasonAgain
from agentflow.testing import ScriptedModel

CALL = ToolUseBlock("c1", "lookup", {"q": "x"})
AGAIN = ReasonAgain((Msg.user("again"),))


def _ex() -> CallExecution:
    return CallExecution(model=ScriptedModel(), state=AgentState(), agent_name="a",
                         agent_id="i", base_log=get_logger())


@pytest.mark.parametrize("decision, calls, ends, stop_reason, added", [
    (None, [], True, "completed", []),
    (None, [CALL], False, None, []),
    (Act({}), [CALL], False, None, []),
    (Finish("structured_output"), [], True, "structured_output", []),
    (Finish("structured_output"), [CALL], True, "structured_output", ["tool"]),
    (AGAIN, [], False, None, ["user"]),
    (AGAIN, [CALL], False, None, ["tool", "user"]),
])
def test_stops(decision: Decision | None, calls: list[ToolUseBlock], ends: bool,
               stop_reason: str | None, added: list[str]) -> None:
    ex = _ex()
    assert stops(ex, calls, decision) is ends
    assert ex.stop_reason == stop_reason
    assert [m.role for m in ex.memory] == added
    if "tool" in added:  # an unrun call is answered, never left open
        assert ex.memory[0].tool_results[0].tool_use_id == "c1"


def test_commit_writes_the_state_and_returns_the_last_reply_when_none_was_set() -> None:
    ex = _ex()
    ex.memory = [Msg.user("hi"), Msg.assistant("first"), Msg.assistant("last")]
    ex.so_tool_active = True
    done = commit(ex)
    assert ex.state.memory is ex.memory and ex.state.so_tool_active
    assert done.message.text == "last" and done.stop_reason == "completed"
    assert done.output is None and done.spans == {}
    assert last_reply(_ex()).text == ""
