"""An ``ApprovalRequested`` event is a promise: the call pauses for the
person right after it. A user middleware that ends the step (``Finish``) or
asks for another reasoning step (``ReasonAgain``) on a reply with an
approval-gated call leaves that call "Not executed", so no approval prompt
may be shown for it; and a call that waits is announced once, with its
input, after the step's decisions merged."""

from __future__ import annotations

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.approvals import PENDING_OUTPUT, RequireApproval, pending_calls
from agentflow.events import ApprovalRequested, Complete, Event, ToolResult
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Decision, Finish, Middleware, ReasonAgain
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply


class Veto(Middleware):
    """Ends the step on the first reply that calls ``send_email``: with
    ``Finish`` (the call ends) or ``ReasonAgain`` (the model is told why)."""

    def __init__(self, how: str) -> None:
        self.how = how

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Decision | None:
        if not any(c.name == "send_email" for c in reply.tool_uses):
            return None
        if self.how == "finish":
            return Finish("stopped")
        return ReasonAgain((Msg.user("Do not send mail; just say so."),))


def make_agent(order: str, how: str, sent: list[str]) -> ReActAgent:
    def send_email(to: str) -> str:
        """Send an e-mail."""
        sent.append(to)
        return f"sent to {to}"

    def answer(request: RecordedRequest) -> Reply:
        told = any(m.role == "user" and "Do not send" in m.text for m in request.messages)
        if told:
            return Reply(text="I will not mail her.")
        return Reply(text="Mailing.", tool_calls=[Call("send_email", {"to": "ada@x.org"},
                                                       id="mail-1")])

    gate, veto = RequireApproval({"send_email"}), Veto(how)
    middleware: list[Middleware] = [gate, veto] if order == "gate first" else [veto, gate]
    return ReActAgent("ops", FunctionModel(answer), tools=[send_email], middleware=middleware)


@pytest.mark.parametrize("order", ["gate first", "veto first"])
@pytest.mark.parametrize("how", ["finish", "reason again"])
async def test_no_prompt_for_a_call_another_middleware_left_unrun(order: str, how: str) -> None:
    sent: list[str] = []
    agent = make_agent(order, how, sent)
    state = AgentState()
    events: list[Event] = [e async for e in agent.stream("mail Ada", state=state)]
    assert not [e for e in events if isinstance(e, ApprovalRequested)], events
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.stop_reason == ("stopped" if how == "finish" else "completed")
    assert sent == [] and pending_calls(state) == []  # nothing waits: nothing to approve
    [unrun] = [r for m in state.memory for r in m.tool_results if r.tool_use_id == "mail-1"]
    assert unrun.is_error and unrun.output.startswith("Not executed")
    if how == "reason again":
        assert complete.message.text == "I will not mail her."


async def test_a_waiting_call_is_announced_once_and_the_call_pauses() -> None:
    sent: list[str] = []

    def send_email(to: str) -> str:
        """Send an e-mail."""
        sent.append(to)
        return f"sent to {to}"

    def lookup(name: str) -> str:
        """Find an address."""
        return "ada@x.org"

    model = FunctionModel(lambda request: Reply(tool_calls=[
        Call("lookup", {"name": "Ada"}, id="look-1"),
        Call("send_email", {"to": "ada@x.org"}, id="mail-1")]))
    agent = ReActAgent("ops", model, tools=[send_email, lookup],
                       middleware=[RequireApproval({"send_email"})])
    state = AgentState()
    events: list[Event] = [e async for e in agent.stream("mail Ada", state=state)]
    asked = [i for i, e in enumerate(events) if isinstance(e, ApprovalRequested)]
    assert len(asked) == 1
    announced = events[asked[0]]
    assert isinstance(announced, ApprovalRequested)
    assert [(c.id, c.name, c.input) for c in announced.calls] == [
        ("mail-1", "send_email", {"to": "ada@x.org"})]
    # the very next thing is the pause: the call ends waiting for the person
    after = events[asked[0] + 1:]
    assert len(after) == 1 and isinstance(after[0], Complete)
    assert after[0].stop_reason == "approval_required"
    assert [c.id for c in pending_calls(state)] == ["mail-1"] and sent == []
    results = {e.id: e.output for e in events if isinstance(e, ToolResult)}
    assert results == {"look-1": "ada@x.org", "mail-1": PENDING_OUTPUT}
