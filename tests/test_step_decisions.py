"""One reply, several middleware: every middleware's ``post_reasoning`` sees
the reply and their decisions merge (``agentflow.middleware.decisions``), so
no middleware's early answer (the structured-output tool's, a cache's) lets a
call that another middleware holds back (an approval, a client tool) run.

The replies mix the output tool (``generate_response``, strategy ``"tool"``),
tools gated by ``RequireApproval``, client tools and free tools, in one step."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import AgentState, ReActAgent
from agentflow.approvals import (
    PENDING_OUTPUT,
    Approve,
    Refuse,
    RequireApproval,
    pending_calls,
    resolve_approvals,
)
from agentflow.client_tools import (
    CLIENT_PENDING_OUTPUT,
    ClientTool,
    pending_client_calls,
    resolve_client_tools,
    with_client_tools,
)
from agentflow.events import ApprovalRequested, Complete, OutputRetry, ToolResult
from agentflow.messages import Msg, ToolResultBlock
from agentflow.middleware.base import Act, Finish, Middleware, ReasonAgain
from agentflow.middleware.decisions import merge_decisions
from agentflow.output.config import OutputConfig
from agentflow.output.decoding import RAW_ARGUMENTS as RAW
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply


class Report(BaseModel):
    status: str


OUTPUT = "generate_response"


def results_of(request: RecordedRequest) -> dict[str, str]:
    return {r.tool_use_id: r.output for m in request.messages for r in m.tool_results}


class Ledger:
    """The server tools, recording what ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def tools(self) -> list[Any]:
        def pay(amount: int) -> str:
            """Pay an amount."""
            self.ran.append(f"pay {amount}")
            return f"paid {amount}"

        def refund(amount: int) -> str:
            """Refund an amount."""
            self.ran.append(f"refund {amount}")
            return f"refunded {amount}"

        def lookup(name: str) -> str:
            """Look a name up."""
            self.ran.append(f"lookup {name}")
            return f"{name}: found"

        return [pay, refund, lookup]


def first_then_output(first: list[Call]) -> Any:
    """A model that calls ``first`` plus the output tool in one step; once the
    outcomes are in (no placeholder left), only the output tool, with a status
    naming the results it read."""

    def answer(request: RecordedRequest) -> Reply:
        done = results_of(request)
        if not done:
            return Reply(tool_calls=[*first, Call(OUTPUT, {"status": "guessed"}, id="out-1")])
        waiting = [o for o in done.values() if o in (PENDING_OUTPUT, CLIENT_PENDING_OUTPUT)]
        assert not waiting, "the model was asked again while a call still waited"
        seen = sorted(o for k, o in done.items() if not k.startswith("out"))
        return Reply(tool_calls=[Call(OUTPUT, {"status": "; ".join(seen)},
                                      id=f"out-{len(request.messages)}")])

    return answer


def agent_with(ledger: Ledger, first: list[Call], gated: set[str], *,
               end_strategy: str = "safe") -> ReActAgent:
    return ReActAgent("ops", FunctionModel(first_then_output(first)), tools=ledger.tools(),
                      middleware=[RequireApproval(gated)],
                      output=OutputConfig(strategy="tool", end_strategy=end_strategy))


async def run(agent: ReActAgent, state: AgentState, msg: str | None = "go") -> list[Any]:
    return [e async for e in agent.stream(msg, Report, state=state)]


# ---------------------------------------------------------------- approvals + output


@pytest.mark.parametrize("end_strategy", ["safe", "early", "exhaustive"])
async def test_a_gated_call_beside_the_output_waits_for_approval(end_strategy: str) -> None:
    ledger = Ledger()
    agent = agent_with(ledger, [Call("pay", {"amount": 5}, id="c-pay")], {"pay"},
                       end_strategy=end_strategy)
    state = AgentState()
    events = await run(agent, state)
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert ledger.ran == []  # never without approval
    assert complete.stop_reason == "approval_required"
    assert complete.output is None  # held: the outcome of the call may change it
    assert [c.id for c in pending_calls(state)] == ["c-pay"]
    asked = [e for e in events if isinstance(e, ApprovalRequested)]
    assert [[c.id for c in e.calls] for e in asked] == [["c-pay"]]
    assert not [e for e in events if isinstance(e, OutputRetry)]  # a pause is no failure
    # no call of the output tool is left in the stored conversation
    assert all(c.name != OUTPUT for m in state.memory for c in m.tool_uses)

    await resolve_approvals(agent, state, {"c-pay": Approve()})
    reply = await agent.call(None, Report, state=state)
    assert ledger.ran == ["pay 5"]
    assert reply.output == Report(status="paid 5")


