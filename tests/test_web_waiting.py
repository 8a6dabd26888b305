"""What the UI protocols hide is known by the call, never by a result's text.

A call the step held (waiting for a person's approval, or for the client's
result) has a placeholder result the stream does not show; the loop marks its
``ToolResult`` event (``waiting``) from the held calls' ids. A server tool whose
error text equals a placeholder (a remote page's or an MCP server's error
quoted back) is a result like any other: both encoders show it, and the real
JavaScript clients (tests/js) see it as the tool's error result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import AgentState, ReActAgent
from agentflow.approvals import PENDING_OUTPUT, RequireApproval, is_approval_pending
from agentflow.client_tools import (
    CLIENT_PENDING_OUTPUT,
    ClientTool,
    is_client_pending,
    with_client_tools,
)
from agentflow.errors import ToolError
from agentflow.events import Complete, Event, ToolResult
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import AGUIEncoder, agui_response, read_run_input
from agentflow.web.aisdk import UIMessageEncoder, read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json
from agentflow.web.wire import event_to_dict

from .test_web_adapters import CONTACT, Contact, node, node_ready, scripted_model, served

COLOR = ClientTool("pick_color", "Ask the user to pick a color.",
                   {"type": "object", "properties": {"hint": {"type": "string"}}})
PLACEHOLDERS = {"approval": PENDING_OUTPUT, "client": CLIENT_PENDING_OUTPUT}


def quoting(text: str, name: str = "check_balance") -> Any:
    """A server tool whose error quotes an upstream's text (here: ``text``)."""
    def check(name: str) -> str:
        raise ToolError(text)

    check.__name__ = name
    check.__doc__ = "Look an account up (its errors quote the upstream's message)."
    return check


def mixed_step(text: str) -> ReActAgent:
    """One step calling a spoofing server tool, a call that needs approval and
    a client tool's call; then text."""
    def send_email(to: str) -> str:
        """Send an e-mail."""
        return f"sent to {to}"

    def answer(request: RecordedRequest) -> Reply:
        return Reply(text="On it.", tool_calls=[
            Call("check_balance", {"name": "bob"}, id="c-bal"),
            Call("send_email", {"to": "ada@x.org"}, id="c-mail"),
            Call("pick_color", {"hint": "warm"}, id="c-color")])

    agent = ReActAgent("ops", FunctionModel(answer), tools=[quoting(text), send_email],
                       middleware=[RequireApproval({"send_email"})])
    return with_client_tools(agent, [COLOR])


def frames(encoder: AGUIEncoder | UIMessageEncoder, events: list[Event]) -> list[dict[str, Any]]:
    return [orjson.loads(line[6:]) for e in events for line in encoder.encode(e).split(b"\n\n")
            if line.startswith(b"data: ")]


@pytest.mark.parametrize("kind", list(PLACEHOLDERS))
async def test_a_server_error_reading_like_a_placeholder_is_shown(kind: str) -> None:
    text = PLACEHOLDERS[kind]
    events = [e async for e in mixed_step(text).stream("go", state=AgentState())]
    assert isinstance(events[-1], Complete) and events[-1].stop_reason == "approval_required"
    results = {e.id: e for e in events if isinstance(e, ToolResult)}
    assert {i: r.waiting for i, r in results.items()} == {
        "c-bal": None, "c-mail": "approval_required", "c-color": "client_tool_calls"}
    assert results["c-bal"].output == text and results["c-bal"].is_error
    assert [is_approval_pending(r) for r in results.values()] == [False, True, False]
    assert [is_client_pending(r) for r in results.values()] == [False, False, True]
    assert event_to_dict(results["c-bal"])["waiting"] is None
    assert event_to_dict(results["c-color"])["waiting"] == "client_tool_calls"

    agui = frames(AGUIEncoder("t", "r"), events)
    shown = [(f["toolCallId"], f["content"]) for f in agui if f["type"] == "TOOL_CALL_RESULT"]
    assert shown == [("c-bal", text)]  # the server tool's result; never the held calls'
    finished = agui[-1]
    assert [i["toolCallId"] for i in finished["outcome"]["interrupts"]] == ["c-mail"]
    assert finished["result"]["pending_tool_call_ids"] == ["c-color"]

    ui = frames(UIMessageEncoder(), events)
    errors = [(c["toolCallId"], c["errorText"]) for c in ui if c["type"] == "tool-output-error"]
    assert errors == [("c-bal", text)]
    assert "tool-output-available" not in [c["type"] for c in ui]
    assert [c["toolCallId"] for c in ui if c["type"] == "tool-approval-request"] == ["c-mail"]


async def test_a_result_not_marked_waiting_is_shown_whatever_its_text() -> None:
    """Each held call's result says what it waits for, and a result made
    without ``waiting`` is one to show, even with a placeholder's exact text
    for a client tool's name (the encoders read no text, no name)."""
    events = [e async for e in mixed_step("unused").stream("go", state=AgentState())]
    forged = ToolResult("c-x", "pick_color", CLIENT_PENDING_OUTPUT, True)
    for encoder in (AGUIEncoder("t", "r"), UIMessageEncoder()):
        out = encoder.encode(forged)
        assert b"c-x" in out and CLIENT_PENDING_OUTPUT.encode() in out
    assert [e.waiting for e in events if isinstance(e, ToolResult) and e.id != "c-bal"] == [
        "approval_required", "client_tool_calls"]


# -------------------------------------------------------------- the real clients


@pytest.fixture
async def url() -> AsyncIterator[str]:
    node_ready()
    seen: list[list[str]] = []

    def agent(kind: str) -> ReActAgent:  # lookup, the model's first call, quotes a placeholder
        return ReActAgent("ui", scripted_model(seen), tools=[quoting(PLACEHOLDERS[kind],
                                                                     "lookup")],
                          middleware=[RequireApproval({"send_email"})])

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(agent(request.path_params["kind"]), run, Contact)

    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent(request.path_params["kind"]), run, Contact,
                                          client_tools=[COLOR])

    routes = [Route("/agui/{kind}", agui, methods=["POST"]),
              Route("/chat/{kind}", chat, methods=["POST"])]
    async with served(Starlette(routes=routes)) as base:
        yield base


@pytest.mark.parametrize("kind", list(PLACEHOLDERS))
async def test_agui_client_sees_the_spoofing_result(url: str, kind: str) -> None:
    got = await node("agui_client.mjs", f"{url}/agui/{kind}")  # it offers a frontend tool
    assert got["error"] is None, got
    assert "TOOL_CALL_RESULT" in got["events"] and got["events"][-1] == "RUN_FINISHED"
    [result] = [m for m in got["messages"] if m["role"] == "tool"]
    assert result["content"] == PLACEHOLDERS[kind]
    assert "pending_tool_call_ids" not in got["result"]
    assert got["result"]["stop_reason"] == "structured_output"
    assert got["result"]["output"] == CONTACT


@pytest.mark.parametrize("kind", list(PLACEHOLDERS))
async def test_ai_sdk_reader_sees_the_spoofing_result(url: str, kind: str) -> None:
    got = await node("aisdk_client.mjs", f"{url}/chat/{kind}")
    assert got["error"] is None, got
    parts = got["snapshots"][-1]["parts"]
    tool = next(p for p in parts if p["type"] == "tool-lookup")
    assert (tool["state"], tool["errorText"]) == ("output-error", PLACEHOLDERS[kind])
    assert got["chunks"][-1] == "finish"
    assert got["snapshots"][-1]["metadata"]["stop_reason"] == "structured_output"
