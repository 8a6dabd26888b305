"""One step that needs both a person's approval (``send_email``, gated by
``RequireApproval``) and a client-side tool (``pick_color``), through both UI
protocols with their real JavaScript clients in Node (tests/js) against a
Starlette app on 127.0.0.1 backed by a SQLite store. Both calls wait in the
stored state and the call stops with ``approval_required`` (the first
middleware to pause); both pending kinds must reach the client, and one
resumed run takes the approval and the client's result together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import AgentState, ReActAgent
from agentflow.approvals import Approve, RequireApproval, pending_calls
from agentflow.client_tools import ClientTool, pending_client_calls, with_client_tools
from agentflow.errors import InvalidInputError
from agentflow.messages import ToolResultBlock
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.agui import AGUIEncoder, agui_response, read_run_input
from agentflow.web.aisdk import UIMessageEncoder, read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json
from agentflow.web.store import stream_with_store

from .test_web_adapters import node, node_ready, served

COLOR = ClientTool("pick_color", "Ask the user to pick a color.",
                   {"type": "object", "properties": {"hint": {"type": "string"}},
                    "required": ["hint"]})


def make_agent(sent: list[str]) -> tuple[ReActAgent, FunctionModel]:
    def send_email(to: str) -> str:
        """Send an e-mail."""
        sent.append(to)
        return f"sent to {to}"

    def answer(request: RecordedRequest) -> Reply:
        results = {r.name: r.output for m in request.messages for r in m.tool_results}
        if not results:
            return Reply(text="On it.", tool_calls=[
                Call("send_email", {"to": "ada@x.org"}, id="c-mail"),
                Call("pick_color", {"hint": "warm"}, id="c-color")])
        return Reply(text=f"mail: {results['send_email']}; color: {results['pick_color']}")

    model = FunctionModel(answer)
    return ReActAgent("ops", model, tools=[send_email],
                      middleware=[RequireApproval({"send_email"})]), model


async def test_both_wait_and_one_stored_resume_takes_both(tmp_path: Path) -> None:
    sent: list[str] = []
    agent, model = make_agent(sent)
    agent = with_client_tools(agent, [COLOR])
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        events = [e async for e in stream_with_store(agent, store, "k", "mail Ada")]
        assert events[-1].stop_reason == "approval_required"
        state = (await store.load("k")).state
        assert [c.id for c in pending_calls(state)] == ["c-mail"]
        assert [c.id for c in pending_client_calls(state)] == ["c-color"]
        color = {"c-color": ToolResultBlock("c-color", "teal")}
        # a resume missing either answer is refused before anything runs
        with pytest.raises(InvalidInputError, match="c-color"):
            [e async for e in stream_with_store(agent, store, "k", None,
                                                decisions={"c-mail": Approve()})]
        with pytest.raises(InvalidInputError, match=r"c-mail.*approval"):
            [e async for e in stream_with_store(agent, store, "k", None, client_results=color)]
        assert sent == [] and len(model.requests) == 1
        events = [e async for e in stream_with_store(agent, store, "k", None,
                                                     decisions={"c-mail": Approve()},
                                                     client_results=color)]
        assert events[-1].message.text == "mail: sent to ada@x.org; color: teal"
        assert sent == ["ada@x.org"]
        state = (await store.load("k")).state
        assert pending_calls(state) == [] and pending_client_calls(state) == []


async def test_the_encoders_carry_both_pending_kinds() -> None:
    agent, _ = make_agent([])
    agent = with_client_tools(agent, [COLOR])
    events = [e async for e in agent.stream("mail Ada", state=AgentState())]
    agui = AGUIEncoder("t", "r")
    frames = [orjson.loads(line[6:]) for e in events
              for line in agui.encode(e).split(b"\n\n") if line.startswith(b"data: ")]
    assert not [f for f in frames if f["type"] == "TOOL_CALL_RESULT"]  # two placeholders
    finished = frames[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert [i["toolCallId"] for i in finished["outcome"]["interrupts"]] == ["c-mail"]
    assert finished["result"]["pending_tool_call_ids"] == ["c-color"]
    assert finished["result"]["stop_reason"] == "approval_required"
    ui = UIMessageEncoder()
    chunks = [orjson.loads(line[6:]) for e in events for line in ui.encode(e).split(b"\n\n")
              if line.startswith(b"data: ")]
    kinds = [c["type"] for c in chunks]
    assert "tool-output-error" not in kinds and "tool-output-available" not in kinds
    assert [c["toolCallId"] for c in chunks if c["type"] == "tool-input-available"] == [
        "c-mail", "c-color"]
    assert [c["toolCallId"] for c in chunks if c["type"] == "tool-approval-request"] == ["c-mail"]
    assert kinds.count("start-step") == 1  # the request belongs to the calls' step
    assert chunks[-1]["finishReason"] == "tool-calls"


class App:
    url = ""
    store: SQLiteStateStore
    sent: list[str]
    model: FunctionModel


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    node_ready()
    running = App()
    running.sent = []
    agent, running.model = make_agent(running.sent)

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(agent, run, store=running.store, key=f"agui:{run.thread_id}")

    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent, run, client_tools=[COLOR],
                                          store=running.store, key=f"chat:{run.thread_id}")

    async with SQLiteStateStore(tmp_path / "s.db") as store:
        running.store = store
        routes = [Route("/agui", agui, methods=["POST"]), Route("/chat", chat, methods=["POST"])]
        async with served(Starlette(routes=routes)) as running.url:
            yield running


async def test_agui_interrupt_and_frontend_tool_in_one_run(app: App) -> None:
    got = await node("agui_approval_client_tool.mjs", f"{app.url}/agui", "thread-both")
    assert got["error"] is None, got
    first, second = got["runs"]
    assert first["events"].count("TOOL_CALL_START") == 2
    assert "TOOL_CALL_RESULT" not in first["events"]  # neither call has run
    assert first["outcome"]["type"] == "interrupt"  # it stopped to ask: never a success
    [interrupt] = first["outcome"]["interrupts"]
    assert interrupt["toolCallId"] == "c-mail" and interrupt["reason"] == "tool_approval"
    assert first["result"]["stop_reason"] == "approval_required"
    assert first["result"]["pending_tool_call_ids"] == ["c-color"]
    assert got["derived"] == ["c-color"]  # what the stream itself shows as unanswered
    assert app.sent == ["ada@x.org"]  # approved in the same resume that brought the color
    assert second["result"]["text"] == ('mail: sent to ada@x.org; '
                                        'color: {"color":"teal","hint":"warm"}')
    assert second["outcome"] is None or second["outcome"]["type"] == "success"
    assert len(app.model.requests) == 2
    loaded = await app.store.load("agui:thread-both")
    assert pending_calls(loaded.state) == [] and pending_client_calls(loaded.state) == []


async def test_ai_sdk_approval_and_client_tool_in_one_step(app: App) -> None:
    got = await node("aisdk_approval_client_tool.mjs", f"{app.url}/chat")
    assert got["error"] is None, got
    states = {p["toolCallId"]: p["state"] for p in got["asked"]}
    assert states == {"c-mail": "approval-requested", "c-color": "output-available"}
    assert [f["finishReason"] for f in got["finishes"]] == ["tool-calls", "stop"]
    assert got["status"] == "ready"
    assert app.sent == ["ada@x.org"]
    user, assistant = got["messages"]  # the second stream continued the same message
    assert user["role"] == "user"
    parts = assistant["parts"]
    mail = next(p for p in parts if p["type"] == "tool-send_email")
    assert mail["state"] == "output-available" and mail["output"] == "sent to ada@x.org"
    color = next(p for p in parts if p["type"] == "tool-pick_color")
    assert color["state"] == "output-available" and color["output"] == {"color": "teal"}
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[-1] == 'mail: sent to ada@x.org; color: {"color":"teal"}'
    loaded = await app.store.load("chat:chat-approval-client-tool")
    assert pending_calls(loaded.state) == [] and pending_client_calls(loaded.state) == []
