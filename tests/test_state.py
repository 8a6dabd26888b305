"""Tests for agentflow.state: AgentState JSON round trip, equality, copy, lock."""

import re

import anyio
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentflow.state as state_module
from agentflow.agent import ReActAgent
from agentflow.errors import InvalidStateError
from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    Msg,
    ReminderType,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.state import AgentState
from agentflow.testing import Call, Reply, ScriptedModel

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _keys(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            if k not in ("metadata", "input", "provider_data"):  # user data keeps its keys
                yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def _state() -> AgentState:
    return AgentState(
        [
            Msg.system(
                "structured output mode is active",
                metadata={
                    STRUCTURED_OUTPUT_REMINDER: True,
                    STRUCTURED_OUTPUT_REMINDER_TYPE: ReminderType.ENTER,
                    CACHE_CONTROL: False,
                },
            ),
            Msg.user("what is 2+2? ünïcödé 😀"),
            Msg("assistant", [ThinkingBlock("add", signature="s"), TextBlock("calling"),
                              ToolUseBlock("c1", "add", {"a": 2, "b": 2})]),
            Msg("tool", [ToolResultBlock("c1", "4", name="add"),
                         ToolResultBlock("c2", "oops", is_error=True, name="nope")]),
            Msg.assistant("4", name="calc"),
        ],
        so_tool_active=True,
    )


def test_public_names_exist():
    assert state_module.__all__ == ["AgentState"]


def test_defaults():
    s = AgentState()
    assert s.memory == []
    assert s.so_tool_active is False


def test_json_round_trip_is_exact():
    s = _state()
    blob = s.to_json()
    assert isinstance(blob, bytes)
    restored = AgentState.from_json(blob)
    assert restored == s
    assert restored.so_tool_active is True
    assert [m.id for m in restored.memory] == [m.id for m in s.memory]
    assert [m.content for m in restored.memory] == [m.content for m in s.memory]
    assert restored.memory[0].metadata[STRUCTURED_OUTPUT_REMINDER_TYPE] == ReminderType.ENTER
    assert restored.to_json() == blob
    assert AgentState.from_json(blob.decode()) == s  # str accepted too


def test_a_lone_surrogate_is_stored_as_the_replacement_character():
    # JSON cannot carry a lone surrogate: to_json raised orjson's TypeError
    s = AgentState([Msg.user("caf\udce9"), Msg.assistant("ok", metadata={"k\ud800": "v"})])
    restored = AgentState.from_json(s.to_json())
    assert restored.memory[0].text == "caf\ufffd"
    assert restored.memory[1].metadata == {"k\ufffd": "v"}
    assert [m.id for m in restored.memory] == [m.id for m in s.memory]


def test_json_shape_and_snake_case_keys():
    data = orjson.loads(_state().to_json())
    assert set(data) == {"version", "memory", "so_tool_active"}
    assert data["version"] == 1
    assert data["so_tool_active"] is True
    assert len(data["memory"]) == 5
    keys = set(_keys(data))
    assert {"tool_use_id", "is_error", "so_tool_active"} <= keys
    assert all(SNAKE.match(k) for k in keys), sorted(keys)


def test_to_dict_from_dict_round_trip():
    s = _state()
    assert AgentState.from_dict(s.to_dict()) == s


def test_equality():
    a, b = _state(), _state()
    assert a != b  # different message ids
    c = AgentState(a.memory, so_tool_active=True)
    assert a == c
    assert a != AgentState(a.memory, so_tool_active=False)
    assert a != AgentState(a.memory[:-1], so_tool_active=True)
    assert a != "not a state"
    with pytest.raises(TypeError):
        hash(a)


def test_copy_is_independent():
    s = _state()
    c = s.copy()
    assert c == s
    c.memory.append(Msg.user("more"))
    c.so_tool_active = False
    assert len(s.memory) == 5
    assert s.so_tool_active is True
    assert c.lock is not s.lock


def test_lock_is_created_once():
    s = AgentState()
    assert isinstance(s.lock, anyio.Semaphore)
    assert s.lock is s.lock


def test_repr_is_short():
    assert repr(_state()) == "AgentState(memory=<5 messages>, so_tool_active=True)"


def test_unknown_version_raises():
    with pytest.raises(ValueError, match="version 99"):
        AgentState.from_dict({"version": 99, "memory": []})


def test_bad_json_raises():
    with pytest.raises(InvalidStateError, match="does not parse"):
        AgentState.from_json(b"{not json")


def test_missing_fields_default():
    assert AgentState.from_dict({}) == AgentState()


_text = st.text(max_size=20)
_block = st.one_of(
    st.builds(TextBlock, _text),
    st.builds(ThinkingBlock, _text),
    st.builds(ToolUseBlock, _text, _text,
              st.dictionaries(_text, st.integers(-1000, 1000) | _text, max_size=3)),
    st.builds(ToolResultBlock, _text, _text, st.booleans(), _text),
)
_msg = st.builds(Msg, st.sampled_from(["system", "user", "assistant", "tool"]),
                 st.lists(_block, max_size=3), st.none() | _text,
                 st.dictionaries(_text, st.booleans() | _text, max_size=2))


@settings(max_examples=50, deadline=None)
@given(st.lists(_msg, max_size=6), st.booleans())
def test_round_trip_property(memory, flag):
    s = AgentState(memory, so_tool_active=flag)
    assert AgentState.from_json(s.to_json()) == s


async def test_state_stored_between_calls_continues_the_conversation():
    """The web-backend pattern: store the state as JSON between requests."""

    def add(a: int, b: int) -> int:
        return a + b

    model = ScriptedModel([
        Reply(tool_calls=[Call("add", {"a": 1, "b": 2}, id="c1")]),
        "3",
        "and again 3",
    ])
    agent = ReActAgent("web", model, tools=[add])
    state = AgentState()
    await agent.call("1+2?", state=state)
    blob = state.to_json()

    restored = AgentState.from_json(blob)
    assert restored == state
    reply = await agent.call("repeat", state=restored)
    assert reply.text == "and again 3"
    assert model.requests[2].messages[:4] == tuple(state.memory)
    assert [m.role for m in restored.memory] == ["user", "assistant", "tool", "assistant",
                                                 "user", "assistant"]


async def test_an_uncontended_call_takes_the_state_without_a_lock():
    s = AgentState()
    await s.acquire()
    assert s._lock is None  # a fresh state per call creates nothing
    s.release()
    await s.acquire()  # and can be taken again
    s.release()


async def test_acquire_nowait_takes_a_free_state_and_refuses_a_held_one():
    s = AgentState()
    assert s.acquire_nowait() and s._lock is None  # free: taken, nothing created
    assert not s.acquire_nowait()  # held: the caller awaits acquire()
    lock = s.lock  # read while held: made taken
    assert not s.acquire_nowait()
    s.release()
    assert s.acquire_nowait()  # through the lock now
    assert not s.acquire_nowait()
    s.release()
    assert s.lock is lock


async def test_the_lock_read_while_a_call_holds_the_state_is_taken():
    s = AgentState()
    await s.acquire()
    with pytest.raises(anyio.WouldBlock):
        s.lock.acquire_nowait()
    s.release()
    s.lock.acquire_nowait()  # free again
    s.lock.release()


async def test_a_second_call_waits_for_the_first_to_release():
    s = AgentState()
    order: list[str] = []
    await s.acquire()

    async def second() -> None:
        await s.acquire()
        order.append("second")
        s.release()

    async with anyio.create_task_group() as tg:
        tg.start_soon(second)
        await anyio.sleep(0.01)
        order.append("first")
        s.release()
    assert order == ["first", "second"]
    await s.acquire()  # the state is free after both
    s.release()


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
async def test_a_copy_taken_while_a_call_runs_is_free_for_the_next_call(how: str) -> None:
    """A snapshot of a state taken while a call holds it (a tool's, a store's)
    is the conversation, not the running call's hold: the next call on it runs
    (it waited forever before)."""
    import copy
    import pickle

    take = {"copy": copy.copy, "deepcopy": copy.deepcopy,
            "pickle": lambda s: pickle.loads(pickle.dumps(s))}[how]
    state = AgentState([Msg.user("earlier")])
    snapshots: list[AgentState] = []

    def snapshot() -> str:
        """Keep a copy of the conversation."""
        snapshots.append(take(state))
        return "kept"

    model = ScriptedModel([Reply(tool_calls=[Call("snapshot", {})]), "done", "next"])
    agent = ReActAgent("snap", model, tools=[snapshot])
    await agent.call("go", state=state)
    copied = snapshots[0]
    assert copied.memory[0].text == "earlier" and copied.memory is not state.memory
    with anyio.fail_after(10):  # a guard against the hang, not a timing: the call is instant
        reply = await agent.call("again", state=copied)
    assert reply.text == "next"
    assert len(state.memory) == 5  # the original: its own call only


def test_a_state_held_by_a_call_on_another_loop_is_a_usage_error_not_a_hang() -> None:
    """A thread's ``asyncio.run`` holds a state while another loop's call (another
    thread's, ``call_sync``'s worker) asks for it: the lock cannot wake a waiter
    on a second loop, so that call waited forever; it is told instead, and the
    state serves the next call once the first ended."""
    import asyncio
    import threading

    from agentflow.errors import UsageError

    holding, done = threading.Event(), threading.Event()

    def hold() -> str:
        """Hold the conversation until told."""
        holding.set()
        done.wait(60)  # a guard, not a timing: the main thread sets it
        return "held"

    state = AgentState()
    model = ScriptedModel([Reply(tool_calls=[Call("hold", {})]), "first", "second", "third"])
    agent = ReActAgent("loops", model, tools=[hold])
    results: list[str] = []
    first = threading.Thread(target=lambda: results.append(
        asyncio.run(agent.call("one", state=state)).text))
    first.start()
    assert holding.wait(60)
    try:
        with pytest.raises(UsageError, match="held by a call running on another event loop"):
            asyncio.run(agent.call("two", state=state))
        with pytest.raises(UsageError, match="another event loop"):
            agent.call_sync("two", state=state)
    finally:
        done.set()
        first.join(60)
    assert results == ["first"]
    assert agent.call_sync("three", state=state).text == "second"  # free again, any loop
    assert [m.text for m in state.memory if m.role == "user"] == ["one", "three"]


@pytest.mark.parametrize("how", ["acquire", "acquire_nowait"])
def test_two_threads_taking_a_free_state_at_once_do_not_both_get_it(how: str) -> None:
    """Two threads' event loops take one free state at the same instant: the
    check ("is it free?") and the take were separate steps, so both threads
    passed the check before either took it and both calls ran on the state at
    once. Here each thread's read of the flag waits at a barrier for the other
    thread's read: the old code let both reads happen (both took the state);
    now the check and the take are one step, the second thread cannot read
    until the first took the state, the barrier breaks (its bound is the only
    wait, not a timing of the code) and the second thread is told the state
    is held on another loop (``acquire``) or gets ``False`` (``acquire_nowait``)."""
    import asyncio
    import contextlib
    import threading

    from agentflow.errors import UsageError

    both_read = threading.Barrier(2)

    class Watched(AgentState):
        """An ``AgentState`` whose busy flag is read at a barrier."""

        armed = False

        @property  # type: ignore[override]
        def _busy(self) -> bool:
            busy = bool(self.__dict__["busy"])
            if self.armed:
                with contextlib.suppress(threading.BrokenBarrierError):
                    both_read.wait(2)  # the bound of a wait that never comes now
            return busy

        @_busy.setter
        def _busy(self, value: bool) -> None:
            self.__dict__["busy"] = value

    state = Watched()
    state.armed = True
    start = threading.Barrier(2)
    outcomes: list[str] = []

    async def take() -> None:
        start.wait(60)
        if how == "acquire_nowait":
            outcomes.append("took" if state.acquire_nowait() else "told")
            return
        try:
            await state.acquire()
        except UsageError:
            outcomes.append("told")
        else:
            outcomes.append("took")

    threads = [threading.Thread(target=asyncio.run, args=(take(),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["told", "took"]
