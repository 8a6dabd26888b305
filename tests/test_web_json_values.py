"""JSON values Python reads but orjson refuses never fail a request, a stream
or a save.

A FastAPI/Starlette app reads its body with ``await request.json()`` (the
standard library's parser), which gives what orjson will not write: a lone
UTF-16 surrogate (a browser's ``JSON.stringify`` escapes half an emoji as
``"\\ud83d"``, e.g. a text cut with ``slice``) and an integer beyond 64 bits.
A model's output can hold such an integer too (a 25-digit invoice number in
an ``int`` field). Each made the AI SDK request reader raise ``TypeError``
(a 500), ended an AG-UI run with ``RUN_ERROR InternalError`` at its first
state snapshot, the UI streams and agentflow's own wire with the same error
at ``complete``, an OpenAI request with ``TypeError`` before it was sent, and
a stored conversation's save. Now a lone surrogate is written as U+FFFD (as
requests and saves already did) and a big integer with its exact digits;
both UI streams are read by the real clients' own checks (tests/js
``replay_streams.mjs``: ``@ag-ui/client``'s ``verifyEvents`` and the ``ai``
package's ``readUIMessageStream``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.model import ChatModel
from agentflow.providers import HttpSettings
from agentflow.providers.registry import get_model
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.sqlite import SQLiteStateStore
from agentflow.web.sse import sse_response
from agentflow.web.store import call_with_store
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake

from .test_web_adapters import JS, node_ready, served

BIG = "1234567890123456789012345"  # 25 digits: beyond 64 bits
REPLY = f'{{"number": {BIG}, "note": "paid"}}'


class Invoice(BaseModel):
    number: int
    note: str


def lookup(n: int) -> str:
    """Look an invoice up by its number."""
    return f"invoice {n}: paid"


AGUI_BODY = ('{"threadId": "t", "runId": "r", "tools": [], "context": [], "forwardedProps": {},'
             ' "state": {"draft": "caf\\ud83d", "count": BIG},'
             ' "messages": [{"id": "1", "role": "user", "content": "Read it \\ud83d"}]}'
             ).replace("BIG", BIG)
CHAT_BODY = ('{"id": "c", "messages": ['
             '{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "earlier"}]},'
             '{"id": "a1", "role": "assistant", "parts": [{"type": "step-start"},'
             ' {"type": "tool-lookup", "toolCallId": "t1", "state": "output-available",'
             '  "input": {"n": BIG}, "output": {"text": "caf\\ud83d", "n": BIG}}]},'
             '{"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Read it"}]}]}'
             ).replace("BIG", BIG)


@pytest.fixture
async def fake() -> AsyncIterator[OpenAIFake]:
    async with OpenAIFake() as server:
        yield server


def agent_for(fake: OpenAIFake, models: list[ChatModel]) -> ReActAgent:
    model = get_model("openai:gpt-4o-mini", base_url=fake.url, api_key="sk-test",
                      settings=HttpSettings(max_retries=0))
    models.append(model)
    return ReActAgent("ui", model, tools=[lookup])


async def replay(protocol: str, body: str) -> dict[str, Any]:
    """``body`` read by the protocol's real client checks (tests/js)."""
    cases = json.dumps({"cases": [{"id": "1", "protocol": protocol, "body": body}]})
    proc = await asyncio.create_subprocess_exec(
        "node", "replay_streams.mjs", cwd=JS, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(cases.encode()), 120)
    assert proc.returncode == 0, err.decode()
    [result] = json.loads(out.decode().strip().splitlines()[-1])["results"]
    return result  # type: ignore[no-any-return]


