"""The SSE response over a real server (uvicorn on 127.0.0.1) and a real
HTTP client: wire format, ids, errors, 400s, and cancel on disconnect."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest
import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import AgentState, ReActAgent
from agentflow.errors import RateLimitedError
from agentflow.events import Complete, OutputPartial
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from agentflow.web import EventStreamResponse, SQLiteStateStore, sse_response
from agentflow.web.wire import event_to_dict
from tests.virtual_clock import run_virtual


class Contact(BaseModel):
    name: str
    email: str


Handler = Callable[[Request], Any]


async def serve(handler: Handler) -> tuple[str, uvicorn.Server, asyncio.Task[None]]:
    async def endpoint(request: Request) -> Response:
        result: Response = await handler(request)
        return result

    app = Starlette(routes=[Route("/", endpoint, methods=["GET", "POST"])])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    for _ in range(1000):
        if server.started:
            break
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}/", server, task


@pytest.fixture
async def run_server() -> AsyncIterator[Callable[[Handler], Any]]:
    started: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def start(handler: Handler) -> str:
        url, server, task = await serve(handler)
        started.append((server, task))
        return url

    yield start
    for server, task in started:
        server.should_exit = True
        await task


def parse_sse(raw: bytes) -> list[dict[str, Any]]:
    frames = []
    for block in raw.decode().split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                fields.setdefault("comments", []).append(line)
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if fields:
            frames.append(fields)
    return frames


def contact_model(delay: float = 0.0) -> ScriptedModel:
    return ScriptedModel([Reply(tool_calls=[Call("generate_response",
                                                 {"name": "Ada", "email": "ada@x.org"})],
                                chunk_size=6, delay=delay)])


async def test_stream_frames_ids_and_shapes(run_server: Any) -> None:
    agent = ReActAgent("web", contact_model())
    url = await run_server(lambda request: _async(sse_response(agent, "find Ada", Contact)))
    async with aiohttp.ClientSession() as http, http.post(url) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        frames = parse_sse(await response.read())
    assert [int(f["id"]) for f in frames] == list(range(1, len(frames) + 1))
    data = [orjson.loads(f["data"]) for f in frames]
    assert all(f["event"] == d["type"] for f, d in zip(frames, data, strict=True))
    assert data[0]["type"] == "call_started" and set(data[0]) == {
        "type", "call_id", "agent_name", "agent_id"}
    partials = [d["data"] for d in data if d["type"] == "output_partial"]
    assert len(partials) >= 2 and partials[-1] == {"name": "Ada", "email": "ada@x.org"}
    final = data[-1]
    assert final["type"] == "complete"
    assert final["output"] == {"name": "Ada", "email": "ada@x.org"}
    assert final["error"] is None and final["stop_reason"] == "structured_output"
    assert set(final["usage"]) == {"input_tokens", "output_tokens", "cached_tokens",
                                   "reasoning_tokens", "requests", "unreported",
                                   "cache_write_tokens"}


async def _async(value: Any) -> Any:
    return value


async def test_event_shapes_are_documented_one_per_type() -> None:
    from agentflow.web import wire

    doc = wire.__doc__ or ""
    import typing

    from agentflow.events import Event

    names = [cls.__dataclass_fields__["type"].default for cls in typing.get_args(Event)]
    assert len(names) >= 9
    for name in [*names, "error"]:  # every event type of the union has a documented shape
        assert f"``{name}``" in doc, name
    # every event the agent yields has a shape
    events = [e async for e in ReActAgent("t", contact_model()).stream("x", Contact)]
    assert {event_to_dict(e)["type"] for e in events} >= {"call_started", "output_partial",
                                                          "complete"}
    from agentflow.events import AttemptDiscarded

    assert event_to_dict(AttemptDiscarded(2, "stream_error", "cut")) == {
        "type": "attempt_discarded", "iteration": 2, "reason": "stream_error", "message": "cut"}

    @dataclass(frozen=True)
    class Future:
        value: int
        type: str = "future_event"

    assert event_to_dict(Future(3)) == {"type": "future_event", "value": 3}  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not an agentflow event"):
        event_to_dict(object())  # type: ignore[arg-type]


async def test_failed_call_ends_with_a_typed_error_event(run_server: Any) -> None:
    async def failing(request: RecordedRequest) -> Reply:
        raise RateLimitedError("slow down", status=429, retry_after=3.0)

    agent = ReActAgent("web", FunctionModel(failing))
    url = await run_server(lambda request: _async(sse_response(agent, "hi")))
    async with aiohttp.ClientSession() as http, http.post(url) as response:
        frames = parse_sse(await response.read())
    data = [orjson.loads(f["data"]) for f in frames]
    assert data[0]["type"] == "call_started"
    assert data[-1] == {"type": "error",
                        "error": {"type": "RateLimitedError", "message": "[429] slow down"}}
    assert frames[-1]["event"] == "error"


async def test_internal_errors_do_not_leak_their_text(run_server: Any) -> None:
    async def events() -> AsyncIterator[Any]:
        yield OutputPartial({"a": 1})
        raise RuntimeError("password=hunter2 in an internal message")

    url = await run_server(lambda request: _async(EventStreamResponse(events())))
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        raw = await response.read()
    assert b"hunter2" not in raw
    last = orjson.loads(parse_sse(raw)[-1]["data"])
    assert last == {"type": "error", "error": {"type": "InternalError",
                                               "message": "internal error"}}


async def test_bad_input_is_a_400_before_any_stream(run_server: Any) -> None:
    agent = ReActAgent("web", contact_model())
    url = await run_server(lambda request: _async(sse_response(agent, [])))
    async with aiohttp.ClientSession() as http, http.post(url) as response:
        assert response.status == 400
        body = await response.json()
    assert body["error"]["type"] == "InvalidInputError"


def test_idle_stream_gets_pings() -> None:
    """On a virtual clock: pings every 0.1 s while the events are 0.35 s apart,
    whatever the load (a late timer would merge pings on a real one)."""

    async def main() -> None:
        async def events() -> AsyncIterator[Any]:
            await asyncio.sleep(0.35)
            yield OutputPartial({"a": 1})
            await asyncio.sleep(0.35)
            yield OutputPartial({"a": 2})

        sent: list[bytes] = []

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(10)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message.get("body", b""))

        response = EventStreamResponse(events(), ping_interval=0.1)
        await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
        raw = b"".join(sent)
        assert raw.count(b": ping\n\n") >= 2
        assert raw.index(b": ping") < raw.index(b"id: 1")  # the silence before the first event too
        with pytest.raises(ValueError, match="ping_interval"):
            EventStreamResponse(events(), ping_interval=0)

    run_virtual(main())


async def test_client_disconnect_cancels_the_call_and_keeps_the_state(run_server: Any) -> None:
    model_cancelled = asyncio.Event()
    outcomes: list[str] = []

    async def slow(request: RecordedRequest) -> Reply:
        return Reply(text="x" * 400, chunk_size=1, delay=0.02)

    model = FunctionModel(slow)
    original = model.stream

    async def watched(*args: Any) -> AsyncIterator[Any]:
        try:
            async for chunk in original(*args):
                yield chunk
        except (asyncio.CancelledError, GeneratorExit):
            model_cancelled.set()
            raise

    model.stream = watched  # type: ignore[method-assign]
    state = AgentState()
    agent = ReActAgent("web", model)

    async def record(outcome: str) -> None:
        outcomes.append(outcome)

    url = await run_server(lambda request: _async(
        sse_response(agent, "go", state=state, on_close=record)))
    async with aiohttp.ClientSession() as http:
        response = await http.post(url)
        seen = b""
        while b"text_chunk" not in seen:
            seen += await response.content.readany()
        response.close()  # the client goes away mid-stream
    await asyncio.wait_for(model_cancelled.wait(), 60)
    async with asyncio.timeout(60):  # a guard against a hang only
        while not outcomes:  # noqa: ASYNC110 - on_close offers no event of its own
            await asyncio.sleep(0.02)
    assert outcomes == ["disconnected"]
    assert state.memory == []  # the call never committed


async def test_sse_response_with_store_saves_only_completed_calls(
    run_server: Any, tmp_path: Any
) -> None:
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        agent = ReActAgent("web", ScriptedModel(["first answer", "second answer"]))
        url = await run_server(lambda request: _async(
            sse_response(agent, request.query_params["q"], store=store, key="conv")))
        async with aiohttp.ClientSession() as http:
            for q in ("one", "two"):
                async with http.post(url, params={"q": q}) as response:
                    frames = parse_sse(await response.read())
                    assert orjson.loads(frames[-1]["data"])["type"] == "complete"
        loaded = await store.load("conv")
        assert loaded.version == 2
        assert [m.text for m in loaded.state.memory] == ["one", "first answer", "two",
                                                         "second answer"]
    with pytest.raises(ValueError, match="together"):
        sse_response(agent, "x", store=store)


async def test_a_failed_output_ends_the_stream_with_its_typed_error(run_server: Any) -> None:
    """``stream()`` raises the call's ``StructuredOutputError`` rather than ending
    with a ``Complete`` that lacks the output: the browser gets the events, then
    an ``error`` frame naming it, never a ``complete`` frame."""
    async def prose(request: RecordedRequest) -> Reply:
        return Reply(text="no json here")

    agent = ReActAgent("t", FunctionModel(prose))
    url = await run_server(lambda request: _async(sse_response(agent, "x", Contact)))
    async with aiohttp.ClientSession() as http, http.post(url) as response:
        frames = [orjson.loads(f["data"]) for f in parse_sse(await response.read())
                  if "data" in f]
    assert frames[0]["type"] == "call_started"
    assert "complete" not in [f["type"] for f in frames]
    assert frames[-1] == {"type": "error", "error": {
        "type": "StructuredOutputError", "message": frames[-1]["error"]["message"]}}
    assert "generate_response" in frames[-1]["error"]["message"]

    # a Complete made without its output (the loop as call() runs it) still says why
    complete = await agent._complete("x", Contact, None, None, None, None, deltas=True)
    final = event_to_dict(complete)
    assert isinstance(complete, Complete)
    assert final["output"] is None
    assert final["error"]["type"] == "StructuredOutputError"
