"""Tests for agentflow.agent: the ReAct loop, concurrency, state isolation,
cancellation, middleware stages, bad input and logging."""

import functools
import inspect
import logging
import re
import threading
from contextlib import aclosing

import anyio
import anyio.lowlevel
import pytest

from agentflow.agent import ReActAgent
from agentflow.errors import (
    InvalidInputError,
    InvalidModelError,
    ServerError,
    StructuredOutputError,
    ToolDefinitionError,
    ToolNameError,
)
from agentflow.events import (
    CallStarted,
    Complete,
    OutputRetry,
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.execution import CallExecution
from agentflow.loop import call_complete
from agentflow.messages import Msg, TextBlock, ToolResultBlock
from agentflow.middleware.base import Act, Finish, Middleware, ReasonAgain
from agentflow.model import GenerateOptions, TextDelta, Usage
from agentflow.state import AgentState
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

# ----------------------------------------------------------------------------- helpers


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first.
        b: second.
    """
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def collect(agen):
    async with aclosing(agen) as events:
        return [e async for e in events]


def last_user(request: RecordedRequest) -> str:
    return next(m.text for m in reversed(request.messages) if m.role == "user")


def assert_consistent(memory):
    """Every assistant tool call in memory is answered by the next message."""
    for i, m in enumerate(memory):
        if m.tool_uses:
            assert i + 1 < len(memory), "tool call without result at the end of memory"
            answered = {r.tool_use_id for r in memory[i + 1].tool_results}
            assert {c.id for c in m.tool_uses} <= answered


# ----------------------------------------------------------------------------- basic loop


async def test_text_only_call():
    state = AgentState()
    model = ScriptedModel(["hello there"])
    agent = ReActAgent("greeter", model)
    reply = await agent.call("hi", state=state)
    assert reply.role == "assistant"
    assert reply.text == "hello there"
    assert [m.text for m in state.memory] == ["hi", "hello there"]
    assert reply == state.memory[-1]
    (request,) = model.requests
    assert [(m.role, m.text) for m in request.messages] == [("user", "hi")]
    assert request.tools == ()
    assert request.options == GenerateOptions(stream=False)  # call(): nobody reads deltas


async def test_sys_prompt_is_sent_but_not_stored_and_options_are_used():
    state = AgentState()
    options = GenerateOptions(max_tokens=50, temperature=0.1)
    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", model, sys_prompt="be brief", options=options)
    await agent.call("hi", state=state)
    messages = model.requests[0].messages
    assert (messages[0].role, messages[0].text) == ("system", "be brief")
    assert [m.role for m in state.memory] == ["user", "assistant"]
    assert model.requests[0].options == options.with_(stream=False)


async def test_input_forms():
    model = ScriptedModel(["one", "two"])
    agent = ReActAgent("a", model)
    state = AgentState()
    given = Msg("user", "as msg", name="ann")
    await agent.call(["plain", given], state=state)
    assert [m.text for m in model.requests[0].messages] == ["plain", "as msg"]
    assert state.memory[1] is given
    await agent.call(None, state=state)  # no new input: continue the conversation
    assert [m.text for m in model.requests[1].messages] == ["plain", "as msg", "one"]


async def test_tool_round():
    model = ScriptedModel([
        Reply(text="let me add", tool_calls=[Call("add", {"a": "30", "b": 12}, id="c1")]),
        "It is 42.",
    ])
    agent = ReActAgent("calc", model, tools=[add])
    state = AgentState()
    reply = await agent.call("30+12?", state=state)
    assert reply.text == "It is 42."
    assert [m.role for m in state.memory] == ["user", "assistant", "tool", "assistant"]
    assert state.memory[2].content == (ToolResultBlock("c1", "42", name="add", is_json=True),)
    second = model.requests[1]
    assert second.messages[-1] == state.memory[2]
    assert second.messages[-2].tool_uses[0].input == {"a": "30", "b": 12}
    assert second.tool_names == ["add"]
    assert model.requests[0].tools[0].parameters["properties"]["a"]["description"] == "first."


async def test_tool_calls_in_one_reply_run_concurrently():
    state = AgentState()
    ping_ready = anyio.Event()
    pong_ready = anyio.Event()

    async def ping() -> str:
        ping_ready.set()
        with anyio.fail_after(60):
            await pong_ready.wait()
        return "ping done"

    async def pong() -> str:
        pong_ready.set()
        with anyio.fail_after(60):
            await ping_ready.wait()
        return "pong done"

    model = ScriptedModel([
        Reply(tool_calls=[Call("ping", id="1"), Call("pong", id="2")]),
        "both done",
    ])
    agent = ReActAgent("a", model, tools=[ping, pong])
    with anyio.fail_after(120):
        reply = await agent.call("go", state=state)
    assert reply.text == "both done"
    results = state.memory[2].tool_results
    assert [(r.tool_use_id, r.output, r.is_error) for r in results] == [
        ("1", "ping done", False), ("2", "pong done", False)]


async def test_sync_tool_calls_run_concurrently_in_threads():
    state = AgentState()
    barrier = threading.Barrier(2, timeout=60)
    threads = []

    def left() -> str:
        threads.append(threading.get_ident())
        barrier.wait()
        return "L"

    def right() -> str:
        threads.append(threading.get_ident())
        barrier.wait()
        return "R"

    model = ScriptedModel([Reply(tool_calls=[Call("left"), Call("right")]), "done"])
    agent = ReActAgent("a", model, tools=[left, right])
    await agent.call("go", state=state)
    results = state.memory[2].tool_results
    assert [r.output for r in results] == ["L", "R"]
    assert not any(r.is_error for r in results)
    assert threading.get_ident() not in threads
    assert len(set(threads)) == 2


async def test_results_are_in_call_order_not_finish_order():
    state = AgentState()
    finished = []

    async def slow(x: int) -> str:
        await anyio.sleep(0.05)
        finished.append("slow")
        return f"slow {x}"

    async def fast(x: int) -> str:
        finished.append("fast")
        return f"fast {x}"

    model = ScriptedModel([
        Reply(tool_calls=[Call("slow", {"x": 1}, id="a"), Call("fast", {"x": 2}, id="b"),
                          Call("slow", {"x": 3}, id="c")]),
        "done",
    ])
    agent = ReActAgent("a", model, tools=[slow, fast])
    events = await collect(agent.stream("go", state=state))
    assert finished[0] == "fast"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(e.id, e.output) for e in results] == [("a", "slow 1"), ("b", "fast 2"),
                                                    ("c", "slow 3")]
    assert [r.tool_use_id for r in state.memory[2].tool_results] == ["a", "b", "c"]


async def test_calls_sharing_an_id_keep_their_own_results():
    state = AgentState()
    model = ScriptedModel([
        Reply(tool_calls=[Call("add", {"a": 1, "b": 1}, id="dup"),
                          Call("mul", {"a": 3, "b": 3}, id="dup")]),
        "done",
    ])
    agent = ReActAgent("a", model, tools=[add, mul])
    await agent.call("go", state=state)
    assert sorted(r.output for r in state.memory[2].tool_results) == ["2", "9"]


async def test_unknown_tool_gets_error_result_and_loop_goes_on():
    model = ScriptedModel([
        Reply(tool_calls=[Call("divide", {"a": 1}, id="x"), Call("add", {"a": 1, "b": 2},
                                                                 id="y")]),
        "recovered",
    ])
    agent = ReActAgent("a", model, tools=[add, mul])
    events = await collect(agent.stream("go"))
    bad, good = [e for e in events if isinstance(e, ToolResult)]
    assert bad.is_error
    assert bad.name == "divide"
    assert "'divide'" in bad.output
    assert "not found" in bad.output
    assert "add, mul" in bad.output
    assert (good.output, good.is_error) == ("3", False)
    assert events[-1].message.text == "recovered"
    assert len(model.requests) == 2


async def test_tool_errors_do_not_crash_the_agent():
    state = AgentState()
    def broken(x: int) -> int:
        raise RuntimeError("kaput")

    model = ScriptedModel([
        Reply(tool_calls=[Call("broken", {"x": "not a number"}, id="v"),
                          Call("broken", {"x": 1}, id="e")]),
        "ok",
    ])
    agent = ReActAgent("a", model, tools=[broken])
    reply = await agent.call("go", state=state)
    assert reply.text == "ok"
    validation, failure = state.memory[2].tool_results
    assert validation.is_error and "- x:" in validation.output
    assert failure.is_error and failure.output == "RuntimeError: kaput"


async def test_max_iters_ends_with_stop_reason():
    state = AgentState()
    model = FunctionModel(lambda r: Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]))
    agent = ReActAgent("looper", model, tools=[add], max_iters=3)
    with anyio.fail_after(60):
        events = await collect(agent.stream("loop forever", state=state))
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.stop_reason == "max_iters"
    assert len(model.requests) == 3
    assert complete.usage.requests == 3
    assert_consistent(state.memory)
    assert state.memory[-1].role == "tool"


def test_max_iters_must_be_positive():
    with pytest.raises(ValueError, match="max_iters"):
        ReActAgent("a", ScriptedModel(), max_iters=0)


async def test_call_returns_the_complete_message_of_stream():
    """call() is stream() drained: a subclass's stream decides what call returns."""
    sentinel = Msg.assistant("from stream")

    class Custom(ReActAgent):
        async def stream(self, msg, output=None, *, state=None, strategy=None):
            yield CallStarted("cid", self.name, self.id)
            yield ReasoningChunk("x", 1)
            yield Complete(sentinel, None, Usage(), "completed")

    assert await Custom("c", ScriptedModel()).call("hi") is sentinel


async def test_call_and_stream_agree_on_the_reply():
    def script():
        return ScriptedModel([Reply(tool_calls=[Call("add", {"a": 2, "b": 2}, id="k")]),
                              Reply(text="four", chunk_size=1)])

    via_stream, stream_state = ReActAgent("a", script(), tools=[add]), AgentState()
    events = await collect(via_stream.stream("2+2", state=stream_state))
    complete = events[-1]
    via_call, call_state = ReActAgent("a", script(), tools=[add]), AgentState()
    reply = await via_call.call("2+2", state=call_state)
    assert complete.message.text == reply.text == "four"
    assert complete.message.content == reply.content
    assert complete.message == stream_state.memory[-1]
    assert reply == call_state.memory[-1]
    assert [m.content for m in stream_state.memory] == [
        m.content for m in call_state.memory]


async def test_event_order():
    model = ScriptedModel([
        Reply(thinking="abcd", text="efgh", chunk_size=2,
              tool_calls=[Call("add", {"a": 1, "b": 2}, id="t1"),
                          Call("mul", {"a": 2, "b": 5}, id="t2")]),
        Reply(text="done"),
    ])
    agent = ReActAgent("ordered", model, tools=[add, mul])
    events = await collect(agent.stream("go"))
    assert [type(e).__name__ for e in events] == [
        "CallStarted",
        "ThinkingChunk", "ThinkingChunk",
        "ReasoningChunk", "ReasoningChunk",
        "ToolUse", "ToolUse",
        "ToolResult", "ToolResult",
        "ReasoningChunk",
        "Complete",
    ]
    started = events[0]
    assert (started.agent_name, started.agent_id) == ("ordered", agent.id)
    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["ab", "cd"]
    assert [(e.text, e.iteration) for e in events if isinstance(e, ReasoningChunk)] == [
        ("ef", 1), ("gh", 1), ("done", 2)]
    assert [(e.id, e.name, dict(e.input)) for e in events if isinstance(e, ToolUse)] == [
        ("t1", "add", {"a": 1, "b": 2}), ("t2", "mul", {"a": 2, "b": 5})]
    assert [e.output for e in events if isinstance(e, ToolResult)] == ["3", "10"]
    assert events[-1].stop_reason == "completed"
    assert events[-1].output is None


async def test_call_makes_no_event_nobody_reads():
    """``call()`` runs the loop's steps as a coroutine (``call_complete``): it
    returns ``Complete`` and makes no event at all; ``stream()`` runs the same
    steps and yields every event (``test_event_order``), with the same memory."""
    state, streamed_state = AgentState(), AgentState()
    script = [Reply(text="efgh", chunk_size=2, tool_calls=[Call("add", {"a": 1, "b": 2}, id="t1")]),
              Reply(text="done")]
    agent = ReActAgent("drained", ScriptedModel(script), tools=[add])
    assert not inspect.isasyncgenfunction(call_complete)
    complete = await agent._complete("go", None, state, None, None, None, deltas=False)
    assert complete.message.text == "done" and complete.usage.requests == 2
    streamed = ReActAgent("streamed", ScriptedModel(script), tools=[add])
    kinds = [type(e).__name__ for e in await collect(streamed.stream("go", state=streamed_state))]
    assert kinds == ["CallStarted", "ReasoningChunk", "ReasoningChunk", "ToolUse",
                     "ToolResult", "ReasoningChunk", "Complete"]
    assert [m.content for m in state.memory] == [m.content for m in streamed_state.memory]


async def test_call_ids_are_unique_per_call():
    agent = ReActAgent("a", ScriptedModel(["1", "2"]))
    first = (await collect(agent.stream("x")))[0]
    second = (await collect(agent.stream("y")))[0]
    assert first.call_id != second.call_id


async def test_usage_is_summed_over_requests():
    model = ScriptedModel([
        Reply(tool_calls=[Call("add", {"a": 1, "b": 1})], usage=Usage(100, 10, 50, 3)),
        Reply(tool_calls=[Call("add", {"a": 2, "b": 2})], usage=Usage(200, 20, 0, 0)),
        Reply(text="done", usage=Usage(300, 30, 150, 7)),
    ])
    agent = ReActAgent("a", model, tools=[add])
    complete = (await collect(agent.stream("go")))[-1]
    assert complete.usage == Usage(600, 60, 200, 10, requests=3)


# ------------------------------------------------------------------ isolation & concurrency


async def test_200_concurrent_calls_of_one_agent_are_isolated():
    async def echo(tag: str) -> str:
        await anyio.lowlevel.checkpoint()
        return f"echo-{tag}"

    async def answer(request: RecordedRequest) -> Reply:
        q = last_user(request)
        await anyio.sleep((int(q[1:]) % 5) * 0.001)
        last = request.messages[-1]
        if last.role == "user":
            return Reply(tool_calls=[Call("echo", {"tag": q})])
        return Reply(text=f"answer to {q}: {last.tool_results[0].output}")

    model = FunctionModel(answer)
    agent = ReActAgent("shared", model, tools=[echo])
    attributes_before = set(vars(agent))
    states = [AgentState() for _ in range(200)]
    replies: dict[int, Msg] = {}

    async def one(n: int) -> None:
        replies[n] = await agent.call(f"q{n}", state=states[n])

    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            for n in range(200):
                tg.start_soon(one, n)

    assert len(model.requests) == 400
    for n, state in enumerate(states):
        assert replies[n].text == f"answer to q{n}: echo-q{n}"
        assert [m.role for m in state.memory] == ["user", "assistant", "tool", "assistant"]
        assert state.memory[0].text == f"q{n}"
        assert state.memory[2].tool_results[0].output == f"echo-q{n}"
        assert set(re.findall(rb"q\d+", state.to_json())) == {f"q{n}".encode()}
    assert not hasattr(agent, "state")  # the agent holds no conversation of its own
    assert set(vars(agent)) == attributes_before


async def test_calls_sharing_a_state_are_serialized():
    log: list[tuple[str, str]] = []

    async def answer(request: RecordedRequest) -> Reply:
        q = last_user(request)
        log.append(("start", q))
        await anyio.sleep(0.01)
        log.append(("end", q))
        if request.messages[-1].role == "user":
            return Reply(tool_calls=[Call("add", {"a": 1, "b": 1})], delay=0.005)
        return Reply(text=f"re {q}", delay=0.005)

    model = FunctionModel(answer)
    agent = ReActAgent("a", model, tools=[add])
    state = AgentState()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(agent.call, "A", state=state))
            await anyio.sleep(0.002)
            tg.start_soon(functools.partial(agent.call, "B", state=state))

    order = [q for _, q in log]
    assert order == ["A"] * 4 + ["B"] * 4  # no interleaving of the two calls' requests
    texts = [m.text for m in state.memory]
    assert texts[0] == "A" and texts[3] == "re A"
    assert texts[4] == "B" and texts[7] == "re B"
    assert len(state.memory) == 8
    assert_consistent(state.memory)
    first_b_request = model.requests[2]
    assert first_b_request.messages[:4] == tuple(state.memory[:4])  # B saw A's whole call


