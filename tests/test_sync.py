"""The sync twin: call_sync, extract_many_sync, close; inside and outside a
running event loop, and the worker thread's own deadlock guard."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated

import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    Derived,
    InvalidInputError,
    ModelProfile,
    ProviderConnectionError,
    ReActAgent,
    StructuredOutputError,
    UsageError,
)
from agentflow.batch import ExtractResult
from agentflow.sync import extract_many_sync, run_sync
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

GR = "generate_response"


class Word(BaseModel):
    word: str
    length: Annotated[int, Derived()]  # computed, not written: grounding leaves it alone


def word_model() -> FunctionModel:
    async def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        await asyncio.sleep(0.001)
        if text == "prose":
            return Reply(text="no tools for me")
        return Reply(tool_calls=[Call(GR, {"word": text, "length": len(text)})])

    return FunctionModel(answer, profile=ModelProfile())


def test_call_sync_returns_what_call_returns() -> None:
    agent = ReActAgent("t", word_model())
    state = AgentState()
    reply = agent.call_sync("hello", Word, state=state)
    assert reply.output == Word(word="hello", length=5)
    async_state = AgentState()
    again = asyncio.run(ReActAgent("t", word_model()).call("hello", Word, state=async_state))
    assert again.output == reply.output
    assert [m.role for m in state.memory] == [m.role for m in async_state.memory]
    assert state.memory[-1].text == async_state.memory[-1].text
    agent.close()


def test_call_sync_runs_on_one_worker_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def answer(request: RecordedRequest) -> Reply:
        loops.append(asyncio.get_running_loop())
        return Reply(text="ok")

    agent = ReActAgent("t", FunctionModel(answer))
    agent.call_sync("a")
    agent.call_sync("b")
    assert len(loops) == 2 and loops[0] is loops[1]  # an HTTP session made once stays valid


def test_call_sync_raises_what_call_raises() -> None:
    async def prose(request: RecordedRequest) -> Reply:
        return Reply(text="no tools for me")

    agent = ReActAgent("t", FunctionModel(prose, profile=ModelProfile()))
    reply = agent.call_sync("x", Word)
    with pytest.raises(StructuredOutputError):
        _ = reply.output

    async def broken(request: RecordedRequest) -> Reply:
        raise ProviderConnectionError("stream cut", partial=True)

    state = AgentState()
    with pytest.raises(ProviderConnectionError):
        ReActAgent("t", FunctionModel(broken)).call_sync("x", state=state)
    assert state.memory == []  # a failed call saves nothing
    with pytest.raises(InvalidInputError):
        agent.call_sync([])


async def test_call_sync_inside_a_running_loop_uses_the_worker_thread() -> None:
    # A notebook cell or an async def: the call runs on the worker loop and
    # blocks this loop until it ends (documented fallback), instead of failing.
    seen: list[threading.Thread] = []

    async def answer(request: RecordedRequest) -> Reply:
        seen.append(threading.current_thread())
        return Reply(tool_calls=[Call(GR, {"word": "x", "length": 1})])

    agent = ReActAgent("t", FunctionModel(answer, profile=ModelProfile()))
    reply = agent.call_sync("x", Word)
    assert reply.output == Word(word="x", length=1)
    assert seen and seen[0] is not threading.current_thread()


def test_sync_call_from_the_worker_loop_is_a_clear_error() -> None:
    agent = ReActAgent("t", ScriptedModel(["ok"]))

    async def inner() -> None:
        agent.call_sync("nested")  # would wait for itself forever

    with pytest.raises(UsageError, match="worker loop"):
        run_sync(inner)


def test_async_tool_calling_call_sync_gets_an_error_result_not_a_hang() -> None:
    helper = ReActAgent("helper", ScriptedModel(["never"]))

    async def ask_helper(q: str) -> str:
        """Ask another agent."""
        return helper.call_sync(q).text

    model = ScriptedModel([Reply(tool_calls=[Call("ask_helper", {"q": "hi"})]), "done"])
    agent = ReActAgent("t", model, tools=[ask_helper])
    reply = agent.call_sync("go")
    assert reply.text == "done"
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "worker loop" in str(result.output)


def test_sync_tool_may_call_call_sync() -> None:
    # sync tools run in threads of their own, so a nested sync call is fine
    helper = ReActAgent("helper", ScriptedModel(["from helper"]))

    def ask_helper(q: str) -> str:
        """Ask another agent."""
        return helper.call_sync(q).text

    model = ScriptedModel([Reply(tool_calls=[Call("ask_helper", {"q": "hi"})]), "done"])
    reply = ReActAgent("t", model, tools=[ask_helper]).call_sync("go")
    assert reply.text == "done"
    assert model.requests[1].messages[-1].tool_results[0].output == "from helper"


def test_extract_many_sync_same_results_in_input_order() -> None:
    agent = ReActAgent("t", word_model())
    results = list(extract_many_sync(agent, ["alpha", "prose", ("id-3", "gamma")], Word,
                                     concurrency=2))
    assert all(isinstance(r, ExtractResult) for r in results)
    assert [r.id for r in results] == ["0", "1", "id-3"]
    assert results[0].output == Word(word="alpha", length=5)
    assert not results[1].ok and results[1].error is not None
    assert results[2].output == Word(word="gamma", length=5)


def test_extract_many_sync_breaking_out_cancels_the_rest() -> None:
    started: list[str] = []

    async def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        started.append(text)
        await asyncio.sleep(0 if text == "0" else 5)
        return Reply(tool_calls=[Call(GR, {"word": text, "length": 1})])

    agent = ReActAgent("t", FunctionModel(answer, profile=ModelProfile()))
    it = extract_many_sync(agent, [str(i) for i in range(4)], Word, concurrency=4,
                           order="completed")
    first = next(it)
    assert first.id == "0"
    it.close()  # returns promptly: the sleeping calls were cancelled, not awaited


def test_extract_many_sync_bad_arguments() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        next(extract_many_sync(ReActAgent("t", word_model()), ["a"], Word, concurrency=0))


def test_a_script_using_call_sync_exits() -> None:
    # the worker thread must never keep the interpreter alive
    import subprocess
    import sys

    script = (
        "from agentflow import ReActAgent\n"
        "from agentflow.testing import ScriptedModel\n"
        "agent = ReActAgent('t', ScriptedModel(['hello']))\n"
        "print(agent.call_sync('hi').text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello"


async def test_a_script_that_never_closes_its_agent_exits_without_unclosed_warnings() -> None:
    """``call_sync`` on a vendor model, then exit without ``close()``: the worker
    loop's HTTP session is closed at the interpreter's exit, as ``asyncio.run``
    closes its loop's; it was dropped open ("Unclosed client session",
    "Unclosed connector" on stderr, the pooled sockets left to the GC)."""
    import subprocess
    import sys

    from tests.fakes.base import FakeReply
    from tests.fakes.openai import OpenAIFake

    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text="hello")
        script = (
            "from agentflow import ReActAgent\n"
            "from agentflow.providers.registry import get_model\n"
            f"model = get_model('openai:gpt-4o-mini', base_url={fake.url!r}, api_key='k')\n"
            "print(ReActAgent('t', model).call_sync('hi').text)\n"
        )
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script],
                                       capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello"
    assert "Unclosed" not in done.stderr, done.stderr