async def test_a_refused_gated_call_never_runs_and_the_output_reads_the_refusal() -> None:
    ledger = Ledger()
    agent = agent_with(ledger, [Call("pay", {"amount": 5}, id="c-pay")], {"pay"})
    state = AgentState()
    await run(agent, state)
    await resolve_approvals(agent, state, {"c-pay": Refuse("no")})
    reply = await agent.call(None, Report, state=state)
    assert ledger.ran == []
    assert reply.output == Report(status="Refused: no")


async def test_two_gated_calls_beside_the_output_both_wait() -> None:
    ledger = Ledger()
    agent = agent_with(ledger, [Call("pay", {"amount": 5}, id="c-pay"),
                                Call("refund", {"amount": 2}, id="c-refund")],
                       {"pay", "refund"})
    state = AgentState()
    complete = (await run(agent, state))[-1]
    assert complete.stop_reason == "approval_required" and complete.output is None
    assert ledger.ran == []
    assert sorted(c.id for c in pending_calls(state)) == ["c-pay", "c-refund"]
    await resolve_approvals(agent, state, {"c-pay": Approve(), "c-refund": Refuse("later")})
    reply = await agent.call(None, Report, state=state)
    assert ledger.ran == ["pay 5"]
    assert reply.output == Report(status="Refused: later; paid 5")


async def test_one_gated_one_free_beside_the_output() -> None:
    ledger = Ledger()
    agent = agent_with(ledger, [Call("lookup", {"name": "Ada"}, id="c-look"),
                                Call("pay", {"amount": 5}, id="c-pay")], {"pay"})
    state = AgentState()
    events = await run(agent, state)
    complete = events[-1]
    assert complete.stop_reason == "approval_required" and complete.output is None
    assert ledger.ran == ["lookup Ada"]  # the free call ran, the gated one waits
    shown = {e.id: e.output for e in events if isinstance(e, ToolResult)}
    assert shown["c-look"] == "Ada: found"
    await resolve_approvals(agent, state, {"c-pay": Approve()})
    reply = await agent.call(None, Report, state=state)
    assert ledger.ran == ["lookup Ada", "pay 5"]
    assert reply.output == Report(status="Ada: found; paid 5")


async def test_parallel_gated_calls_without_an_output() -> None:
    ledger = Ledger()

    def answer(request: RecordedRequest) -> Reply:
        done = results_of(request)
        if not done:
            return Reply(tool_calls=[Call("pay", {"amount": 1}, id="a"),
                                     Call("refund", {"amount": 2}, id="b"),
                                     Call("lookup", {"name": "Bo"}, id="c")])
        return Reply(text=" | ".join(done[k] for k in sorted(done)))

    agent = ReActAgent("ops", FunctionModel(answer), tools=ledger.tools(),
                       middleware=[RequireApproval({"pay", "refund"})])
    state = AgentState()
    complete = [e async for e in agent.stream("go", state=state)][-1]
    assert complete.stop_reason == "approval_required"
    assert ledger.ran == ["lookup Bo"]
    await resolve_approvals(agent, state, {"a": Approve(), "b": Approve()})
    reply = await agent.call(None, state=state)
    assert sorted(ledger.ran) == ["lookup Bo", "pay 1", "refund 2"]
    assert reply.text == "paid 1 | refunded 2 | Bo: found"


async def test_an_earlier_middleware_answer_does_not_hide_a_gated_call() -> None:
    """The kind of fault, without any output: a user middleware that answers
    some calls (a cache) before the approval middleware."""
    ledger = Ledger()

    class Cache(Middleware):
        async def post_reasoning(self, ex: Any, reply: Msg) -> Act | None:
            hits = [c for c in reply.tool_uses if c.name == "lookup"]
            return Act({c.id: ToolResultBlock(c.id, "cached", name=c.name) for c in hits})

    def answer(request: RecordedRequest) -> Reply:
        if not results_of(request):
            return Reply(tool_calls=[Call("lookup", {"name": "Ada"}, id="l"),
                                     Call("pay", {"amount": 9}, id="p")])
        return Reply(text="done")

    agent = ReActAgent("ops", FunctionModel(answer), tools=ledger.tools(),
                       middleware=[Cache(), RequireApproval({"pay"})])
    state = AgentState()
    complete = [e async for e in agent.stream("go", state=state)][-1]
    assert complete.stop_reason == "approval_required"
    assert ledger.ran == []  # lookup answered from the cache, pay waits
    assert [c.id for c in pending_calls(state)] == ["p"]


