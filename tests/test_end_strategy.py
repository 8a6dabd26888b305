"""The output tool called together with other tools in one reply: the end
strategies (``OutputConfig.end_strategy``; issue 12, rule 6) and the
per-tool retry budget (rule 7), through the public API, on scripted models
and on every vendor's fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import OutputConfig, ReActAgent, Tool, ToolError, ToolRetriesExceededError
from agentflow.events import Complete, OutputRetry, ToolResult
from agentflow.output.strategies import ToolStrategy
from agentflow.state import AgentState
from agentflow.testing import Call, Reply, ScriptedModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.provider_scenarios import close_models, tracked
from tests.test_conformance import KITS, Kit

ran: list[str] = []


def save(record: str) -> str:
    """Save a record."""
    ran.append(record)
    if record.startswith("bad"):
        raise ToolError(f"cannot save {record!r}: the store refused it")
    return f"saved {record}"


class Summary(BaseModel):
    title: str
    count: int


FIRST = {"title": "first", "count": 1}
SECOND = {"title": "second", "count": 2}


def reply_with(record: str, output: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[Call("save", {"record": record}),
                             Call("generate_response", output)])


async def run(strategy: str, replies: list[Reply]) -> tuple[list[Any], ScriptedModel, AgentState]:
    ran.clear()
    model = ScriptedModel(replies)
    state = AgentState()
    agent = ReActAgent("t", model, tools=[save],
                       output=OutputConfig(end_strategy=strategy))  # type: ignore[arg-type]
    events = [e async for e in agent.stream("summarise", Summary, state=state)]
    return events, model, state


def answered_everything(state: AgentState) -> bool:
    calls = {c.id for m in state.memory for c in m.tool_uses}
    results = {r.tool_use_id for m in state.memory for r in m.tool_results}
    return calls <= results


@pytest.mark.parametrize("record", ["bad-1", "bad record"])
async def test_safe_refuses_the_output_when_another_call_failed(record: str) -> None:
    events, model, state = await run("safe", [reply_with(record, FIRST),
                                             reply_with("ok", SECOND)])
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Summary(**SECOND)
    assert ran == [record, "ok"] and len(model.requests) == 2
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["tools_failed"]
    failure = next(e for e in events if isinstance(e, ToolResult) and e.is_error)
    assert "cannot save" in failure.output  # the model read it before answering again
    assert answered_everything(state)


@pytest.mark.parametrize("output", [FIRST, SECOND])
async def test_safe_accepts_when_every_other_call_succeeded(output: dict[str, Any]) -> None:
    events, model, _ = await run("safe", [reply_with("ok", output)])
    assert events[-1].output == Summary(**output)  # type: ignore[attr-defined]
    assert ran == ["ok"] and len(model.requests) == 1


@pytest.mark.parametrize("record", ["bad-1", "ok"])
async def test_early_accepts_at_once_and_does_not_run_the_others(record: str) -> None:
    events, model, state = await run("early", [reply_with(record, FIRST)])
    assert events[-1].output == Summary(**FIRST)  # type: ignore[attr-defined]
    assert ran == [] and len(model.requests) == 1
    skipped = next(e for e in events if isinstance(e, ToolResult) and e.name == "save")
    assert skipped.output.startswith("Not executed")
    assert answered_everything(state)


@pytest.mark.parametrize("record", ["bad-1", "ok"])
async def test_exhaustive_runs_everything_and_accepts(record: str) -> None:
    events, model, _ = await run("exhaustive", [reply_with(record, FIRST)])
    assert events[-1].output == Summary(**FIRST)  # type: ignore[attr-defined]
    assert ran == [record] and len(model.requests) == 1


@pytest.mark.parametrize("strategy", ["safe", "early", "exhaustive"])
async def test_an_invalid_output_is_never_accepted(strategy: str) -> None:
    events, model, _ = await run(strategy, [reply_with("ok", {"title": "x"}),
                                            Reply(tool_calls=[Call("generate_response", SECOND)])])
    assert events[-1].output == Summary(**SECOND)  # type: ignore[attr-defined]
    assert ran == ["ok"] and len(model.requests) == 2


def test_unknown_end_strategy_is_refused() -> None:
    with pytest.raises(ValueError, match="end_strategy"):
        OutputConfig(end_strategy="lazy")  # type: ignore[arg-type]


@pytest.fixture(params=KITS)
async def vendor(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Kit, FakeServer]]:
    kit: Kit = request.param
    async with kit.fake() as server:
        yield kit, server
    await close_models()


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_every_adapter_follows_the_safe_strategy(vendor: tuple[Kit, FakeServer],
                                                       stream: bool) -> None:
    kit, fake = vendor
    model = tracked(kit.build(fake, stream))
    if not model.profile.supports_tools:
        pytest.skip("no tools on this profile")
    ran.clear()
    both = [FakeCall("save", {"record": "bad-1"}, id="call_a"),
            FakeCall("generate_response", FIRST, id="call_b")]
    fake.add(FakeReply(tool_calls=both),
             FakeReply(tool_calls=[FakeCall("generate_response", SECOND, id="call_c")]))
    reply = await ReActAgent("t", model, tools=[save]).call("summarise", Summary,
                                                               strategy=ToolStrategy())
    assert reply.output == Summary(**SECOND)
    assert ran == ["bad-1"] and len(fake.requests) == 2


# ----------------------------------------------------------------------------- rule 7

flaky_calls: list[int] = []


def flaky(n: int) -> str:
    """Always fails."""
    flaky_calls.append(n)
    raise RuntimeError(f"flaky failed on {n}")


def failing_replies(count: int) -> list[Reply]:
    return [Reply(tool_calls=[Call("flaky", {"n": i})]) for i in range(count)] + ["done"]


@pytest.mark.parametrize(("budget", "calls"), [(0, 1), (2, 3)])
async def test_a_tool_that_keeps_failing_is_capped(budget: int, calls: int) -> None:
    flaky_calls.clear()
    model = ScriptedModel(failing_replies(10))
    agent = ReActAgent("t", model, tools=[flaky], tool_retries=budget, max_iters=20)
    with pytest.raises(ToolRetriesExceededError) as info:
        await agent.call("go")
    assert info.value.tool == "flaky" and info.value.failures == calls
    assert len(flaky_calls) == calls and "flaky failed" in info.value.last_error


async def test_the_budget_counts_bad_arguments_and_unknown_tools() -> None:
    model = ScriptedModel([Reply(tool_calls=[Call("flaky", {"n": "not a number"})]),
                           Reply(tool_calls=[Call("flaky", "{'n': {1}}")]),
                           Reply(tool_calls=[Call("nowhere", {})]),
                           Reply(tool_calls=[Call("nowhere", {})]), "done"])
    agent = ReActAgent("t", model, tools=[flaky], tool_retries=1)
    with pytest.raises(ToolRetriesExceededError) as info:
        await agent.call("go")
    assert info.value.tool == "flaky" and info.value.failures == 2


async def test_a_tools_own_budget_wins_and_the_call_is_cumulative() -> None:
    flaky_calls.clear()
    capped = Tool.from_function(flaky, max_retries=1)
    # failures interleaved with successes still add up over the call
    model = ScriptedModel([Reply(tool_calls=[Call("flaky", {"n": 0}), Call("echo", {"s": "a"})]),
                           Reply(tool_calls=[Call("echo", {"s": "b"})]),
                           Reply(tool_calls=[Call("flaky", {"n": 1})]), "done"])

    def echo(s: str) -> str:
        """Echo."""
        return s

    agent = ReActAgent("t", model, tools=[capped, echo], tool_retries=5)
    with pytest.raises(ToolRetriesExceededError):
        await agent.call("go")
    assert flaky_calls == [0, 1]


async def test_within_budget_the_model_recovers() -> None:
    flaky_calls.clear()
    model = ScriptedModel(failing_replies(2))
    reply = await ReActAgent("t", model, tools=[flaky], tool_retries=2).call("go")
    assert reply.text == "done" and len(flaky_calls) == 2
