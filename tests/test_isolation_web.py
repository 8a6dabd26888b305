"""Fifty users at once through one shared agent, as a web backend meets them:
the agent served by uvicorn behind the raw SSE, AG-UI and AI SDK endpoints
(stateless and with a SQLite store), the OpenAI adapter against a fake
vendor server on 127.0.0.1 (``tests.isolation_users``). Every request body
the vendor receives holds its own user's marker only, every reply goes to
its own caller only; and the lifecycle: a client that goes away mid-tool,
failed outputs, a double submit, a request-scoped value.
"""

from __future__ import annotations

import asyncio
import contextvars
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent, StructuredOutputError
from agentflow.providers.registry import get_model
from agentflow.tools import tool
from agentflow.web import SQLiteStateStore, sse_response
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.isolation_users import (
    MARK,
    USERS,
    WARM_UP,
    Note,
    Vendor,
    held_vendor,
    is_warm_up,
    marker,
    note_tool,
    shared_agent,
    usage_of,
)

from .test_web_adapters import served


@pytest.fixture
async def vendor() -> AsyncIterator[Vendor]:
    async with held_vendor() as running:
        yield running


def _app(agent: ReActAgent, store: SQLiteStateStore) -> Starlette:
    async def raw(request: Request) -> Response:
        body = await read_json(request)
        if body.get("key"):
            return sse_response(agent, body["text"], Note, store=store, key=body["key"])
        return sse_response(agent, body["text"], Note)

    async def agui(request: Request) -> Response:
        body = await read_json(request)
        run = read_run_input(body)
        if body.get("forwardedProps", {}).get("key"):
            return agui_response(agent, run, Note, store=store,
                                 key=body["forwardedProps"]["key"])
        return agui_response(agent, run, Note)

    async def chat(request: Request) -> Response:
        body = await read_json(request)
        run = read_chat_request(body)
        if body.get("key"):
            return ui_message_stream_response(agent, run, Note, store=store, key=body["key"])
        return ui_message_stream_response(agent, run, Note)

    return Starlette(routes=[Route("/raw", raw, methods=["POST"]),
                             Route("/agui", agui, methods=["POST"]),
                             Route("/chat", chat, methods=["POST"])])


def _client_tool(mark: str) -> dict[str, Any]:
    """A frontend tool of the user's own (offered to the model with the run)."""
    return {"name": f"pick_{mark}", "description": f"ask {mark} to pick",
            "parameters": {"type": "object", "properties": {mark: {"type": "string"}}}}


def _request(n: int, stored: bool) -> tuple[str, dict[str, Any]]:
    mark = marker(n)
    text = f"I am {mark}; fetch my note"
    key = f"conv-{mark}" if stored else None
    kind = n % 3
    if kind == 0:
        return "/raw", {"text": text, "key": key}
    if kind == 1:
        return "/agui", {"threadId": f"t-{mark}", "runId": f"r-{mark}", "state": {},
                         "messages": [{"id": f"m-{mark}", "role": "user", "content": text}],
                         "tools": [_client_tool(mark)], "context": [],
                         "forwardedProps": {"key": key}}
    return "/chat", {"id": f"c-{mark}", "key": key, "tools": [_client_tool(mark)], "messages": [
        {"id": f"m-{mark}", "role": "user", "parts": [{"type": "text", "text": text}]}]}


@pytest.mark.parametrize("stored", [False, True], ids=["stateless", "sqlite"])
async def test_fifty_web_requests_to_one_agent_stay_apart(vendor: Vendor, tmp_path: Path,
                                                          stored: bool) -> None:
    agent = shared_agent(vendor)
    store = SQLiteStateStore(str(tmp_path / "conv.sqlite3"))
    replies: dict[str, bytes] = {}
    async with served(_app(agent, store)) as url, aiohttp.ClientSession() as http:

        async def user(n: int) -> None:
            path, body = _request(n, stored)
            async with http.post(url + path, json=body) as response:
                assert response.status == 200
                replies[marker(n)] = await response.read()

        async with asyncio.timeout(15), asyncio.TaskGroup() as tg:
            for n in range(USERS):
                tg.create_task(user(n))
    vendor.check()
    offered = sum(b'"pick_U' in orjson.dumps(body) for body in vendor.fake.bodies)
    assert offered == 2 * sum(1 for n in range(USERS) if n % 3)  # each its own user's tool
    for mark, raw in replies.items():
        assert set(MARK.findall(raw.decode())) == {mark}, raw
        assert f"note-of-{mark}".encode() in raw
        counted = set(re.findall(rb'"input_?[tT]okens":\s*(\d+)', raw))
        assert counted <= {str(usage_of(mark)[0] * 2).encode()}, raw  # its own usage only
    if stored:
        for n in range(USERS):
            loaded = await store.load(f"conv-{marker(n)}")
            assert loaded.version == 1
            assert set(MARK.findall(loaded.state.to_json().decode())) == {marker(n)}
    await store.aclose()
    await agent.aclose()