async def test_calls_with_separate_states_run_in_parallel():
    arrived = {"A": anyio.Event(), "B": anyio.Event()}

    async def answer(request: RecordedRequest) -> str:
        q = last_user(request)
        arrived[q].set()
        other = "B" if q == "A" else "A"
        with anyio.fail_after(60):
            await arrived[other].wait()  # deadlocks unless both calls run at once
        return f"re {q}"

    agent = ReActAgent("a", FunctionModel(answer))
    a, b = AgentState(), AgentState()
    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(agent.call, "A", state=a))
            tg.start_soon(functools.partial(agent.call, "B", state=b))
    assert [m.text for m in a.memory] == ["A", "re A"]
    assert [m.text for m in b.memory] == ["B", "re B"]


# ------------------------------------------------------------------ cancellation & errors


async def _prepared(replies, tools=()):
    """An agent and a state that already holds one finished call."""
    model = ScriptedModel(["first answer", *replies, "after"])
    agent = ReActAgent("a", model, tools=tools)
    state = AgentState()
    await agent.call("first", state=state)
    return model, agent, state


async def _assert_recovers(model, agent, state, before):
    assert state.to_json() == before
    assert_consistent(state.memory)
    with anyio.fail_after(60):  # the state's lock was released
        reply = await agent.call("again", state=state)
    assert reply.text == "after"
    sent = model.requests[-1].messages
    assert [m.text for m in sent] == ["first", "first answer", "again"]


