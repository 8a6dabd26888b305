"""The AG-UI and AI SDK UI message stream adapters, read by the protocols'
real JavaScript clients from npm (tests/js/package.json: ``@ag-ui/client``'s
``HttpAgent``; the ``ai`` package's ``DefaultChatTransport`` and
``readUIMessageStream``) in Node, and in headless Chromium, against a
Starlette app on 127.0.0.1 that this test starts.

The agent's scripted model thinks, writes text, calls a tool, then returns
the structured output in pieces, so every kind of event goes over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from agentflow import InvalidInputError, ReActAgent
from agentflow.errors import RateLimitedError
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import RequestRejected, read_json
from examples.web.app import MAX_BODY

from .headless_chromium import chromium

JS = Path(__file__).with_name("js")
CONTACT = {"name": "Ada Lovelace", "email": "ada@example.org"}


class Contact(BaseModel):
    name: str
    email: str


def lookup(name: str) -> str:
    """Look a person up in the address book."""
    return f"{name}: ada@example.org"


def scripted_model(seen: list[list[str]], fail: bool = False,
                   contact: dict[str, str] = CONTACT) -> FunctionModel:
    async def answer(request: RecordedRequest) -> Reply:
        seen.append([m.text for m in request.messages])
        if fail:
            raise RateLimitedError("slow down", retry_after=None)
        if not any(m.role == "tool" for m in request.messages[-2:]):
            return Reply(thinking="I should look her up.", text="Looking up Ada.",
                         tool_calls=[Call("lookup", {"name": "Ada"})], chunk_size=5)
        return Reply(tool_calls=[Call("generate_response", contact)], chunk_size=6)

    return FunctionModel(answer)


class Server:
    url = ""
    seen: list[list[str]]
    bundles: dict[str, bytes]
    tools: list[str]


def make_app(server: Server) -> Starlette:
    async def agui(request: Request) -> Response:
        try:
            run = read_run_input(await read_json(request))
        except RequestRejected as rejected:
            return rejected.response()
        except InvalidInputError as exc:
            return Response(str(exc), 400)
        fail = run.state.get("fail", False) if isinstance(run.state, dict) else False
        agent = ReActAgent("ui", scripted_model(server.seen, fail), tools=[lookup])
        server.tools = [t.name for t in run.tools]
        return agui_response(agent, run, Contact)

    async def chat(request: Request) -> Response:
        body = await read_json(request)
        run = read_chat_request(body)
        fail = run.thread_id == "chat-fail"
        agent = ReActAgent("ui", scripted_model(server.seen, fail), tools=[lookup])
        return ui_message_stream_response(agent, run, Contact)

    async def page(request: Request) -> Response:
        name = request.path_params["name"]
        return HTMLResponse(f'<!doctype html><pre id="out"></pre>'
                            f'<script type="module" src="/bundle/{name}.js"></script>')

    async def bundle(request: Request) -> Response:
        return Response(server.bundles[request.path_params["name"]],
                        media_type="text/javascript")

    return Starlette(routes=[
        Route("/agui", agui, methods=["POST"]),
        Route("/chat", chat, methods=["POST"]),
        Route("/page/{name}", page),
        Route("/bundle/{name}.js", bundle),
    ])


def node_ready() -> None:
    if shutil.which("node") is None:
        print("\nSKIP JS client tests: no node (scripts/system-deps.sh installs nodejs)")
        pytest.skip("node is not installed (scripts/system-deps.sh installs it)")
    if not (JS / "node_modules" / "ai").exists():
        print("\nSKIP JS client tests: tests/js/node_modules missing (make js-deps)")
        pytest.skip("the npm clients are not installed: make js-deps (npm ci in tests/js)")


@contextlib.asynccontextmanager
async def served(app: Starlette) -> AsyncIterator[str]:
    """``app`` served by uvicorn on 127.0.0.1 (a free port); yields its base URL,
    and stops the server on exit."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off")
    uv = uvicorn.Server(config)
    task = asyncio.ensure_future(uv.serve())
    async with asyncio.timeout(10):  # a server that cannot start fails the test
        while not uv.started:  # noqa: ASYNC110 - uvicorn offers no event
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{uv.servers[0].sockets[0].getsockname()[1]}"
    finally:
        uv.should_exit = True
        await task


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    node_ready()
    running = Server()
    running.seen, running.bundles = [], {}
    async with served(make_app(running)) as running.url:
        yield running