@pytest.mark.parametrize("path", ["/raw", "/agui", "/chat"])
async def test_a_client_that_goes_away_mid_tool_leaves_nothing_running_or_saved(
        tmp_path: Path, path: str) -> None:
    """The client disconnects while the call's tool runs: the tool is
    cancelled, nothing is saved, and the next run on the conversation sees
    neither the abandoned call nor its tool."""
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow_note(user: str) -> str:
        """Look up a user's note, slowly."""
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async with OpenAIFake() as fake:
        def answer(body: Any) -> FakeReply:
            if "second visit" in orjson.dumps(body).decode():
                return FakeReply(text=orjson.dumps({"user": "U001a", "secret": "s"}).decode())
            return FakeReply(tool_calls=[FakeCall("slow_note", {"user": "U001a"}, id="call_1")])

        fake.default = answer
        model = get_model("openai:gpt-4o-mini", base_url=fake.url, api_key="sk-test")
        agent = ReActAgent("shared", model, tools=[slow_note])
        store = SQLiteStateStore(str(tmp_path / "conv.sqlite3"))
        async with served(_app(agent, store)) as url, aiohttp.ClientSession() as http:
            _, body = _request(1 if path == "/agui" else 2 if path == "/chat" else 0, True)
            body = _retarget(body, "I am U001a; first visit")
            response = await http.post(url + path, json=body)
            await asyncio.wait_for(started.wait(), 10)
            response.close()  # the client goes away while the tool runs
            await asyncio.wait_for(cancelled.wait(), 10)
            key = "conv-" + marker(1 if path == "/agui" else 2 if path == "/chat" else 0)
            assert (await store.load(key)).version == 0  # nothing saved
            body = _retarget(body, "I am U001a; second visit")
            async with http.post(url + path, json=body) as again:
                raw = await again.read()
        assert b"call_1" not in orjson.dumps(fake.bodies[-1])  # the abandoned call is gone
        assert b"second visit" in raw or b'"s"' in raw
        assert (await store.load(key)).version == 1
        await store.aclose()
        await agent.aclose()


def _retarget(body: dict[str, Any], text: str) -> dict[str, Any]:
    """``body`` (as ``_request`` made it) asking ``text`` instead."""
    raw = orjson.dumps(body).decode()
    old = next(iter(re.findall(r"I am U\d{3}x; fetch my note|I am U001a; [a-z]+ visit", raw)))
    return dict(orjson.loads(raw.replace(old, text)))


async def test_fifty_failed_outputs_each_carry_their_own_text(tmp_path: Path) -> None:
    """Every user's output fails (the model answers prose naming the user,
    never the output): each call's error, and each web stream's error
    event, carries its own user's text only."""
    async with OpenAIFake() as fake:
        def prose(body: Any) -> FakeReply:
            user = next(m for m in body["messages"] if m["role"] == "user")
            return FakeReply(text=f"Sorry {MARK.findall(str(user['content']))[0]}, I cannot.",
                             chunk_size=None)

        fake.default = prose
        model = get_model("openai:gpt-4o-mini", base_url=fake.url, api_key="sk-test")
        agent = ReActAgent("shared", model, tools=[note_tool])
        store = SQLiteStateStore(str(tmp_path / "conv.sqlite3"))
        errors: dict[str, str] = {}
        async with served(_app(agent, store)) as url, aiohttp.ClientSession() as http:

            async def user(n: int) -> None:
                mark = marker(n)
                if n % 4 == 3:  # the web endpoints
                    path, body = _request(n, bool(n % 8 == 3))
                    async with http.post(url + path, json=body) as response:
                        errors[mark] = (await response.read()).decode()
                    return
                try:
                    if n % 2:
                        async for _ in agent.stream(f"I am {mark}", Note):
                            pass
                    else:
                        await (await agent.call(f"I am {mark}", Note)).output  # type: ignore[misc]
                except StructuredOutputError as error:
                    errors[mark] = f"{error} {error.raw_text}"

            async with asyncio.timeout(60), asyncio.TaskGroup() as tg:
                for n in range(USERS):
                    tg.create_task(user(n))
        await store.aclose()
        await agent.aclose()
    assert len(errors) == USERS
    for mark, text in errors.items():
        assert set(MARK.findall(text)) == {mark}, text
        if text.startswith(("id:", "data:")):  # a web stream ends with its typed error
            frames = [f for f in text.split("\n\n") if f.strip() and "[DONE]" not in f]
            assert "StructuredOutputError" in frames[-1], frames[-1]