async def test_consumer_breaks_mid_stream():
    model, agent, state = await _prepared(
        [Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]), Reply(text="abcdef", chunk_size=2)],
        tools=[add],
    )
    before = state.to_json()
    seen = []
    async with aclosing(agent.stream("second", state=state)) as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, ReasoningChunk) and event.iteration == 2:
                break  # after a tool round, mid-way through the second reply
    assert any(isinstance(e, ToolResult) for e in seen)
    await _assert_recovers(model, agent, state, before)


async def test_consumer_breaks_between_tool_call_and_result():
    model, agent, state = await _prepared(
        [Reply(tool_calls=[Call("add", {"a": 1, "b": 1})])], tools=[add])
    before = state.to_json()
    async with aclosing(agent.stream("second", state=state)) as events:
        async for event in events:
            if isinstance(event, ToolUse):
                break
    await _assert_recovers(model, agent, state, before)


async def test_consumer_breaks_without_aclosing():
    model, agent, state = await _prepared([Reply(text="abcdef", chunk_size=2)])
    before = state.to_json()
    async for event in agent.stream("second", state=state):
        if isinstance(event, ReasoningChunk):
            break
    with anyio.fail_after(30):  # asyncio finalizes the abandoned generator: it frees the state
        await state.acquire()
    state.release()
    await _assert_recovers(model, agent, state, before)