async def node(script: str, *args: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        "node", script, *args, cwd=JS, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


def check_history(seen: list[list[str]]) -> None:
    first = seen[0]
    assert "earlier question" in first and "earlier answer" in first
    assert first[-1] == "Find Ada's contact"


async def test_agui_client_reads_every_kind_of_event(server: Server) -> None:
    got = await node("agui_client.mjs", f"{server.url}/agui")
    assert got["error"] is None, got
    events = got["events"]
    assert events[0] == "RUN_STARTED" and events[-1] == "RUN_FINISHED"
    for kind in ("REASONING_START", "REASONING_MESSAGE_CONTENT", "REASONING_END",
                 "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                 "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
                 "STATE_SNAPSHOT"):
        assert kind in events, (kind, events)
    # the client rebuilt the conversation: text, the tool call and its result
    messages = got["messages"]
    assistant = [m for m in messages if m["role"] == "assistant" and m["id"] not in ("a0",)]
    assert any(m.get("content") == "Looking up Ada." for m in assistant), messages
    calls = [c for m in assistant for c in m.get("toolCalls", [])]
    assert [c["function"]["name"] for c in calls] == ["lookup"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"name": "Ada"}
    results = [m for m in messages if m["role"] == "tool"]
    assert results[0]["content"] == "Ada: ada@example.org"
    # the structured output streamed into the state, and came whole at the end
    outputs = [s.get("output") for s in got["states"] if s.get("output")]
    assert len({json.dumps(o) for o in outputs}) >= 3, outputs
    assert got["state"] == {"theme": "dark", "output": CONTACT}
    assert got["result"]["output"] == CONTACT
    assert got["result"]["stop_reason"] == "structured_output"
    # the run input was read: history, and the client's tools
    check_history(server.seen)
    assert server.tools == ["confirm"]


async def test_agui_client_sees_a_run_error(server: Server) -> None:
    script = JS / "agui_client.mjs"
    text = script.read_text().replace('initialState: { theme: "dark" }',
                                      'initialState: { fail: true }')
    failing = JS / "_agui_fail.mjs"
    failing.write_text(text)
    try:
        got = await node(failing.name, f"{server.url}/agui")
    finally:
        failing.unlink()
    assert got["error"]["code"] == "RateLimitedError", got
    assert "slow down" in got["error"]["message"]
    assert got["events"][-1] == "RUN_ERROR"


async def test_ai_sdk_reader_builds_the_message(server: Server) -> None:
    got = await node("aisdk_client.mjs", f"{server.url}/chat")
    assert got["error"] is None, got
    chunks = got["chunks"]
    assert chunks[0] == "start" and chunks[-1] == "finish"
    assert chunks.count("start-step") == chunks.count("finish-step") == 2
    final = got["snapshots"][-1]
    parts = final["parts"]
    kinds = [p["type"] for p in parts]
    assert "reasoning" in kinds and "text" in kinds and "tool-lookup" in kinds, kinds
    assert next(p for p in parts if p["type"] == "reasoning")["text"] == "I should look her up."
    assert next(p for p in parts if p["type"] == "text")["text"] == "Looking up Ada."
    tool = next(p for p in parts if p["type"] == "tool-lookup")
    assert (tool["state"], tool["input"], tool["output"]) == (
        "output-available", {"name": "Ada"}, "Ada: ada@example.org")
    outputs = [p for p in parts if p["type"] == "data-output"]
    assert len(outputs) == 1 and outputs[0]["data"] == CONTACT  # one part, replaced in place
    grown = [json.dumps(p["data"]) for s in got["snapshots"] for p in s["parts"]
             if p["type"] == "data-output"]
    assert len(set(grown)) >= 3  # the client saw the output grow
    assert final["metadata"]["stop_reason"] == "structured_output"
    check_history(server.seen)


async def test_ai_sdk_reader_sees_an_error(server: Server) -> None:
    script = (JS / "aisdk_client.mjs").read_text().replace('"chat-1"', '"chat-fail"')
    failing = JS / "_aisdk_fail.mjs"
    failing.write_text(script)
    try:
        got = await node(failing.name, f"{server.url}/chat")
    finally:
        failing.unlink()
    assert got["error"] is not None and "RateLimitedError: [429] slow down" in got["error"], got
    assert got["chunks"][-1] == "error"


def test_agui_fast_content_frames_match_the_package_encoder() -> None:
    from ag_ui.core import TextMessageContentEvent
    from ag_ui.encoder import EventEncoder

    from agentflow.events import ReasoningChunk
    from agentflow.web.agui import AGUIEncoder

    encoder = AGUIEncoder("t", "r")
    encoder.encode(ReasoningChunk("first", 1))
    for text in ("plain", 'quo"te \\ back', "caf\u00e9 \U0001f600", "line\nbreak \u2028"):
        fast = encoder.encode(ReasoningChunk(text, 1))
        expected = EventEncoder().encode(TextMessageContentEvent(message_id="r-1", delta=text))
        assert orjson.loads(fast[6:]) == orjson.loads(expected[6:].encode())
        assert fast == expected.encode()
    from ag_ui.core import StateDeltaEvent, StateSnapshotEvent

    from agentflow.events import OutputPartial

    # the first state is a snapshot, the later ones deltas from it (JSON Patch) when smaller
    notes = "n" * 200  # the client's state, sent back in every snapshot
    encoder = AGUIEncoder("t", "r", state={"theme": "dark", "notes": notes})
    fast = encoder.encode(OutputPartial({"name": "Ad"}))
    assert fast == EventEncoder().encode(StateSnapshotEvent(
        snapshot={"theme": "dark", "notes": notes, "output": {"name": "Ad"}})).encode()
    fast = encoder.encode(OutputPartial({"name": "Ada \u00e9", "tags": [1, 2.5, None, True]}))
    assert fast == EventEncoder().encode(StateDeltaEvent(delta=[
        {"op": "replace", "path": "/output/name", "value": "Ada \u00e9"},
        {"op": "add", "path": "/output/tags", "value": [1, 2.5, None, True]}])).encode()
    assert encoder.encode(OutputPartial({"name": "Ada \u00e9", "tags": [1, 2.5, None, True]})) \
        == b""  # no change
    encoder = AGUIEncoder("t", "r", state={"theme": "dark"})
    encoder.encode(OutputPartial({"name": "Ad"}))
    fast = encoder.encode(OutputPartial({"name": "Ada"}))  # no smaller as a delta: a snapshot
    assert fast == EventEncoder().encode(StateSnapshotEvent(
        snapshot={"theme": "dark", "output": {"name": "Ada"}})).encode()
    encoder = AGUIEncoder("t", "r", state={"output": "the app's own", "theme": "dark"},
                          output_key="contact")
    frame = encoder.encode(OutputPartial({"name": "Ad"}))
    assert orjson.loads(frame[6:])["snapshot"] == {
        "output": "the app's own", "theme": "dark", "contact": {"name": "Ad"}}


async def test_run_inputs_are_checked() -> None:
    with pytest.raises(InvalidInputError, match="RunAgentInput"):
        read_run_input({"threadId": "t"})
    with pytest.raises(InvalidInputError, match="end with a user message"):
        read_run_input({"threadId": "t", "runId": "r", "messages": [], "tools": [],
                        "context": [], "state": None, "forwardedProps": None})
    with pytest.raises(InvalidInputError, match="messages"):
        read_chat_request({"messages": "hi"})
    with pytest.raises(InvalidInputError, match=r"messages\[0\]"):
        read_chat_request({"messages": [{"role": "robot", "parts": []}]})
    # ai 4's useChat, or an AG-UI body at the AI SDK route: say which shape is read
    with pytest.raises(InvalidInputError, match=r"content but no parts.*ai package 5"):
        read_chat_request({"messages": [{"role": "user", "content": "hi"}]})
    run = read_chat_request({"id": "c", "messages": [
        {"id": "1", "role": "user", "parts": [{"type": "text", "text": "q"}]},
        {"id": "2", "role": "assistant", "parts": [
            {"type": "text", "text": "a"},
            {"type": "tool-lookup", "toolCallId": "t1", "state": "output-available",
             "input": {"name": "x"}, "output": {"found": True}}]},
        {"id": "3", "role": "user", "parts": [{"type": "text", "text": "next"}]}]})
    assert [m.role for m in run.history] == ["user", "assistant", "tool"]
    assert run.history[1].tool_uses[0].input == {"name": "x"}
    assert orjson.loads(run.history[2].tool_results[0].output) == {"found": True}
    assert run.message.text == "next" and run.thread_id == "c"


def bundle(entry: str) -> bytes:
    out = JS / "node_modules" / ".cache" / f"{entry}.bundle.js"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(JS / "node_modules" / ".bin" / "esbuild"), entry, "--bundle",
                    "--format=esm", "--platform=browser", f"--outfile={out}",
                    "--log-level=warning"], cwd=JS, check=True, timeout=120)
    return out.read_bytes()


