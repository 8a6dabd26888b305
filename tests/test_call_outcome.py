"""How a call's loop ends (agentflow/call_outcome.py): a decision applied to
the loop, as a table, and what committing a call writes and returns."""

from __future__ import annotations

import pytest

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.call_outcome import commit, last_reply, stops
from agentflow.execution import CallExecution
from agentflow.messages import Msg, StructuredResult, ToolUseBlock
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


def test_commit_attaches_a_result_only_where_there_is_one() -> None:
    """A text call's reply is the memory's own message (nothing to attach: no
    copy); a reply that carries an earlier result is copied without it; a
    structured call's reply is a copy carrying the result, memory untouched."""
    ex = _ex()
    ex.memory = [Msg.user("hi"), Msg.assistant("text")]
    assert commit(ex).message is ex.memory[-1]

    ex = _ex()
    stale = Msg.assistant("old").replace(result=_result("v"))
    ex.memory = [stale]
    done = commit(ex)
    assert done.message.result is None and done.message == stale

    ex = _ex()
    ex.output_type, ex.output, ex.completed = str, "v", True
    ex.memory = [Msg.user("hi"), Msg.assistant('"v"')]
    done = commit(ex)
    assert done.message is not ex.memory[-1] and ex.memory[-1].result is None
    assert done.message.result is not None and done.message.result.value == "v"


def _result(value: object) -> StructuredResult:
    return StructuredResult(value=value)