async def test_task_cancelled_mid_tool():
    started = anyio.Event()
    cancelled = []

    async def slow() -> str:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise
        return "never"

    model, agent, state = await _prepared(
        [Reply(tool_calls=[Call("slow"), Call("add", {"a": 1, "b": 2})])], tools=[slow, add])
    before = state.to_json()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(agent.call, "second", state=state))
            await started.wait()
            tg.cancel_scope.cancel()
    assert cancelled == [True]
    await _assert_recovers(model, agent, state, before)


async def test_model_raising_mid_stream():
    model, agent, state = await _prepared(
        [Reply(text="abcdef", chunk_size=1, error=RuntimeError("stream broke"), error_after=2)])
    before = state.to_json()
    seen = []
    with pytest.raises(RuntimeError, match="stream broke"):
        async with aclosing(agent.stream("second", state=state)) as events:
            async for event in events:
                seen.append(event)
    assert [e.text for e in seen if isinstance(e, ReasoningChunk)] == ["a", "b"]
    await _assert_recovers(model, agent, state, before)


async def test_provider_error_after_a_tool_round_leaves_state_unchanged():
    model, agent, state = await _prepared(
        [Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]),
         Reply(text="xyz", error=ServerError("down", status=500), error_after=1)],
        tools=[add],
    )
    before = state.to_json()
    with pytest.raises(ServerError, match="down"):
        await agent.call("second", state=state)
    await _assert_recovers(model, agent, state, before)