class PairFake(OpenAIFake):
    """Holds each request (the warm-up aside) until two came."""

    arrived = 0
    both_in: asyncio.Event

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if not is_warm_up(orjson.loads(await request.read())):
            self.arrived += 1
            if self.arrived == 2:
                self.both_in.set()
            await self.both_in.wait()
        return await super()._handle(request)


@pytest.mark.parametrize("path", ["/raw", "/agui", "/chat"])
async def test_two_requests_on_one_conversation_one_wins_one_ends_typed(
        tmp_path: Path, path: str) -> None:
    """Two requests on one stored conversation at once (a double submit):
    both model requests are in flight together; one saves, the other's
    stream ends with its typed ``StateConflictError`` event (never silently,
    never a second save over the first)."""
    async with PairFake() as fake:
        fake.both_in = asyncio.Event()
        fake.default = lambda body: FakeReply(
            text="ready" if is_warm_up(body) else '{"user": "U001x", "secret": "s"}')
        model = get_model("openai:gpt-4o-mini", base_url=fake.url, api_key="sk-test")
        agent = ReActAgent("shared", model)
        await agent.call(WARM_UP)  # the rate governor's slow start: one reply first
        store = SQLiteStateStore(str(tmp_path / "conv.sqlite3"))
        n = {"/raw": 0, "/agui": 1, "/chat": 2}[path]
        async with served(_app(agent, store)) as url, aiohttp.ClientSession() as http:

            async def send() -> str:
                _, body = _request(n, True)
                async with http.post(url + path, json=body) as response:
                    return (await response.read()).decode()

            async with asyncio.timeout(20):
                replies = await asyncio.gather(send(), send())
        conflicts = [t for t in replies if "StateConflictError" in t]
        assert len(conflicts) == 1, replies
        frames = [f for f in conflicts[0].split("\n\n") if f.strip() and "[DONE]" not in f]
        assert "StateConflictError" in frames[-1]  # the stream's last event: the typed error
        assert (await store.load(f"conv-{marker(n)}")).version == 1
        await store.aclose()
        await agent.aclose()


WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
"""A request-scoped value an app sets in its endpoint (the signed-in user)."""


def note_as_caller(user: str) -> str:
    """Look up a user's note, as the signed-in caller."""
    return f"note-of-{user} read by {WHO.get()}"


async def test_a_request_scoped_value_reaches_its_own_requests_tools_only(
        vendor: Vendor) -> None:
    """An endpoint sets a context variable (the signed-in user) before it
    returns its response; the tool of that request's call reads that user's
    value, never another request's, over all three protocols at once (the
    events are iterated where the response runs, in the request's context)."""
    model = get_model("openai:gpt-4o-mini", base_url=vendor.fake.url, api_key="sk-test")
    agent = ReActAgent("shared", model, tools=[tool(note_as_caller, name="note_tool")])
    store = SQLiteStateStore(":memory:")
    inner = {r.path: r.endpoint for r in _app(agent, store).routes}  # type: ignore[attr-defined]

    async def scoped(request: Request) -> Response:
        WHO.set(request.headers["x-user"])  # the signed-in user, as a session would say
        return await inner[request.url.path](request)  # type: ignore[no-any-return]

    app = Starlette(routes=[Route(p, scoped, methods=["POST"]) for p in inner])
    replies: dict[str, str] = {}
    async with served(app) as url, aiohttp.ClientSession() as http:

        async def user(n: int) -> None:
            path, body = _request(n, False)
            async with http.post(url + path, json=body,
                                 headers={"x-user": marker(n)}) as response:
                replies[marker(n)] = (await response.read()).decode()

        async with asyncio.timeout(60), asyncio.TaskGroup() as tg:
            for n in range(USERS):
                tg.create_task(user(n))
    await store.aclose()
    await agent.aclose()
    vendor.check()
    for mark, raw in replies.items():
        assert f"note-of-{mark} read by {mark}" in raw, raw  # its own caller's value
        assert set(MARK.findall(raw)) == {mark}