@pytest.mark.parametrize("protocol", ["agui", "ai"])
async def test_a_body_read_by_the_standard_parser_runs_and_its_stream_ends_well(
        fake: OpenAIFake, protocol: str) -> None:
    node_ready()
    fake.add(FakeReply(text=REPLY))
    models: list[ChatModel] = []

    async def agui(request: Request) -> Response:
        run = read_run_input(await request.json())  # the standard library's parser
        return agui_response(agent_for(fake, models), run, Invoice, ping_interval=60)

    async def chat(request: Request) -> Response:
        run = read_chat_request(await request.json())
        return ui_message_stream_response(agent_for(fake, models), run, Invoice,
                                          ping_interval=60)

    app = Starlette(routes=[Route("/agui", agui, methods=["POST"]),
                            Route("/chat", chat, methods=["POST"])])
    try:
        async with served(app) as url, aiohttp.ClientSession() as http, http.post(
                f"{url}/{'agui' if protocol == 'agui' else 'chat'}",
                data=AGUI_BODY if protocol == "agui" else CHAT_BODY,
                headers={"content-type": "application/json"}) as response:
            assert response.status == 200
            body = (await response.read()).decode()
    finally:
        for model in models:
            await model.aclose()  # type: ignore[attr-defined]
    result = await replay(protocol, body)
    assert result["error"] is None, (result, body)
    frames = [json.loads(f[6:]) for f in body.split("\n\n") if f.startswith("data: {")]
    last = frames[-1]
    if protocol == "agui":
        assert last["type"] == "RUN_FINISHED", body
        assert last["result"]["stop_reason"] == (
            "structured_output")
        state = result["state"]  # the snapshot, then deltas (JSON Patch) applied
        assert state["draft"] == "caf\ufffd" and state["output"]["note"] == "paid"
    else:
        assert result["errorChunk"] is None and last["type"] == "finish"
        assert last["finishReason"] == "stop"
    assert f'"number":{BIG}' in body  # the output's digits, exact
    sent = json.dumps(fake.bodies[0]["messages"], ensure_ascii=False)
    assert "\ufffd" in sent  # the half emoji, repaired before it was sent
    if protocol == "ai":  # the client's tool call and result reached the model
        assert "lookup" in sent and "caf\ufffd" in sent


async def test_agentflow_wire_and_a_stored_conversation_take_a_big_integer(
        fake: OpenAIFake, tmp_path: Path) -> None:
    """The model calls a tool with a 25-digit number and answers with it: the
    conversation saves (its tool call holds the number) and agentflow's own
    wire sends ``complete``."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", f'{{"n": {BIG}}}')]),
             FakeReply(text=REPLY),
             FakeReply(text=REPLY))
    models: list[ChatModel] = []
    agent = agent_for(fake, models)
    store = SQLiteStateStore(tmp_path / "states.sqlite3")
    try:
        reply = await call_with_store(agent, store, "conv", "Read invoice", Invoice)
        assert reply.output.number == int(BIG)
        saved = (await store.load("conv")).state
        assert BIG in str(saved.memory)
        assert fake.bodies[1]["messages"][-1]["content"] == f"invoice {BIG}: paid"
        frames = bytearray()

        async def receive() -> dict[str, Any]:
            await asyncio.Event().wait()
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            frames.extend(message.get("body", b""))

        response = sse_response(agent, "Read invoice", Invoice, ping_interval=60)
        await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
        assert response.outcome == "completed" and response.error is None
        assert b"event: complete" in frames and f'"number":{BIG}'.encode() in frames
    finally:
        await store.aclose()
        for model in models:
            await model.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", ["agentflow", "agui", "ai"])
async def test_every_encoder_streams_a_call_whose_values_orjson_refuses(protocol: str) -> None:
    """A tool call with a 25-digit number, a tool result and an output with
    it, an invalid output first (the engine's retry quotes it): each event
    is written (AG-UI's ``TOOL_CALL_ARGS`` failed with ``TypeError``; the
    retry of an invalid output with such a number raised it from the call)."""
    from agentflow.testing import Call, Reply, ScriptedModel
    from agentflow.web.agui import AGUIEncoder
    from agentflow.web.aisdk import UIMessageEncoder
    from agentflow.web.encoding import AgentflowEncoder
    from agentflow.web.sse import EventStreamResponse

    if protocol != "agentflow":
        node_ready()
    model = ScriptedModel([
        Reply(tool_calls=[Call("lookup", f'{{"n": {BIG}}}')]),
        Reply(tool_calls=[Call("generate_response", f'{{"number": {BIG}}}')]),  # no note
        Reply(tool_calls=[Call("generate_response", REPLY)]),
    ])
    agent = ReActAgent("ui", model, tools=[lookup])
    encoder = {"agentflow": AgentflowEncoder, "agui": lambda: AGUIEncoder("t", "r"),
               "ai": UIMessageEncoder}[protocol]()
    body = bytearray()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        body.extend(message.get("body", b""))

    response = EventStreamResponse(agent.stream("Read invoice", Invoice), encoder=encoder,
                                   ping_interval=60)
    await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
    assert response.error is None and response.outcome == "completed", response.error
    text = body.decode()
    assert text.count(BIG) >= 3  # the call's input, its result, the output
    assert f"invoice {BIG}: paid" in text
    if protocol != "agentflow":
        result = await replay(protocol, text)
        assert result["error"] is None and result.get("errorChunk") is None, result
    retry = str(model.requests[2].messages)
    assert "note" in retry and BIG in retry  # the invalid output, quoted to the model