# ----------------------------------------------------------------------------- middleware


class Recorder(Middleware):
    def __init__(self, tag: str, log: list) -> None:
        self.tag = tag
        self.log = log

    async def on_call_start(self, ex):
        self.log.append((self.tag, "on_call_start"))

    async def pre_reasoning(self, ex, request):
        self.log.append((self.tag, "pre_reasoning"))

    async def post_reasoning(self, ex, reply):
        self.log.append((self.tag, "post_reasoning"))

    async def post_acting(self, ex, results):
        self.log.append((self.tag, "post_acting"))
        return False

    async def on_call_end(self, ex):
        self.log.append((self.tag, "on_call_end"))


async def test_middleware_stages_run_in_order():
    log: list = []
    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]), "done"])
    agent = ReActAgent("a", model, tools=[add],
                       middleware=[Recorder("A", log), Recorder("B", log)])
    await agent.call("go")
    stages = ["on_call_start", "pre_reasoning", "post_reasoning", "post_acting",
              "pre_reasoning", "post_reasoning", "on_call_end"]
    assert log == [(tag, stage) for stage in stages for tag in ("A", "B")]


async def test_on_call_start_runs_before_input_is_in_memory_and_sees_the_call():
    seen = {}

    class Peek(Middleware):
        async def on_call_start(self, ex):
            seen["memory"] = list(ex.memory)
            seen["ex"] = ex

    agent = ReActAgent("a", ScriptedModel(["ok"]), middleware=[Peek()])
    events = await collect(agent.stream("hello"))
    assert seen["memory"] == []
    assert isinstance(seen["ex"], CallExecution)
    assert seen["ex"].call_id == events[0].call_id
    assert (seen["ex"].agent_name, seen["ex"].agent_id) == ("a", agent.id)
    assert not hasattr(seen["ex"], "__dict__")  # slots: no per-call attribute dict in flight


async def test_on_chunk_sees_every_chunk_and_may_emit():
    class Chunks(Middleware):
        def __init__(self):
            self.texts = []

        def on_chunk(self, ex, chunk, reply):
            if isinstance(chunk, TextDelta):
                self.texts.append((chunk.text, reply.text))
                return OutputRetry("forcing", len(self.texts), chunk.text)
            return None

    hook = Chunks()
    agent = ReActAgent("a", ScriptedModel([Reply(text="abc", chunk_size=1)]), middleware=[hook])
    events = await collect(agent.stream("go"))
    assert hook.texts == [("a", "a"), ("b", "ab"), ("c", "abc")]
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["CallStarted"] + ["ReasoningChunk", "OutputRetry"] * 3 + ["Complete"]


