"""One agent, many users: an agent is a definition any number of concurrent
callers share. A call without ``state=`` starts from an empty conversation and
leaves no trace in the agent, so no user's text reaches another's request and
no call waits for another; a conversation is explicit state (``AgentState``)
passed to each of its calls, committed when a call succeeds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import AgentState, Complete, ReActAgent
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

USERS = 200
USER = re.compile(r"\bu\d{3}\b")


class Note(BaseModel):
    user: str
    secret: str


def note_tool(user: str) -> str:
    """Look up a user's note."""
    return f"note-of-{user}"


def _user_of(request: RecordedRequest) -> str:
    return next(m.text for m in request.messages if m.role == "user").split()[1]


def _texts(request: RecordedRequest) -> Iterable[str]:
    for m in request.messages:
        yield m.text
        for block in m.tool_uses:
            yield str(dict(block.input))
        for result in m.tool_results:
            yield result.output


async def test_200_concurrent_users_of_one_agent_neither_see_nor_wait_for_each_other() -> None:
    """Every first request is held until all 200 calls have sent theirs: the
    calls can only finish if none waits for another (no sleeps: the release
    is the state "200 in flight"). Then each call makes a tool round and gives
    its structured output; every request the model received holds only its
    own user's messages."""
    in_flight = 0
    peak = 0
    everyone_in = anyio.Event()

    async def answer(request: RecordedRequest) -> Reply:
        nonlocal in_flight, peak
        user = _user_of(request)
        last = request.messages[-1]
        if last.role == "user":  # the first request of the call
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight == USERS:
                everyone_in.set()
            await everyone_in.wait()
            return Reply(tool_calls=[Call("note_tool", {"user": user})])
        note = last.tool_results[0].output
        return Reply(tool_calls=[Call("generate_response", {"user": user, "secret": note})])

    model = FunctionModel(answer)
    agent = ReActAgent("shared", model, tools=[note_tool])
    attributes = set(vars(agent))
    results: dict[str, Any] = {}

    async def user(n: int) -> None:
        name = f"u{n:03d}"
        text = f"user {name} asks for the note of {name}"
        if n % 2:  # half of the users stream, half call
            async for event in agent.stream(text, Note):
                if isinstance(event, Complete):
                    results[name] = event.output
        else:
            results[name] = (await agent.call(text, Note)).output

    with anyio.fail_after(60):  # serialised calls would hold here forever
        async with anyio.create_task_group() as tg:
            for n in range(USERS):
                tg.start_soon(user, n)

    assert peak == USERS  # all 200 were in flight at once
    assert len(model.requests) == 2 * USERS
    for name, note in results.items():
        assert note == Note(user=name, secret=f"note-of-{name}")
    assert len(results) == USERS
    for request in model.requests:
        own = _user_of(request)
        mentioned = {found for text in _texts(request) for found in USER.findall(text)}
        assert mentioned == {own}  # no other user's text, tool call or result
        users = [m for m in request.messages if m.role == "user"]
        assert len(users) == 1  # only this call's own message: no earlier conversation
    assert set(vars(agent)) == attributes
    assert not hasattr(agent, "state")  # the agent holds no conversation


async def test_a_call_without_state_leaves_no_trace() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    agent = ReActAgent("a", model)
    await agent.call("my password is hunter2")
    await agent.call("what did I say?")
    assert [m.text for m in model.requests[1].messages] == ["what did I say?"]


def test_call_sync_without_state_leaves_no_trace() -> None:
    model = ScriptedModel(["one", "two"])
    agent = ReActAgent("a", model)
    agent.call_sync("first")
    agent.call_sync("second")
    assert [m.text for m in model.requests[1].messages] == ["second"]
    agent.close()


async def test_a_conversation_is_explicit_state_and_conversations_stay_apart() -> None:
    """Two conversations on one agent, interleaved: each sees its own history
    only, committed after each successful call."""
    model = FunctionModel(lambda r: f"reply to {r.messages[-1].text}")
    agent = ReActAgent("chat", model)
    alice, bob = AgentState(), AgentState()
    await agent.call("alice 1", state=alice)
    await agent.call("bob 1", state=bob)
    await agent.call("alice 2", state=alice)
    assert [m.text for m in model.requests[-1].messages] == [
        "alice 1", "reply to alice 1", "alice 2"]
    assert [m.text for m in bob.memory] == ["bob 1", "reply to bob 1"]
    assert len(alice.memory) == 4


async def test_a_failed_call_leaves_the_conversation_as_it_was() -> None:
    model = ScriptedModel(["hello", Reply(error=RuntimeError("boom"))])
    agent = ReActAgent("chat", model)
    state = AgentState()
    await agent.call("hi", state=state)
    before = state.to_json()
    with pytest.raises(RuntimeError, match="boom"):
        await agent.call("again", state=state)
    assert state.to_json() == before


def test_the_agent_takes_no_state_of_its_own() -> None:
    """The former ``ReActAgent(..., state=...)`` default conversation is gone:
    pass the state to each call instead."""
    with pytest.raises(TypeError, match="state"):
        ReActAgent("a", ScriptedModel([]), state=AgentState())  # type: ignore[call-arg]