# ---------------------------------------------------------------- client tools + output

COLOR = ClientTool("pick_color", "Ask the user to pick a color.",
                   {"type": "object", "properties": {"hint": {"type": "string"}},
                    "required": ["hint"]})


async def test_a_client_call_beside_the_output_waits_for_the_client() -> None:
    ledger = Ledger()
    base = ReActAgent("ui", FunctionModel(first_then_output(
        [Call("lookup", {"name": "Ada"}, id="c-look"),
         Call("pick_color", {"hint": "warm"}, id="c-color")])),
        tools=ledger.tools(), output=OutputConfig(strategy="tool"))
    agent = with_client_tools(base, [COLOR])
    state = AgentState()
    events = await run(agent, state)
    complete = events[-1]
    assert complete.stop_reason == "client_tool_calls" and complete.output is None
    assert ledger.ran == ["lookup Ada"]
    assert [c.id for c in pending_client_calls(state)] == ["c-color"]
    outputs = [r.output for m in state.memory for r in m.tool_results]
    assert not any("not found" in o for o in outputs)
    resolve_client_tools(state, {"c-color": "teal"})
    reply = await agent.call(None, Report, state=state)
    assert reply.output == Report(status="Ada: found; teal")


async def test_approval_and_client_call_in_one_step_keep_both_pending() -> None:
    ledger = Ledger()
    base = ReActAgent("ui", FunctionModel(first_then_output(
        [Call("pay", {"amount": 3}, id="c-pay"),
         Call("pick_color", {"hint": "warm"}, id="c-color")])),
        tools=ledger.tools(), middleware=[RequireApproval({"pay"})],
        output=OutputConfig(strategy="tool"))
    agent = with_client_tools(base, [COLOR])
    state = AgentState()
    complete = (await run(agent, state))[-1]
    assert complete.output is None and ledger.ran == []
    assert complete.stop_reason == "approval_required"  # the first pause of the step
    assert [c.id for c in pending_calls(state)] == ["c-pay"]
    assert [c.id for c in pending_client_calls(state)] == ["c-color"]
    await resolve_approvals(agent, state, {"c-pay": Approve()})
    resolve_client_tools(state, {"c-color": "teal"})
    reply = await agent.call(None, Report, state=state)
    assert ledger.ran == ["pay 3"]
    assert reply.output == Report(status="paid 3; teal")


# ---------------------------------------------------------------- the merge, as a table


def _block(call_id: str, text: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, text, True, "t")


def test_merge_table() -> None:
    a = Act({"1": _block("1", "A")})
    b = Act({"1": _block("1", "B"), "2": _block("2", "B")})
    wait = Act({"1": _block("1", "W")}, waiting=("1",), pause="approval_required")
    again1, again2 = ReasonAgain((Msg.user("x"),)), ReasonAgain((Msg.user("y"),))
    assert merge_decisions([]) is None
    assert merge_decisions([None, None]) is None
    assert merge_decisions([a]) is a
    merged = merge_decisions([a, None, b])
    assert isinstance(merged, Act)
    assert {k: v.output for k, v in merged.results.items()} == {"1": "A", "2": "B"}
    merged = merge_decisions([a, wait])  # a pause beats an answer given before it
    assert isinstance(merged, Act)
    assert merged.results["1"].output == "W" and merged.waiting == ("1",)
    assert merged.pause == "approval_required"
    merged = merge_decisions([again1, a, again2])
    assert isinstance(merged, ReasonAgain)
    assert [m.text for m in merged.messages] == ["x", "y"]
    assert merge_decisions([a, again1, Finish("stopped"), Finish("other")]) == Finish("stopped")


# ---------------------------------------------------------------- client tools and the strategy