async def test_pre_reasoning_edits_the_request_not_memory():
    class Edit(Middleware):
        async def pre_reasoning(self, ex, request):
            request.messages.insert(0, Msg.system("injected rules"))
            request.tools = [t for t in request.tools if t.name != "mul"]
            request.options = request.options.with_(temperature=0.0)

    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", model, tools=[add, mul], middleware=[Edit()])
    state = AgentState()
    await agent.call("hi", state=state)
    request = model.requests[0]
    assert [(m.role, m.text) for m in request.messages] == [("system", "injected rules"),
                                                            ("user", "hi")]
    assert request.tool_names == ["add"]
    assert request.options.temperature == 0.0
    assert [m.text for m in state.memory] == ["hi", "ok"]
    assert agent.toolkit.names == ["add", "mul"]


async def test_pre_reasoning_request_is_a_snapshot():
    class Late(Middleware):
        async def pre_reasoning(self, ex, request):
            if ex.iteration == 1:
                ex.memory.append(Msg.system("added after the snapshot"))

    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]), "done"])
    agent = ReActAgent("a", model, tools=[add], middleware=[Late()])
    await agent.call("go")
    assert "added after the snapshot" not in [m.text for m in model.requests[0].messages]
    assert "added after the snapshot" in [m.text for m in model.requests[1].messages]


async def test_reason_again_injects_messages_seen_only_by_the_next_request():
    class Nudge(Middleware):
        async def post_reasoning(self, ex, reply):
            if ex.iteration == 1:
                return ReasonAgain((Msg.user("please be more precise"),))
            return None

    model = ScriptedModel(["vague", "precise"])
    agent = ReActAgent("a", model, middleware=[Nudge()])
    reply = await agent.call("question")
    first, second = model.requests
    assert [m.text for m in first.messages] == ["question"]
    assert [m.text for m in second.messages] == ["question", "vague", "please be more precise"]
    assert reply.text == "precise"


async def test_post_reasoning_finish_wins_and_every_middleware_sees_the_reply():
    log: list = []

    class Stop(Middleware):
        async def post_reasoning(self, ex, reply):
            return Finish("stopped")

    calls = []

    def count() -> str:
        calls.append(1)
        return "ran"

    model = ScriptedModel([Reply(text="partial", tool_calls=[Call("count")])])
    agent = ReActAgent("a", model, tools=[count], middleware=[Stop(), Recorder("R", log)])
    complete = (await collect(agent.stream("go")))[-1]
    assert complete.stop_reason == "stopped"
    assert complete.message.text == "partial"
    assert calls == []
    assert ("R", "post_reasoning") in log  # decisions merge: none hides the reply
    assert ("R", "post_acting") not in log  # Finish: nothing ran
    assert len(model.requests) == 1


async def test_act_decision_answers_calls_without_running_them():
    state = AgentState()
    calls = []

    def lookup(q: str) -> str:
        calls.append(q)
        return f"looked up {q}"

    class Cache(Middleware):
        async def post_reasoning(self, ex, reply):
            cached = [c for c in reply.tool_uses if c.input.get("q") == "cached"]
            return Act({c.id: ToolResultBlock(c.id, "from cache", name=c.name) for c in cached})

    model = ScriptedModel([
        Reply(tool_calls=[Call("lookup", {"q": "cached"}, id="1"),
                          Call("lookup", {"q": "fresh"}, id="2")]),
        "done",
    ])
    agent = ReActAgent("a", model, tools=[lookup], middleware=[Cache()])
    await agent.call("go", state=state)
    assert calls == ["fresh"]
    assert [r.output for r in state.memory[2].tool_results] == ["from cache",
                                                                      "looked up fresh"]


async def test_post_acting_true_stops_the_agent():
    state = AgentState()
    class StopAfterTools(Middleware):
        async def post_acting(self, ex, results):
            ex.emit(OutputRetry("forcing", 1, "emitted from post_acting"))
            return True

    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]), "never sent"])
    agent = ReActAgent("a", model, tools=[add], middleware=[StopAfterTools()])
    events = await collect(agent.stream("go", state=state))
    assert events[-1].stop_reason == "stopped"
    assert len(model.requests) == 1
    assert isinstance(events[-2], OutputRetry)
    assert isinstance(events[-3], ToolResult)
    assert_consistent(state.memory)
    assert [m.role for m in state.memory] == ["user", "assistant", "tool"]


async def test_on_call_end_may_rewrite_memory_and_reply():
    class Tidy(Middleware):
        async def on_call_end(self, ex):
            ex.memory = [m for m in ex.memory if m.role != "tool" and not m.tool_uses]
            ex.reply = Msg.assistant("rewritten reply")

    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]), "2"])
    agent = ReActAgent("a", model, tools=[add], middleware=[Tidy()])
    state = AgentState([Msg.user("older")])
    reply = await agent.call("go", state=state)
    assert [m.text for m in state.memory] == ["older", "go", "2"]
    assert reply.text == "rewritten reply"