def browser_result(driver: Any, url: str) -> dict[str, Any]:
    driver.get(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result = driver.execute_script("return window.agentflowResult || null")
        if result is not None:
            return result  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(driver.execute_script("return document.body.innerHTML"))


async def test_both_clients_in_headless_chromium(server: Server) -> None:
    server.bundles["aisdk"] = await asyncio.to_thread(bundle, "browser_aisdk.mjs")
    server.bundles["agui"] = await asyncio.to_thread(bundle, "agui_browser.mjs")

    def drive() -> tuple[dict[str, Any], dict[str, Any]]:
        with chromium() as driver:
            return (browser_result(driver, f"{server.url}/page/aisdk"),
                    browser_result(driver, f"{server.url}/page/agui"))

    aisdk, agui = await asyncio.to_thread(drive)
    assert aisdk["error"] is None, aisdk
    parts = aisdk["snapshots"][-1]["parts"]
    assert next(p for p in parts if p["type"] == "data-output")["data"] == CONTACT
    assert next(p for p in parts if p["type"] == "tool-lookup")["state"] == "output-available"
    assert agui["error"] is None, agui
    assert agui["events"][0] == "RUN_STARTED" and agui["events"][-1] == "RUN_FINISHED"
    assert agui["state"]["output"] == CONTACT


async def test_fastapi_example_serves_both_protocols() -> None:
    node_ready()
    from examples.web.fastapi_app import create_app as fastapi_app

    seen: list[list[str]] = []
    full = {**CONTACT, "company": "Analytical Engines", "phone": "1", "city": "London"}
    agent = ReActAgent("ui", scripted_model(seen, contact=full), tools=[lookup])
    config = uvicorn.Config(fastapi_app(agent), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off")
    uv = uvicorn.Server(config)
    task = asyncio.ensure_future(uv.serve())
    async with asyncio.timeout(10):  # a server that cannot start fails the test
        while not uv.started:  # noqa: ASYNC110 - uvicorn offers no event
            await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{uv.servers[0].sockets[0].getsockname()[1]}"
    try:
        agui = await node("agui_client.mjs", f"{url}/agui")
        assert agui["error"] is None, agui
        assert agui["events"][-1] == "RUN_FINISHED" and agui["state"]["output"] == full
        chat = await node("aisdk_client.mjs", f"{url}/api/chat")
        assert chat["error"] is None, chat
        parts = chat["snapshots"][-1]["parts"]
        assert next(p for p in parts if p["type"] == "data-output")["data"] == full
        check_history(seen)
        async with aiohttp.ClientSession() as http:  # a client's errors are 4xx, named
            for body, kind, status in [(b"{oops", "malformed_json", 400),
                                       (b'{"messages": "x"}', "invalid_request", 400),
                                       (b"x" * (MAX_BODY + 1), "payload_too_large", 413)]:
                async with http.post(f"{url}/api/chat", data=body,
                                     headers={"content-type": "application/json"}) as got:
                    assert got.status == status
                    assert (await got.json())["error"]["type"] == kind
            async with http.post(f"{url}/agui", data=b"{}", headers={
                    "content-type": "text/plain"}) as got:
                assert got.status == 415
            async with http.post(f"{url}/agui", data=b"{}", headers={
                    "content-type": "application/json", "origin": "https://evil.example"}) as got:
                assert got.status == 403
    finally:
        uv.should_exit = True
        await task
