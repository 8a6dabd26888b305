"""Approvals through both UI protocols, with their real JavaScript clients in
Node (tests/js) against a Starlette app on 127.0.0.1 backed by a SQLite
store: the first run ends asking for approval (AG-UI: an interrupt in
``RUN_FINISHED``; AI SDK: ``tool-approval-request``) with the call saved in
the store; the second request resumes it (approved, edited or refused) and
the model reads the outcome."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.approvals import Approve, Refuse, RequireApproval, pending_calls
from agentflow.errors import InvalidInputError
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.agui import APPROVAL_RESPONSE_SCHEMA, agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .headless_chromium import chromium
from .test_web_adapters import browser_result, bundle, node, node_ready, served


class App:
    url = ""
    store: SQLiteStateStore
    sent: list[tuple[str, str]]
    bundle = b""


def make_agent(sent: list[tuple[str, str]]) -> ReActAgent:
    def send_email(to: str, body: str) -> str:
        """Send an e-mail."""
        sent.append((to, body))
        return f"sent to {to}: {body}"

    async def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        if not results:
            return Reply(text="I will mail her.",
                         tool_calls=[Call("send_email", {"to": "ada@x.org", "body": "hi"})])
        return Reply(text="outcome: " + results[-1])

    return ReActAgent("ops", FunctionModel(answer), tools=[send_email],
                      middleware=[RequireApproval({"send_email"})])


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    node_ready()
    running = App()
    running.sent = []
    agent = make_agent(running.sent)

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(agent, run, store=running.store, key=f"agui:{run.thread_id}")

    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent, run, store=running.store,
                                          key=f"chat:{run.thread_id}")

    async with SQLiteStateStore(tmp_path / "s.db") as store:
        running.store = store
        async def page(request: Request) -> Response:
            return HTMLResponse('<!doctype html><pre id="out"></pre>'
                                '<script type="module" src="/bundle.js"></script>')

        async def bundled(request: Request) -> Response:
            return Response(running.bundle, media_type="text/javascript")

        routes = [Route("/agui", agui, methods=["POST"]), Route("/chat", chat, methods=["POST"]),
                  Route("/page", page), Route("/bundle.js", bundled)]
        async with served(Starlette(routes=routes)) as running.url:
            yield running


async def test_ai_sdk_tool_approval_approved(app: App) -> None:
    got = await node("aisdk_approval.mjs", f"{app.url}/chat", "true")
    assert got["first"]["error"] is None and got["second"]["error"] is None, got
    asked = got["asked"]
    assert asked["state"] == "approval-requested", asked
    assert asked["input"] == {"to": "ada@x.org", "body": "hi"}
    assert app.sent == [("ada@x.org", "hi")]  # ran only once approved
    parts = got["second"]["last"]["parts"]
    tool = next(p for p in parts if p["type"] == "tool-send_email")
    assert tool["state"] == "output-available" and tool["output"] == "sent to ada@x.org: hi"
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[-1] == "outcome: sent to ada@x.org: hi"  # the model read the outcome
    loaded = await app.store.load("chat:chat-approval")
    # saved: suspended (1), the approval claimed (2), its outcome (3), the call done (4)
    assert loaded.version == 4 and pending_calls(loaded.state) == []


async def test_ai_sdk_chat_with_a_store_may_send_only_its_last_message(app: App) -> None:
    # a chat posts its whole history each time, past read_json's limit in a long one:
    # with a store the history is the server's, so the client may send the answer alone
    got = await node("aisdk_approval.mjs", f"{app.url}/chat", "true", "last")
    assert got["first"]["error"] is None and got["second"]["error"] is None, got
    assert app.sent == [("ada@x.org", "hi")]
    parts = got["second"]["last"]["parts"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[-1] == "outcome: sent to ada@x.org: hi"
    assert (await app.store.load("chat:chat-approval")).version == 4


async def test_ai_sdk_tool_approval_refused(app: App) -> None:
    got = await node("aisdk_approval.mjs", f"{app.url}/chat", "false")
    assert got["second"]["error"] is None, got
    assert app.sent == []
    parts = got["second"]["last"]["parts"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[-1] == "outcome: Refused: not now"
    # denied, as the ai package's own streamText says it (not a failed tool)
    tool = next(p for p in parts if p["type"] == "tool-send_email")
    assert tool["state"] == "output-denied" and "errorText" not in tool, tool
    # the client's history, sent back with the next question, holds the refusal
    run = read_chat_request({"id": "chat-approval", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Mail Ada"}]},
        got["second"]["last"],
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Why not?"}]}]})
    results = [(r.output, r.is_error) for m in run.history for r in m.tool_results]
    assert results == [("Refused: not now", True)] and run.decisions is None


async def test_agui_interrupt_resumed_with_an_edited_call(app: App) -> None:
    got = await node("agui_approval.mjs", f"{app.url}/agui", "true")
    assert got["error"] is None, got
    first, second = got["finished"]
    assert first["outcome"]["type"] == "interrupt"
    [interrupt] = first["outcome"]["interrupts"]
    assert interrupt["reason"] == "tool_approval"
    # the answer's shape, for a generic frontend to render (AG-UI 1.0 Interrupt.responseSchema)
    assert interrupt["responseSchema"] == APPROVAL_RESPONSE_SCHEMA
    assert interrupt["metadata"] == {"name": "send_email",
                                     "input": {"to": "ada@x.org", "body": "hi"}}
    assert first["result"]["stop_reason"] == "approval_required"
    assert app.sent == [("ada@x.org", "edited")]  # the edited call ran
    assert second["result"]["text"] == "outcome: sent to ada@x.org: edited"
    assert second["outcome"] is None or second["outcome"].get("type") != "interrupt"
    loaded = await app.store.load("agui:thread-approval-true")
    # saved: suspended (1), the approval claimed (2), its outcome (3), the call done (4)
    assert loaded.version == 4 and pending_calls(loaded.state) == []


async def test_agui_interrupt_refused(app: App) -> None:
    got = await node("agui_approval.mjs", f"{app.url}/agui", "false")
    assert got["error"] is None, got
    assert app.sent == []
    assert got["finished"][1]["result"]["text"] == "outcome: Refused: not now"


async def test_ai_sdk_tool_approval_in_headless_chromium(app: App) -> None:
    app.bundle = await asyncio.to_thread(bundle, "browser_approval.mjs")

    def drive() -> dict[str, Any]:
        with chromium() as driver:
            return browser_result(driver, f"{app.url}/page")

    got = await asyncio.to_thread(drive)
    assert got["error"] is None, got
    asked = next(p for p in got["first"]["parts"] if p["type"] == "tool-send_email")
    assert asked["state"] == "approval-requested"
    parts = got["second"]["parts"]
    tool = next(p for p in parts if p["type"] == "tool-send_email")
    assert tool["state"] == "output-available" and tool["output"] == "sent to ada@x.org: hi"
    assert [p["text"] for p in parts if p["type"] == "text"][-1] == "outcome: sent to ada@x.org: hi"
    assert app.sent == [("ada@x.org", "hi")]


RUN = {"threadId": "t", "runId": "r2", "state": None, "context": [], "forwardedProps": None,
       "tools": [], "messages": [{"id": "u1", "role": "user", "content": "Mail Ada"}]}


@pytest.mark.parametrize("payload", [{"approve": True}, True, None, {"approved": "yes"}])
def test_agui_resume_payload_of_another_shape_is_refused_with_the_shape_to_send(
        payload: Any) -> None:
    # it refused the call without a word: a typo in a frontend looked like a "no"
    with pytest.raises(InvalidInputError, match=r'"approved": true.*responseSchema'):
        read_run_input({**RUN, "resume": [
            {"interruptId": "c1", "status": "resolved", "payload": payload}]})


def test_agui_resume_payload_is_shown_escaped_and_cut() -> None:
    # the refusal quotes what the client sent: a bidi override or a line separator in it
    # reordered or split the logged message (web/_frame_caps.shown_input, shared with
    # check_request's Host and Origin)
    payload = {"approve": "\u202eon\u2028" + "x" * 500}
    with pytest.raises(InvalidInputError) as caught:
        read_run_input({**RUN, "resume": [
            {"interruptId": "c1", "status": "resolved", "payload": payload}]})
    message = str(caught.value)
    assert "\u202e" not in message and "\u2028" not in message
    assert '{"approve": "\\u202eon\\u2028xxx' in message and 'xxx...: send' in message


def test_agui_resume_answers_as_the_response_schema_says() -> None:
    def decision(entry: dict[str, Any]) -> Any:
        run = read_run_input({**RUN, "resume": [{"interruptId": "c1", **entry}]})
        assert run.decisions is not None
        return run.decisions["c1"]
    assert decision({"status": "resolved", "payload": {"approved": True}}) == Approve()
    assert decision({"status": "resolved", "payload": {"approved": False, "reason": "no"}}) \
        == Refuse("no")
    assert isinstance(decision({"status": "cancelled"}), Refuse)
