"""Client tools (agentflow.client_tools): tools the caller runs, offered to
the model beside the agent's; a call of one ends the call unrun (stop reason
``client_tool_calls``) and the client's result continues it. Also the UI
protocols' readers of those results (AG-UI ``read_run_input``, AI SDK
``read_chat_request``) and the store path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import AgentState, ReActAgent
from agentflow.client_tools import (
    CLIENT_PENDING_OUTPUT,
    ClientTool,
    check_client_tools,
    pending_client_calls,
    resolve_client_tools,
    with_client_tools,
)
from agentflow.errors import InvalidInputError, ToolRetriesExceededError
from agentflow.events import Complete, ToolResult, ToolUse
from agentflow.messages import Msg, ToolResultBlock
from agentflow.model import Usage
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.agui import AGUIEncoder, agui_response, read_run_input
from agentflow.web.aisdk import UIMessageEncoder, read_chat_request, ui_message_stream_response
from agentflow.web.run_input import RunInput
from agentflow.web.store import stream_with_store

COLOR = ClientTool("pick_color", "Ask the user to pick a color.",
                   {"type": "object", "properties": {"hint": {"type": "string"}},
                    "required": ["hint"]})


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def results_of(request: RecordedRequest) -> list[ToolResultBlock]:
    return [r for m in request.messages for r in m.tool_results]


def answer(request: RecordedRequest) -> Reply:
    """Call pick_color (and lookup) first; then say what the results were."""
    done = results_of(request)
    if not done:
        return Reply(text="Let me ask.", tool_calls=[
            Call("lookup", {"city": "Oslo"}, id="c-look"),
            Call("pick_color", {"hint": "a warm one"}, id="c-color")])
    return Reply(text="results: " + "; ".join(f"{r.tool_use_id}={r.output}" for r in done))


async def collect(events: Any) -> list[Any]:
    return [e async for e in events]


async def test_a_client_tool_is_offered_and_its_call_ends_the_call_unrun() -> None:
    model = FunctionModel(answer)
    agent = with_client_tools(ReActAgent("a", model, tools=[lookup]), [COLOR])
    state = AgentState()
    events = await collect(agent.stream("Pick a color", state=state))
    first = model.requests[0]
    assert first.tool_names == ["lookup", "pick_color"]
    offered = {t.name: t for t in first.tools}["pick_color"]
    assert offered.description == COLOR.description
    assert offered.parameters == COLOR.parameters
    uses = [e for e in events if isinstance(e, ToolUse)]
    assert [(u.id, u.name, dict(u.input)) for u in uses] == [
        ("c-look", "lookup", {"city": "Oslo"}), ("c-color", "pick_color", {"hint": "a warm one"})]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.stop_reason == "client_tool_calls"
    assert len(model.requests) == 1  # the model was not asked again
    # the server tool of the same step ran; the client's waits with a placeholder
    results = {e.id: e for e in events if isinstance(e, ToolResult)}
    assert results["c-look"].output == "Oslo: sunny" and not results["c-look"].is_error
    assert results["c-color"].output == CLIENT_PENDING_OUTPUT and results["c-color"].is_error
    assert [c.id for c in pending_client_calls(state)] == ["c-color"]

    new = resolve_client_tools(state, {"c-color": "teal", "other": "ignored"})
    assert new == [ToolResultBlock("c-color", "teal", False, "pick_color")]
    assert pending_client_calls(state) == []
    reply = await agent.call(None, state=state)
    assert reply.text == "results: c-look=Oslo: sunny; c-color=teal"
    assert results_of(model.requests[1])[-1] == ToolResultBlock("c-color", "teal", False,
                                                                "pick_color")


def bad_color_forever(request: RecordedRequest) -> Reply:
    """A model that keeps calling pick_color with arguments of the wrong type."""
    return Reply(tool_calls=[Call("pick_color", {"hint": len(request.messages)})])


@pytest.mark.parametrize("budget", [0, 2])
async def test_bad_client_arguments_count_against_the_retry_budget(budget: int) -> None:
    """Like a server tool's bad arguments: the agent's ``tool_retries`` bounds
    them, and past it the call raises ``ToolRetriesExceededError`` (not a
    silent walk to ``max_iters``)."""
    model = FunctionModel(bad_color_forever)
    agent = with_client_tools(ReActAgent("ui", model, tool_retries=budget, max_iters=20),
                              [COLOR])
    with pytest.raises(ToolRetriesExceededError) as info:
        await agent.call("go")
    assert info.value.tool == "pick_color" and info.value.failures == budget + 1
    assert info.value.last_error.startswith("Invalid arguments for tool 'pick_color':\n- hint:")
    assert len(model.requests) == budget + 1  # no request after the budget ran out


async def test_a_valid_client_call_after_bad_ones_within_budget_still_pauses() -> None:
    def answer(request: RecordedRequest) -> Reply:
        bad = len(results_of(request))
        hint: Any = "warm" if bad == 2 else bad
        return Reply(tool_calls=[Call("pick_color", {"hint": hint}, id=f"c-{bad}")])

    agent = with_client_tools(ReActAgent("ui", FunctionModel(answer), tool_retries=2), [COLOR])
    state = AgentState()
    events = await collect(agent.stream("go", state=state))
    assert events[-1].stop_reason == "client_tool_calls"
    assert [c.id for c in pending_client_calls(state)] == ["c-2"]


async def test_the_agent_itself_is_untouched() -> None:
    model = FunctionModel(lambda r: "plain")
    agent = ReActAgent("a", model, tools=[lookup])
    offering = with_client_tools(agent, [COLOR])
    assert offering is not agent and agent.middleware is not offering.middleware
    assert with_client_tools(agent, []) is agent
    await agent.call("hi")
    assert model.requests[-1].tool_names == ["lookup"]
    await offering.call("hi")
    assert model.requests[-1].tool_names == ["lookup", "pick_color"]


class Color(BaseModel):
    name: str


async def test_a_call_asking_for_output_pauses_without_failing() -> None:
    model = FunctionModel(lambda r: Reply(tool_calls=[Call("pick_color", {"hint": "x"},
                                                           id="c1")]))
    agent = with_client_tools(ReActAgent("a", model), [COLOR])
    events = await collect(agent.stream("Pick", Color))  # stream is strict: no raise here
    assert isinstance(events[-1], Complete) and events[-1].stop_reason == "client_tool_calls"
    assert events[-1].output is None


async def test_a_paused_output_call_is_no_output_error_on_the_ui_wires() -> None:
    model = FunctionModel(lambda r: Reply(tool_calls=[Call("pick_color", {"hint": "x"},
                                                           id="c1")]))
    agent = with_client_tools(ReActAgent("a", model), [COLOR])
    events = await collect(agent.stream("Pick", Color))
    ui, agui = UIMessageEncoder(), AGUIEncoder("t", "r")
    chunks = [orjson.loads(line[6:]) for e in events for line in ui.encode(e).split(b"\n\n")
              if line.startswith(b"data: ")]
    kinds = [c["type"] for c in chunks]
    assert "data-output-error" not in kinds and "tool-output-error" not in kinds
    assert chunks[-1]["finishReason"] == "tool-calls"
    frames = [orjson.loads(line[6:]) for e in events
              for line in agui.encode(e).split(b"\n\n") if line.startswith(b"data: ")]
    assert frames[-1]["type"] == "RUN_FINISHED" and frames[-1]["result"]["error"] is None


async def test_resolve_needs_every_pending_result() -> None:
    state = AgentState()
    with pytest.raises(InvalidInputError, match="no tool call waiting for the client"):
        resolve_client_tools(state, {})
    agent = with_client_tools(ReActAgent("a", FunctionModel(answer), tools=[lookup]), [COLOR])
    await agent.call("Pick", state=state)
    with pytest.raises(InvalidInputError, match="c-color"):
        resolve_client_tools(state, {"c-look": "x"})
    error = ToolResultBlock("c-color", "the user closed the dialog", True)
    assert resolve_client_tools(state, {"c-color": error})[0].is_error


@pytest.mark.parametrize(("tool", "match"), [
    (ClientTool("lookup", "clash"), "'lookup' has the name of one of the server's tools"),
    (ClientTool("generate_response", ""), "'generate_response' has the name"),
    (ClientTool("bad name!", ""), "'bad name!'.*must match"),
    (ClientTool("t", "", {"type": "object", "properties": {"x": {"type": "nope"}}}),
     r"'t': parameters is not a valid JSON Schema at properties/x/type"),
    (ClientTool("t", "", {"type": "string"}), "'t': parameters must describe an object"),
    (ClientTool("t", "", ["not", "a", "schema"]),  # type: ignore[arg-type]
     "'t': parameters must be a JSON Schema object"),
    (ClientTool("t", 5), "'t': its description must be a string"),  # type: ignore[arg-type]
])
def test_a_bad_client_tool_is_refused_naming_it(tool: ClientTool, match: str) -> None:
    agent = ReActAgent("a", FunctionModel(lambda r: "x"), tools=[lookup])
    with pytest.raises(InvalidInputError, match=match):
        with_client_tools(agent, [tool])


def test_a_tool_declared_twice_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="'pick_color' is declared twice"):
        check_client_tools([COLOR, COLOR])
    assert check_client_tools([ClientTool("t", "", None)]) == (ClientTool("t", "", None),)


def test_the_response_helpers_refuse_a_clash_before_streaming() -> None:
    agent = ReActAgent("a", FunctionModel(lambda r: "x"), tools=[lookup])
    run = RunInput((), None, (ClientTool("lookup", "mine"),))
    with pytest.raises(InvalidInputError, match="'lookup'"):
        agui_response(agent, run)
    with pytest.raises(InvalidInputError, match="'lookup'"):
        ui_message_stream_response(agent, run)
    agui_response(agent, run, client_tools=False)  # not offered: no clash


# ------------------------------------------------------------------ AG-UI reading

def agui_body(messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {"threadId": "t", "runId": "r", "state": None, "messages": messages,
            "tools": more.pop("tools", []), "context": [], "forwardedProps": None, **more}


AGUI_TURN = [
    {"id": "u1", "role": "user", "content": "Pick a color"},
    {"id": "a1", "role": "assistant", "content": "Let me ask.", "toolCalls": [
        {"id": "c-look", "type": "function",
         "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}},
        {"id": "c-color", "type": "function",
         "function": {"name": "pick_color", "arguments": '{"hint": "warm"}'}}]},
    {"id": "t1", "role": "tool", "toolCallId": "c-look", "content": "Oslo: sunny"},
    {"id": "t2", "role": "tool", "toolCallId": "c-color", "content": "teal"},
]


def test_agui_tool_results_continue_the_run() -> None:
    run = read_run_input(agui_body(AGUI_TURN, tools=[
        {"name": "pick_color", "description": "Ask", "parameters": {"type": "object"}}]))
    assert run.message is None
    assert [m.role for m in run.history] == ["user", "assistant", "tool"]
    assert run.history[-1].tool_results == [  # one tool message for the step, ids and names
        ToolResultBlock("c-look", "Oslo: sunny", False, "lookup"),
        ToolResultBlock("c-color", "teal", False, "pick_color")]
    assert run.tool_results()["c-color"].output == "teal"
    assert run.tools == (ClientTool("pick_color", "Ask", {"type": "object"}),)


def test_agui_a_tool_result_for_no_call_is_refused() -> None:
    body = agui_body([{"id": "u1", "role": "user", "content": "hi"},
                      {"id": "t1", "role": "tool", "toolCallId": "ghost", "content": "x"}])
    with pytest.raises(InvalidInputError, match="'ghost'"):
        read_run_input(body)


def test_agui_a_run_must_end_with_the_user_or_tool_results() -> None:
    with pytest.raises(InvalidInputError, match="tool calls"):
        read_run_input(agui_body(AGUI_TURN[:2]))


def test_agui_encoder_hides_the_placeholder_of_a_client_call() -> None:
    encoder = AGUIEncoder("t", "r")
    shown = encoder.encode(ToolUse("c1", "pick_color", {"hint": "x"}))
    assert b"TOOL_CALL_START" in shown and b"TOOL_CALL_ARGS" in shown
    assert b"TOOL_CALL_END" in shown
    assert encoder.encode(ToolResult("c1", "pick_color", CLIENT_PENDING_OUTPUT, True,
                                     "client_tool_calls")) == b""
    end = encoder.encode(Complete(Msg.assistant(""), None, Usage(), "client_tool_calls"))
    finished = orjson.loads(end.split(b"data: ", 1)[1])
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"] == {"type": "success", "pendingToolCallIds": ["c1"]}
    assert finished["result"]["stop_reason"] == "client_tool_calls"


# ------------------------------------------------------------------ AI SDK reading

def test_ai_sdk_tool_outputs_continue_the_assistant_message() -> None:
    body = {"id": "chat", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Pick a color"}]},
        {"id": "m1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Looking.", "state": "done"},
            {"type": "tool-lookup", "toolCallId": "c-look", "state": "output-available",
             "input": {"city": "Oslo"}, "output": "Oslo: sunny"},
            {"type": "step-start"},
            {"type": "text", "text": "Let me ask.", "state": "done"},
            {"type": "tool-pick_color", "toolCallId": "c-color", "state": "output-available",
             "input": {"hint": "warm"}, "output": {"color": "teal"}}]}],
        "tools": {"pick_color": {"description": "Ask", "inputSchema": {"type": "object"}}}}
    run = read_chat_request(body)
    assert run.message is None and run.extra["message_id"] == "m1"
    assert [m.role for m in run.history] == ["user", "assistant", "tool", "assistant", "tool"]
    first, second = run.history[1], run.history[3]
    assert first.text == "Looking." and [c.id for c in first.tool_uses] == ["c-look"]
    assert second.text == "Let me ask." and [c.name for c in second.tool_uses] == ["pick_color"]
    assert run.history[4].tool_results == [
        ToolResultBlock("c-color", '{"color":"teal"}', False, "pick_color", is_json=True)]
    assert run.tools == (ClientTool("pick_color", "Ask", {"type": "object"}),)


def test_ai_sdk_a_call_without_its_output_is_not_history_yet() -> None:
    body = {"messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Pick"}]},
        {"id": "m1", "role": "assistant", "parts": [
            {"type": "tool-pick_color", "toolCallId": "c1", "state": "input-available",
             "input": {}}]},
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "never mind"}]}]}
    run = read_chat_request(body)
    assert run.message is not None and run.message.text == "never mind"
    assert "message_id" not in run.extra


@pytest.mark.parametrize("tools", ["pick_color", [{"description": "no name"}], {"t": 3}])
def test_ai_sdk_malformed_tools_are_refused(tools: Any) -> None:
    body = {"messages": [{"id": "u1", "role": "user", "parts": [{"type": "text",
                                                                  "text": "hi"}]}],
            "tools": tools}
    with pytest.raises(InvalidInputError, match="tool"):
        read_chat_request(body)


# ------------------------------------------------------------------ with a store

async def test_a_stored_conversation_takes_the_client_results(tmp_path: Path) -> None:
    model = FunctionModel(answer)
    agent = with_client_tools(ReActAgent("a", model, tools=[lookup]), [COLOR])
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        events = await collect(stream_with_store(agent, store, "k", "Pick a color"))
        assert events[-1].stop_reason == "client_tool_calls"
        assert [c.id for c in pending_client_calls((await store.load("k")).state)] == [
            "c-color"]
        with pytest.raises(InvalidInputError, match="c-color"):
            await collect(stream_with_store(agent, store, "k", None, client_results={}))
        results = {"c-color": ToolResultBlock("c-color", "teal")}
        events = await collect(stream_with_store(agent, store, "k", None,
                                                 client_results=results))
        assert events[-1].message.text == "results: c-look=Oslo: sunny; c-color=teal"
        assert pending_client_calls((await store.load("k")).state) == []


async def test_a_client_call_the_conversation_went_on_without_takes_no_late_result(
        tmp_path: Path) -> None:
    """A new message instead of the client tool's result: the call waits no
    more, and a late result (a client sending its whole history) is not put
    in the middle of the conversation."""
    model = FunctionModel(answer)
    agent = with_client_tools(ReActAgent("a", model, tools=[lookup]), [COLOR])
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        await collect(stream_with_store(agent, store, "k", "Pick a color"))
        await collect(stream_with_store(agent, store, "k", "Forget it: what is 2 + 2?"))
        state = (await store.load("k")).state
        assert pending_client_calls(state) == []
        late = {"c-color": ToolResultBlock("c-color", "teal")}
        events = await collect(stream_with_store(agent, store, "k", "And 3 + 3?",
                                                 client_results=late))
        assert isinstance(events[-1], Complete)
        memory = (await store.load("k")).state.memory
        assert "teal" not in str(memory)
        with pytest.raises(InvalidInputError, match="conversation has no tool call waiting"):
            resolve_client_tools(AgentState(memory), late)


SIZE_SCHEMA = {"type": "object", "required": ["width"], "properties": {
    "width": {"type": "integer"}, "scale": {"type": "number"}, "bold": {"type": "boolean"},
    "label": {"type": "string"}, "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
SIZE = ClientTool("set_size", "Set the banner's size.", SIZE_SCHEMA)
LAX = {"width": "3", "scale": "1.5", "bold": "true", "label": "7", "limit": "5"}
READ = {"width": 3, "scale": 1.5, "bold": True, "label": "7", "limit": 5}


def set_size(width: int, scale: float = 1.0, bold: bool = False, label: str = "",
             limit: int | None = None) -> str:
    """Set the banner's size (the server tool twin of SIZE)."""
    return orjson.dumps({"width": width, "scale": scale, "bold": bold, "label": label,
                         "limit": limit}).decode()


