"""Approvals: a tool call suspends the call for a person's decision, the
state holds it (and survives a store), and a later call resumes with each
call approved, edited or refused, the model reading the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow import AgentState, InvalidInputError, ReActAgent
from agentflow.approvals import (
    PENDING_OUTPUT,
    Approve,
    Refuse,
    RequireApproval,
    check_decisions,
    pending_calls,
    resolve_approvals,
)
from agentflow.errors import AlreadyDecidedError
from agentflow.events import ApprovalRequested, Complete
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore


def make_agent(sent: list[tuple[str, str]]) -> tuple[ReActAgent, list[list[str]]]:
    seen: list[list[str]] = []

    def send_email(to: str, body: str) -> str:
        """Send an e-mail."""
        sent.append((to, body))
        return f"sent to {to}"

    def lookup(name: str) -> str:
        """Find an address."""
        return "ada@x.org"

    async def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        seen.append(results)
        if not results:
            return Reply(tool_calls=[Call("lookup", {"name": "Ada"}),
                                     Call("send_email", {"to": "ada@x.org", "body": "hi"})])
        return Reply(text="outcome: " + " | ".join(results))

    agent = ReActAgent("ops", FunctionModel(answer), tools=[send_email, lookup],
                       middleware=[RequireApproval({"send_email"})])
    return agent, seen


async def suspend(agent: ReActAgent, state: AgentState) -> list[object]:
    return [e async for e in agent.stream("mail Ada", state=state)]


async def test_a_call_suspends_then_resumes_approved() -> None:
    sent: list[tuple[str, str]] = []
    agent, seen = make_agent(sent)
    state = AgentState()
    events = await suspend(agent, state)
    asked = [e for e in events if isinstance(e, ApprovalRequested)]
    assert [[c.name for c in e.calls] for e in asked] == [["send_email"]]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.stop_reason == "approval_required"
    assert sent == []  # nothing ran yet; the other call of the step did
    [call] = pending_calls(state)
    assert call.input == {"to": "ada@x.org", "body": "hi"}
    await resolve_approvals(agent, state, {call.id: Approve()})
    assert pending_calls(state) == []
    reply = await agent.call(None, state=state)
    assert sent == [("ada@x.org", "hi")]
    assert reply.text == "outcome: ada@x.org | sent to ada@x.org"
    assert PENDING_OUTPUT not in seen[-1]


async def test_edited_and_refused_calls() -> None:
    sent: list[tuple[str, str]] = []
    agent, _ = make_agent(sent)
    state = AgentState()
    await suspend(agent, state)
    [call] = pending_calls(state)
    await resolve_approvals(agent, state, {call.id: Approve({"to": "ada@x.org",
                                                             "body": "edited"})})
    await agent.call(None, state=state)
    assert sent == [("ada@x.org", "edited")]
    # the model sees the call that ran, with its edited input
    assert any(c.input == {"to": "ada@x.org", "body": "edited"}
               for m in state.memory for c in m.tool_uses)

    state = AgentState()
    await suspend(agent, state)
    [call] = pending_calls(state)
    await resolve_approvals(agent, state, {call.id: Refuse("not today")})
    reply = await agent.call(None, state=state)
    assert len(sent) == 1
    assert reply.text == "outcome: ada@x.org | Refused: not today"


async def test_decisions_are_checked() -> None:
    agent, _ = make_agent([])
    state = AgentState()
    with pytest.raises(InvalidInputError, match="no tool call waiting"):
        await resolve_approvals(agent, state, {})
    await suspend(agent, state)
    [call] = pending_calls(state)
    with pytest.raises(InvalidInputError, match="no decision"):
        await resolve_approvals(agent, state, {})
    with pytest.raises(InvalidInputError, match="no pending call"):
        await resolve_approvals(agent, state, {call.id: Approve(), "other": Refuse()})
    with pytest.raises(ValueError):
        RequireApproval()


async def test_check_decisions_checks_without_running_anything() -> None:
    sent: list[tuple[str, str]] = []
    agent, _ = make_agent(sent)
    state = AgentState()
    with pytest.raises(InvalidInputError, match="no tool call waiting"):
        check_decisions(state, {})
    await suspend(agent, state)
    [call] = pending_calls(state)
    before = state.to_json()
    assert check_decisions(state, {call.id: Approve()}) == [call]
    with pytest.raises(InvalidInputError, match=f"no decision for the pending call.*{call.id}"):
        check_decisions(state, {})
    with pytest.raises(InvalidInputError, match="no pending call other"):
        check_decisions(state, {call.id: Approve(), "other": Refuse()})
    assert state.to_json() == before and sent == []  # nothing ran, nothing changed
    await resolve_approvals(agent, state, {call.id: Refuse("no")})
    with pytest.raises(AlreadyDecidedError) as info:
        check_decisions(state, {call.id: Approve()})
    assert info.value.call_ids == (call.id,)


async def test_the_pending_call_survives_a_store(tmp_path: Path) -> None:
    sent: list[tuple[str, str]] = []
    agent, _ = make_agent(sent)
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        state = AgentState()
        await suspend(agent, state)
        version = await store.save("c", state, version=0)
        loaded = await store.load("c")  # another request, another process
        [call] = pending_calls(loaded.state)
        await resolve_approvals(agent, loaded.state, {call.id: Approve()})
        await agent.call(None, state=loaded.state)
        assert await store.save("c", loaded.state, version=version) == 2
        assert sent == [("ada@x.org", "hi")]
        assert pending_calls((await store.load("c")).state) == []


async def test_a_structured_output_call_suspends_and_resumes() -> None:
    from pydantic import BaseModel

    class Report(BaseModel):
        status: str

    sent: list[str] = []

    def pay(amount: int) -> str:
        """Pay."""
        sent.append(str(amount))
        return "paid"

    async def answer(request: RecordedRequest) -> Reply:
        if not any(r.output == "paid" for m in request.messages for r in m.tool_results):
            return Reply(tool_calls=[Call("pay", {"amount": 5})])
        return Reply(tool_calls=[Call("generate_response", {"status": "paid"})])

    agent = ReActAgent("ops", FunctionModel(answer), tools=[pay],
                       middleware=[RequireApproval({"pay"})])
    state = AgentState()
    events = [e async for e in agent.stream("pay 5", Report, state=state)]
    complete = events[-1]  # suspended: a Complete without output, not an error
    assert isinstance(complete, Complete) and complete.stop_reason == "approval_required"
    assert complete.output is None and sent == []
    [call] = pending_calls(state)
    await resolve_approvals(agent, state, {call.id: Approve()})
    reply = await agent.call(None, Report, state=state)
    assert reply.output == Report(status="paid") and sent == ["5"]


async def test_a_call_the_conversation_went_on_without_never_runs_later(tmp_path: Path) -> None:
    """The user answers a suspended call with a new message ("never mind")
    instead of a decision: the model reads the call as not run, and it waits
    no more. A late decision for it (a stale approval card, a retried
    request) ran the tool anyway, put its result in the middle of the
    history and asked the model to go on from its own last reply."""
    from agentflow.web.store import stream_with_store

    sent: list[tuple[str, str]] = []
    agent, _ = make_agent(sent)
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        [e async for e in stream_with_store(agent, store, "k", "mail Ada")]
        call = pending_calls((await store.load("k")).state)[0]
        moved = [e async for e in stream_with_store(agent, store, "k", "never mind, thanks")]
        assert isinstance(moved[-1], Complete)
        state = (await store.load("k")).state
        assert pending_calls(state) == []
        with pytest.raises(InvalidInputError, match=rf"{call.id} no longer wait.*went on"):
            [e async for e in stream_with_store(agent, store, "k", None,
                                                decisions={call.id: Approve()})]
        with pytest.raises(InvalidInputError, match="no longer wait"):
            check_decisions(state, {call.id: Approve()})
        assert (await store.load("k")).state == state  # nothing ran, nothing saved
    assert sent == []
    # a later step that suspends again waits as usual, the abandoned call still not
    def asks(request: RecordedRequest) -> Reply:
        if request.messages[-1].role == "user":
            return Reply(tool_calls=[Call("send_email", {"to": "ada@x.org", "body": "hi"})])
        return Reply(text="done")

    asking = ReActAgent("ops", FunctionModel(asks), tools=list(agent.toolkit),
                        middleware=[RequireApproval({"send_email"})])
    again = AgentState(state.memory)
    [e async for e in asking.stream("mail Ada again", state=again)]
    [fresh] = pending_calls(again)
    assert fresh.id != call.id
    with pytest.raises(InvalidInputError, match=rf"{call.id} no longer wait"):
        await resolve_approvals(asking, again, {fresh.id: Approve(), call.id: Approve()})
    await resolve_approvals(asking, again, {fresh.id: Approve()})
    assert sent == [("ada@x.org", "hi")]