async def test_middleware_state_stays_per_call():
    """Hooks keep per-call data on ex.extra; concurrent calls never see each other's."""

    class Counter(Middleware):
        async def pre_reasoning(self, ex, request):
            ex.extra["steps"] = ex.extra.get("steps", 0) + 1
            await anyio.lowlevel.checkpoint()

        async def on_call_end(self, ex):
            ex.reply = Msg.assistant(f"steps={ex.extra['steps']}")

    def script(request: RecordedRequest) -> Reply:
        if request.messages[-1].role == "user" and last_user(request) == "two":
            return Reply(tool_calls=[Call("add", {"a": 1, "b": 1})])
        return Reply(text="done")

    agent = ReActAgent("a", FunctionModel(script), tools=[add], middleware=[Counter()])
    results = {}

    async def run(q):
        results[q] = (await agent.call(q, state=AgentState())).text

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "one")
        tg.start_soon(run, "two")
    assert results == {"one": "steps=1", "two": "steps=2"}


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (42, "int"),
        ([42], "message 0 is a int"),
        (["ok", 3.5], "message 1 is a float"),
        ([], "empty"),
        (b"bytes", "bytes"),
        ({"role": "user"}, "dict"),
    ],
)
async def test_bad_input_raises_before_any_request(bad, needle):
    state = AgentState()
    model = ScriptedModel(["never"])
    agent = ReActAgent("a", model)
    with pytest.raises(InvalidInputError, match=re.escape(needle)):
        await agent.call(bad, state=state)
    with pytest.raises(InvalidInputError):
        await collect(agent.stream(bad, state=state))
    assert model.requests == []
    assert state.memory == []


@pytest.mark.parametrize("bad", [object(), None, 42, ["m"]])
def test_model_that_is_not_a_chat_model(bad):
    with pytest.raises(InvalidModelError) as info:
        ReActAgent("a", bad)
    assert "ChatModel" in str(info.value)
    assert type(bad).__name__ in str(info.value)


def test_tool_that_is_not_callable():
    model = ScriptedModel()
    with pytest.raises(ToolDefinitionError) as info:
        ReActAgent("a", model, tools=[add, 42])
    assert "callable" in str(info.value) and "42" in str(info.value)
    assert model.requests == []


def test_duplicate_tool_names():
    def other(x: int) -> int:
        return x

    other.__name__ = "add"
    with pytest.raises(ToolNameError, match="duplicate tool name 'add'"):
        ReActAgent("a", ScriptedModel(), tools=[add, other])


def test_reserved_output_tool_name():
    def generate_response(x: int) -> int:
        return x

    with pytest.raises(ToolNameError, match="generate_response"):
        ReActAgent("a", ScriptedModel(), tools=[generate_response])


def test_single_callable_instead_of_tool_list():
    with pytest.raises(ToolDefinitionError, match="list"):
        ReActAgent("a", ScriptedModel(), tools=add)


async def test_model_class_instead_of_instance():
    with pytest.raises(InvalidModelError):
        ReActAgent("a", ScriptedModel)


# ----------------------------------------------------------------------------- logging


def _agentflow_records(caplog):
    return [r for r in caplog.records if r.name.split(".")[0] == "agentflow"]


async def test_logging_is_bound_and_quiet_per_chunk(caplog):
    caplog.set_level(logging.DEBUG, logger="agentflow")

    async def run(chunks: int):
        caplog.clear()
        text = "x" * chunks
        agent = ReActAgent("logger-test", ScriptedModel([Reply(text=text, chunk_size=1)]))
        events = await collect(agent.stream("hi"))
        assert sum(isinstance(e, ReasoningChunk) for e in events) == chunks
        return agent, events[0], _agentflow_records(caplog)

    _, _, few = await run(1)
    agent, started, many = await run(200)
    assert len(many) == len(few)  # nothing per chunk, at any level
    assert not [r for r in many if r.levelno >= logging.INFO]
    assert many, "expected debug records for call start/end"
    for record in many:
        message = record.getMessage()
        assert "agent='logger-test'" in message
        assert f"agent_id='{agent.id}'" in message
        assert f"call_id='{started.call_id}'" in message


async def test_max_iters_is_logged_once_at_info_with_bindings(caplog):
    caplog.set_level(logging.INFO, logger="agentflow")
    model = FunctionModel(lambda r: Reply(tool_calls=[Call("add", {"a": 1, "b": 1})],
                                          chunk_size=2))
    agent = ReActAgent("bounded", model, tools=[add], max_iters=2)
    events = await collect(agent.stream("go"))
    records = _agentflow_records(caplog)
    assert len(records) == 1
    message = records[0].getMessage()
    assert "call.max_iters" in message
    assert f"call_id='{events[0].call_id}'" in message
    assert "agent='bounded'" in message