async def test_client_tools_count_as_tools_when_the_strategy_is_chosen() -> None:
    """A model whose native output cannot be combined with tools: an agent
    with client tools only must not pick the native strategy."""
    from agentflow.model import ModelProfile

    profile = ModelProfile(native_output="json_schema", native_output_with_tools=False)

    def answer(request: RecordedRequest) -> Reply:
        if any(t.name == OUTPUT for t in request.tools):
            return Reply(tool_calls=[Call(OUTPUT, {"status": "ok"})])
        return Reply(text='{"status": "ok"}')

    plain = ReActAgent("ui", FunctionModel(answer, profile=profile))
    offering = with_client_tools(plain, [COLOR])
    model = offering.model
    assert isinstance(model, FunctionModel)
    reply = await offering.call("go", Report)
    request = model.requests[-1]
    assert {t.name for t in request.tools} == {"pick_color", OUTPUT}
    assert request.options.response_format is None  # no native format beside tools
    assert reply.output == Report(status="ok")
    reply = await plain.call("go", Report)  # the agent alone: no tools, native output
    request = model.requests[-1]
    assert not request.tools and request.options.response_format is not None
    assert reply.output == Report(status="ok")


async def test_a_client_call_with_bad_arguments_is_answered_for_the_model_to_retry() -> None:
    asked: list[dict[str, str]] = []

    def answer(request: RecordedRequest) -> Reply:
        done = results_of(request)
        asked.append(done)
        if not done:
            return Reply(tool_calls=[Call("pick_color", {"hint": 3}, id="bad-1"),
                                     Call("pick_color", {}, id="bad-2"),
                                     Call("pick_color", {RAW: '{"hint": '}, id="bad-3")])
        if len(done) == 3:
            return Reply(tool_calls=[Call("pick_color", {"hint": "warm"}, id="good")])
        return Reply(text="done")

    agent = with_client_tools(ReActAgent("ui", FunctionModel(answer)), [COLOR])
    state = AgentState()
    events = [e async for e in agent.stream("go", state=state)]
    complete = events[-1]
    assert complete.stop_reason == "client_tool_calls"
    errors = asked[1]
    assert errors["bad-1"] == ("Invalid arguments for tool 'pick_color':\n"
                               "- hint: 3 is not of type 'string'")
    assert errors["bad-2"] == ("Invalid arguments for tool 'pick_color':\n"
                               "- (root): 'hint' is a required property")
    assert errors["bad-3"].startswith(f"Invalid arguments for tool 'pick_color':\n- {RAW}: ")
    assert [c.id for c in pending_client_calls(state)] == ["good"]  # only the valid call waits
    shown = {e.id: e.is_error for e in events if isinstance(e, ToolResult)}
    assert shown == {"bad-1": True, "bad-2": True, "bad-3": True, "good": True}


async def test_a_client_call_beside_the_output_on_the_ui_wires() -> None:
    import orjson

    from agentflow.web.agui import AGUIEncoder
    from agentflow.web.aisdk import UIMessageEncoder

    agent = with_client_tools(ReActAgent("ui", FunctionModel(first_then_output(
        [Call("pick_color", {"hint": "warm"}, id="c-color")])),
        output=OutputConfig(strategy="tool")), [COLOR])
    events = await run(agent, AgentState())
    ui = UIMessageEncoder()
    agui = AGUIEncoder("t", "r")
    chunks = [orjson.loads(line[6:]) for e in events for line in ui.encode(e).split(b"\n\n")
              if line.startswith(b"data: ")]
    kinds = [c["type"] for c in chunks]
    assert "tool-output-error" not in kinds and "data-output-error" not in kinds
    assert [c["toolName"] for c in chunks if c["type"] == "tool-input-available"] == [
        "pick_color"]  # the output tool's call is not shown as a tool
    assert chunks[-1]["finishReason"] == "tool-calls"
    frames = [orjson.loads(line[6:]) for e in events
              for line in agui.encode(e).split(b"\n\n") if line.startswith(b"data: ")]
    finished = frames[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["result"]["error"] is None
    assert finished["outcome"]["pendingToolCallIds"] == ["c-color"]


def test_merged_inputs_keep_the_first_given_per_call() -> None:
    """``Act.inputs`` (the arguments a call is shown with): the first
    middleware's reading of a call wins, as its answer does."""
    merged = merge_decisions([Act(inputs={"a": {"n": 1}}), None,
                              Act(inputs={"a": {"n": 2}, "b": {"n": 3}})])
    assert isinstance(merged, Act) and merged.inputs == {"a": {"n": 1}, "b": {"n": 3}}