def calls_once(arguments: dict[str, Any]) -> FunctionModel:
    def answer(request: RecordedRequest) -> Reply:
        if not results_of(request):
            return Reply(tool_calls=[Call("set_size", arguments, id="c-size")])
        return Reply(text="done: " + results_of(request)[-1].output)

    return FunctionModel(answer)


async def test_client_tool_arguments_are_read_as_leniently_as_the_agents_own() -> None:
    """``"3"`` for an integer was an error result for a client tool (the model
    asked again) while a server tool read it as 3: both now read arguments
    through ``lax_arguments``, and the client is sent what was read."""
    server = ReActAgent("s", calls_once(LAX), tools=[set_size])
    assert (await server.call("go")).text == "done: " + orjson.dumps(READ).decode()
    client = with_client_tools(ReActAgent("c", calls_once(LAX)), [SIZE])
    state = AgentState()
    events = await collect(client.stream("go", state=state))
    assert events[-1].stop_reason == "client_tool_calls"
    [use] = [e for e in events if isinstance(e, ToolUse)]
    assert dict(use.input) == READ  # what the AG-UI and AI SDK streams send the client
    encoder = AGUIEncoder("t", "r")
    frames = [orjson.loads(f[6:]) for e in events for f in encoder.encode(e).split(b"\n\n")
              if f.startswith(b"data: ")]
    [args] = [f["delta"] for f in frames if f["type"] == "TOOL_CALL_ARGS"]
    assert orjson.loads(args) == READ
    ui = UIMessageEncoder()
    chunks = [orjson.loads(f[6:]) for e in events for f in ui.encode(e).split(b"\n\n")
              if f.startswith(b"data: {")]
    [shown] = [c["input"] for c in chunks if c["type"] == "tool-input-available"]
    assert shown == READ


@pytest.mark.parametrize("arguments", [{"width": "three"}, {"width": "3.5"}])
async def test_what_no_lenient_reading_fixes_is_an_error_for_both(
        arguments: dict[str, Any]) -> None:
    server = ReActAgent("s", calls_once(arguments), tools=[set_size])
    await server.call("go")
    client = with_client_tools(ReActAgent("c", calls_once(arguments)), [SIZE])
    events = await collect(client.stream("go", state=AgentState()))
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and result.output.startswith(
        "Invalid arguments for tool 'set_size':\n- width:")
    assert events[-1].stop_reason == "completed"  # the model read the error and answered