async def test_tool_inputs_and_model_text_are_not_logged_at_info(caplog):
    caplog.set_level(logging.INFO, logger="agentflow")
    model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": 1, "b": 1})]),
                           Reply(text="secret-ish answer")])
    agent = ReActAgent("a", model, tools=[add])
    await agent.call("sk-THIS-IS-NOT-A-KEY")
    logged = " ".join(r.getMessage() for r in _agentflow_records(caplog))
    assert "sk-THIS-IS-NOT-A-KEY" not in logged
    assert "secret-ish answer" not in logged


def test_repr_names_agent_and_model():
    assert repr(ReActAgent("bot", ScriptedModel(name="m1"))) == "ReActAgent(name='bot', model='m1')"


async def test_reply_messages_are_plain_text_blocks():
    agent = ReActAgent("a", ScriptedModel([Reply(text="abc", chunk_size=1)]))
    reply = await agent.call("x")
    assert reply.content == (TextBlock("abc"),)


async def test_agent_as_async_context_manager_closes_its_model():
    closed = []

    class Closing(ScriptedModel):
        async def aclose(self):
            closed.append(True)

    async with ReActAgent("a", Closing(["hi"])) as agent:
        assert (await agent.call("x")).text == "hi"
    assert closed == [True]


async def test_output_missing_after_max_iters_says_so():
    model = ScriptedModel([Reply(tool_calls=[Call("nope", {})])] * 2)
    reply = await ReActAgent("a", model, max_iters=2).call("x", dict[str, int])
    with pytest.raises(StructuredOutputError, match="max_iters"):
        _ = reply.output


async def test_call_says_nobody_reads_deltas_and_stream_leaves_the_transport():
    model = ScriptedModel(["one", "two", "three"])
    seen: list[bool] = []

    class Watch(Middleware):
        async def on_call_start(self, ex: CallExecution) -> None:
            seen.append(ex.deltas_read)

    agent = ReActAgent("a", model, middleware=[Watch()])
    await agent.call("hi", state=AgentState())
    await collect(agent.stream("hi", state=AgentState()))
    agent.options = GenerateOptions(stream=True)  # the options choose: call() keeps it
    await agent.call("hi", state=AgentState())
    assert [r.options.stream for r in model.requests] == [False, None, True]
    assert seen == [False, True, False]



async def test_middleware_added_to_the_list_after_the_agent_was_made_runs_every_stage():
    log: list = []

    class Chunks(Recorder):
        def on_chunk(self, ex, chunk, reply):
            if isinstance(chunk, TextDelta):
                log.append((self.tag, "on_chunk"))
            return None

    agent = ReActAgent("a", ScriptedModel(["one", "two"]))
    await agent.call("first")  # the hook table of the original list is built and used
    agent.middleware.append(Chunks("L", log))
    await agent.call("second")
    assert log == [("L", "on_call_start"), ("L", "pre_reasoning"), ("L", "on_chunk"),
                   ("L", "post_reasoning"), ("L", "on_call_end")]


async def test_a_chunk_hook_for_deltas_only_runs_under_stream_not_call():
    seen: list = []

    class Partials(Middleware):
        chunks_for_deltas_only = True

        def on_chunk(self, ex, chunk, reply):
            seen.append(("partials", ex.deltas_read))
            return None

    class Every(Middleware):
        def on_chunk(self, ex, chunk, reply):
            seen.append(("every", ex.deltas_read))
            return None

    model = ScriptedModel([Reply(text="ab", chunk_size=1)] * 2)
    agent = ReActAgent("a", model, middleware=[Partials(), Every()])
    await agent.call("go")
    assert seen and set(seen) == {("every", False)}  # user hooks still see every chunk
    seen.clear()
    await collect(agent.stream("go"))
    assert ("partials", True) in seen and ("every", True) in seen


def test_pickling_an_agent_says_to_build_it_in_each_process():
    """Ray and multiprocessing pickle what they send to a worker: an agent holds
    live connections (its model's HTTP session, locks), so pickling it failed
    deep inside with ``cannot pickle '_thread.lock' object``. It is a clear
    ``TypeError`` naming what to pass instead; ``copy.copy`` still works."""
    import copy
    import pickle

    from agentflow.providers._openai_compat import OpenAICompatibleModel

    for model in (ScriptedModel(["hi"]),
                  OpenAICompatibleModel("m", base_url="http://127.0.0.1:9/v1", api_key="k")):
        agent = ReActAgent("bot", model)
        for copy_out in (pickle.dumps, copy.deepcopy):
            with pytest.raises(TypeError, match=r"'bot'.* live connections.*build it in each "
                                                r"process.*factory") as caught:
                copy_out(agent)
            assert "_thread.lock" not in str(caught.value)
    twin = copy.copy(ReActAgent("bot", ScriptedModel(["hi"])))
    assert twin.call_sync("x").text == "hi"
