"""A failed call never ends a stream silently, on any of the stream protocols.

Every way a call can fail, served by a Starlette app on 127.0.0.1 and read by
the protocols' real JavaScript clients in Node (tests/js: ``@ag-ui/client``'s
``HttpAgent``; the ``ai`` package's ``AbstractChat``, which ``useChat`` wraps;
for agentflow's own SSE wire, ``fetch`` and the ``eventsource-parser``
package, as a page reads it):

* a provider error before any chunk (the OpenAI adapter against a fake that
  echoes the API key in its error), and one that never connects (credentials
  in the base URL);
* a provider error mid-stream, after text chunks (and after a stream retry),
  or after reasoning chunks;
* a tool that keeps raising (its exception quoting a URL with credentials);
* a structured output the model never gets valid (the engine gives up);
* an exception in the user's middleware, mid-stream;
* the app's own events (``events=``) that stop before the call's end;
* a tool's output and a vendor's error text holding a lone UTF-16 surrogate
  (a file name ``os.fsdecode`` read): no encoder may fail on it, least of all
  the one writing the error.

Each ends with the protocol's error event: the SSE wire's typed ``error``
event (``{"type": "error", "error": {"type", "message"}}``), AG-UI ``RUN_ERROR`` (the run's
last event; 1.0 lifecycle: a run ends with ``RUN_FINISHED`` or ``RUN_ERROR``),
the AI SDK's ``error`` chunk (``{"type": "error", "errorText"}``, the ``ai``
package's ``uiMessageChunkSchema``; its chat then has status ``error``), and
what the client got holds no secret. A client that goes away (``abortRun``,
``chat.stop()``) cancels the call: the model's stream is closed and nothing is
logged as an error. ``agent.stream()`` itself raises the typed error (or the
middleware's own exception) after the events so far, never a ``Complete``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow._secrets import register_secret
from agentflow.errors import AgentflowError, ProviderConnectionError, ToolRetriesExceededError
from agentflow.events import Complete, Event, ReasoningChunk
from agentflow.middleware.base import Middleware
from agentflow.model import ChatModel
from agentflow.providers import HttpSettings
from agentflow.providers.registry import get_model
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.encoding import AgentflowEncoder
from agentflow.web.requests import read_json
from agentflow.web.sse import EventStreamResponse, Outcome, sse_response
from agentflow.web.wire import error_to_dict
from tests.fakes.openai import OpenAIFake

from .test_web_adapters import node, node_ready, served

KEY = "sk-webflag-live-8Hq2ZkW9xVt4LpN7"
SECRET = "pw-0123456789abcdef"  # a URL's password: never registered, cut as URL user info
TOKEN = "tok-fedcba9876543210"  # a URL's query token, likewise
LEAKY_URL = f"https://svc:{SECRET}@db.example/q?token={TOKEN}"


class Contact(BaseModel):
    name: str
    email: str


def lookup(name: str) -> str:
    """Look a person up in the address book."""
    raise RuntimeError(f"cannot reach {LEAKY_URL}")


class Buggy(Middleware):
    """A user's middleware with a bug that shows on the third chunk: it raises
    ``error`` (a ``CancelledError`` nobody asked for, too: code that re-raises
    one it caught from a future someone else cancelled)."""

    def __init__(self, error: BaseException) -> None:
        self.chunks = 0
        self.error = error

    def on_chunk(self, ex: Any, chunk: Any, reply: Any) -> None:
        self.chunks += 1
        if self.chunks == 3:
            raise self.error


def text_then(error: BaseException) -> FunctionModel:
    """Text in chunks, then ``error`` mid-stream, every request."""
    return FunctionModel(lambda r: Reply(text="Looking Ada up in the address book.",
                                         chunk_size=4, error=error, error_after=3))


def thinking_then(error: BaseException) -> FunctionModel:
    """Reasoning in chunks, then ``error`` mid-stream, every request."""
    return FunctionModel(lambda r: Reply(thinking="Ada is in the address book, surely.",
                                         text="unreached", chunk_size=4, error=error,
                                         error_after=3))


UNPAIRED = os.fsdecode(b"\xff")  # a lone surrogate ("\udcff"): no UTF-8 writes it


def list_reports(folder: str) -> str:
    """List a folder's reports (a file name that is not UTF-8 among them)."""
    return f"report-{UNPAIRED}.txt"


def unpaired_then_cut(request: RecordedRequest) -> Reply:
    """A tool whose output holds a lone surrogate, then text whose stream is
    cut by a vendor's error quoting one too."""
    if not any(m.tool_results for m in request.messages):
        return Reply(tool_calls=[Call("list_reports", {"folder": "q3"})])
    return Reply(text=f"Found report-{UNPAIRED}.txt, reading it.", chunk_size=6,
                 error=ProviderConnectionError(f"vendor said: bad byte {UNPAIRED} in the stream",
                                               partial=True), error_after=3)


def always_calling() -> FunctionModel:
    return FunctionModel(lambda r: Reply(text="Trying the book.",
                                         tool_calls=[Call("lookup", {"name": "Ada"})]))


def prose() -> FunctionModel:
    return FunctionModel(lambda r: Reply(text="Her name is Ada, e-mail unknown.", chunk_size=6))


async def fails_first() -> AsyncIterator[Event]:
    """A call that fails before its first event (as one whose MCP server is
    down fails reading its tools)."""
    raise ProviderConnectionError("cannot reach the tool server")
    yield  # an async generator


async def ends_early() -> AsyncIterator[Event]:
    """An app's events that stop before the call's end (a wrapper that
    returns early): no ``complete`` and no exception."""
    async with aclosing(ReActAgent("ui", prose()).stream("Find Ada")) as events:
        async for event in events:
            yield event
            if isinstance(event, ReasoningChunk):
                return


def events_of(mode: str) -> AsyncIterator[Event] | None:
    """The events a mode's response streams in place of its agent's."""
    return {"before-start": fails_first, "ends-early": ends_early}.get(mode, lambda: None)()


EXPECTED = {  # mode -> the error type the client is told, and whether text came first
    "before-start": ("ProviderConnectionError", False),
    "provider-before": ("AuthenticationError", False),
    "never-connects": ("ProviderConnectionError", False),
    "provider-mid": ("ProviderConnectionError", True),
    "thinking-mid": ("ProviderConnectionError", False),
    "tool-raises": ("ToolRetriesExceededError", True),
    "give-up": ("StructuredOutputError", True),
    "middleware": ("InternalError", True),
    "stray-cancel": ("StrayCancelError", True),  # the call's typed error (loop.stray_call_error)
    "unpaired-text": ("ProviderConnectionError", True),
    "ends-early": ("InternalError", True),
}


class App:
    url = ""
    fake: OpenAIFake
    models: list[ChatModel]
    cancelled: asyncio.Event
    outcomes: list[Outcome]
    ended: asyncio.Event  # set by ``closed``: the response's on_close ran

    def agent(self, mode: str) -> ReActAgent:
        no_retries = HttpSettings(max_retries=0)
        if mode in ("before-start", "ends-early"):  # its events are events_of(mode)
            return ReActAgent("ui", FunctionModel(lambda r: "unreached"))
        if mode == "provider-before":
            model: ChatModel = get_model("openai:gpt-4o-mini", base_url=self.fake.url,
                                         api_key=KEY, settings=no_retries)
            self.models.append(model)
            return ReActAgent("ui", model)
        if mode == "never-connects":  # port 9 (discard): nothing listens on loopback
            model = get_model("openai:gpt-4o-mini", base_url=f"http://gw:{SECRET}@127.0.0.1:9/v1",
                              settings=no_retries)
            self.models.append(model)
            return ReActAgent("ui", model)
        if mode == "provider-mid":  # the stream breaks, is sent again, breaks again
            return ReActAgent("ui", text_then(ProviderConnectionError(
                "connection reset mid-stream", partial=True)), stream_retries=1)
        if mode == "thinking-mid":
            return ReActAgent("ui", thinking_then(ProviderConnectionError(
                "connection reset mid-stream", partial=True)))
        if mode == "tool-raises":
            return ReActAgent("ui", always_calling(), tools=[lookup])
        if mode == "give-up":
            return ReActAgent("ui", prose())
        if mode in ("middleware", "stray-cancel"):
            error = (RuntimeError(f"bug while reading {LEAKY_URL}") if mode == "middleware"
                     else asyncio.CancelledError())
            return ReActAgent("ui", text_then(AssertionError("unreached")),
                              middleware=[Buggy(error)])
        if mode == "unpaired-text":
            return ReActAgent("ui", FunctionModel(unpaired_then_cut), tools=[list_reports])
        assert mode == "disconnect"
        return ReActAgent("ui", self.watched(FunctionModel(
            lambda r: Reply(text="x" * 2000, chunk_size=1, delay=0.01))))

    def watched(self, model: FunctionModel) -> FunctionModel:
        """``model``, noting when the call closes its stream before the end."""
        original = model.stream

        async def stream(*args: Any) -> AsyncIterator[Any]:
            try:
                async for chunk in original(*args):
                    yield chunk
            except (asyncio.CancelledError, GeneratorExit):
                self.cancelled.set()
                raise

        model.stream = stream  # type: ignore[method-assign]
        return model

    async def closed(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)
        self.ended.set()


def output_of(mode: str) -> type[Contact] | None:
    return Contact if mode in ("give-up", "tool-raises") else None


@pytest.fixture
async def app() -> AsyncIterator[App]:
    node_ready()
    register_secret(KEY)  # as the adapter does for the key it sends
    running = App()
    running.models, running.outcomes = [], []
    running.cancelled, running.ended = asyncio.Event(), asyncio.Event()

    async def agui(request: Request) -> Response:
        mode = request.path_params["mode"]
        run = read_run_input(await read_json(request))
        return agui_response(running.agent(mode), run, output_of(mode), ping_interval=60,
                             on_close=running.closed,
                             events=events_of(mode))

    async def chat(request: Request) -> Response:
        mode = request.path_params["mode"]
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(
            running.agent(mode), run, output_of(mode), ping_interval=60, on_close=running.closed,
            events=events_of(mode))

    async def sse(request: Request) -> Response:
        mode = request.path_params["mode"]
        body = await read_json(request)
        if (events := events_of(mode)) is not None:
            return EventStreamResponse(events, ping_interval=60, on_close=running.closed)
        return sse_response(running.agent(mode), body["text"], output_of(mode), ping_interval=60,
                            on_close=running.closed)

    routes = [Route("/agui/{mode}", agui, methods=["POST"]),
              Route("/chat/{mode}", chat, methods=["POST"]),
              Route("/sse/{mode}", sse, methods=["POST"])]
    async with OpenAIFake() as running.fake:
        running.fake.echo_key = True
        async with served(Starlette(routes=routes)) as running.url:
            yield running
    for model in running.models:
        await model.aclose()  # type: ignore[attr-defined]


def no_secret(got: dict[str, Any]) -> None:
    text = json.dumps(got)
    for secret in (KEY, KEY[:12], KEY[-12:], SECRET, TOKEN):
        assert secret not in text, (secret, text)


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_agui_run_ends_with_run_error(app: App, mode: str) -> None:
    got = await node("agui_run.mjs", f"{app.url}/agui/{mode}")
    code, text_first = EXPECTED[mode]
    types = [e["type"] for e in got["events"]]
    assert types[-1] == "RUN_ERROR", types  # the run's last event
    assert types[0] == ("RUN_ERROR" if mode == "before-start" else "RUN_STARTED")
    assert "RUN_FINISHED" not in types
    assert got["runError"]["code"] == code, got["runError"]
    assert ("TEXT_MESSAGE_CONTENT" in types) == text_first, types
    if code == "InternalError":
        assert got["runError"]["message"] == "internal error"
    no_secret(got)
    assert app.outcomes == ["failed"]


OPENERS = {"TEXT_MESSAGE_START": "TEXT_MESSAGE_END", "TOOL_CALL_START": "TOOL_CALL_END",
           "REASONING_START": "REASONING_END",
           "REASONING_MESSAGE_START": "REASONING_MESSAGE_END"}


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_agui_run_error_comes_after_the_end_of_all_it_opened(app: App, mode: str) -> None:
    """A run that fails mid-message ends the open text or reasoning message
    before ``RUN_ERROR`` (every start has its end, as on ``RUN_FINISHED``), so
    the real client completes the message (``onNewMessage``)."""
    got = await node("agui_run.mjs", f"{app.url}/agui/{mode}")
    open_: dict[tuple[str, str], None] = {}
    streamed = set()
    for event in got["events"][:-1]:
        key = event.get("messageId") or event.get("toolCallId")
        if event["type"] in OPENERS:
            open_[(OPENERS[event["type"]], key)] = None
        elif (event["type"], key) in open_:
            del open_[(event["type"], key)]
        if event["type"] in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            streamed.add(key)
    assert got["events"][-1]["type"] == "RUN_ERROR"
    assert not open_, (list(open_), [e["type"] for e in got["events"]])
    assert streamed <= set(got["completed"]), (streamed, got["completed"])
    if mode in ("provider-mid", "thinking-mid"):
        assert streamed


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_ai_sdk_error_leaves_no_part_streaming(app: App, mode: str) -> None:
    """The chat's assistant message after an error: its text and reasoning
    parts are done, its tool parts have their output or error (none left
    waiting for input or output)."""
    got = await node("aisdk_chat.mjs", f"{app.url}/chat/{mode}")
    parts = [p for m in got["messages"] if m["role"] == "assistant" for p in m["parts"]]
    for part in parts:
        if part["type"] in ("text", "reasoning"):
            assert part["state"] == "done", part
        elif part["type"].startswith("tool-") or part["type"] == "dynamic-tool":
            assert part["state"] in ("output-available", "output-error"), part
    if mode in ("provider-mid", "thinking-mid"):
        assert parts


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_ai_sdk_chat_ends_with_the_error_chunk(app: App, mode: str) -> None:
    got = await node("aisdk_chat.mjs", f"{app.url}/chat/{mode}")
    code, text_first = EXPECTED[mode]
    types = [c["type"] for c in got["chunks"]]
    assert types[-1] == "error", types
    assert "finish" not in types
    assert types[0] == ("error" if mode == "before-start" else "start")
    assert got["chunks"][-1]["errorText"].startswith(f"{code}: ")
    assert ("text-delta" in types) == text_first, types
    assert got["status"] == "error" and got["error"] == got["chunks"][-1]["errorText"]
    assert got["finishes"] == [{"isAbort": False, "isError": True, "finishReason": None}]
    if mode == "provider-before":
        assert "***" in got["error"]  # the echoed key, masked
    no_secret(got)
    assert app.outcomes == ["failed"]


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_sse_stream_ends_with_the_typed_error_event(app: App, mode: str) -> None:
    got = await node("sse_run.mjs", f"{app.url}/sse/{mode}")
    code, text_first = EXPECTED[mode]
    assert got["status"] == 200 and got["thrown"] is None, got["thrown"]
    names = [e["event"] for e in got["events"]]
    assert names[-1] == "error" and "complete" not in names, names
    assert names[0] == ("error" if mode == "before-start" else "call_started")
    assert [e["data"]["type"] for e in got["events"]] == names  # each frame names its type
    ids = [int(e["id"]) for e in got["events"]]
    assert ids == sorted(set(ids)), ids
    assert got["events"][-1]["data"]["error"]["type"] == code, got["events"][-1]
    assert ("text_chunk" in names) == text_first, names
    if code == "InternalError":
        assert got["events"][-1]["data"]["error"]["message"] == "internal error"
    no_secret(got)
    assert app.outcomes == ["failed"]


class StrictEncoder(AgentflowEncoder):
    """An app's own encoder that writes text as strict UTF-8: it cannot write
    an error whose text holds a lone surrogate."""

    def failure(self, error: BaseException) -> bytes:
        error_to_dict(error)["error"]["message"].encode()
        return super().failure(error)


async def test_an_error_the_encoder_cannot_write_still_ends_the_stream(
        caplog: pytest.LogCaptureFixture) -> None:
    node_ready()
    outcomes: list[Outcome] = []

    async def closed(outcome: Outcome) -> None:
        outcomes.append(outcome)

    async def sse(request: Request) -> Response:
        agent = ReActAgent("ui", FunctionModel(unpaired_then_cut), tools=[list_reports])
        return EventStreamResponse(agent.stream("Find the report"), encoder=StrictEncoder(),
                                   ping_interval=60, on_close=closed)

    with caplog.at_level(logging.ERROR):
        async with served(Starlette(routes=[Route("/sse", sse, methods=["POST"])])) as url:
            got = await node("sse_run.mjs", f"{url}/sse")
    assert got["thrown"] is None
    assert got["events"][-1]["data"] == {"type": "error", "error": {
        "type": "InternalError", "message": "internal error"}}
    assert "text_chunk" in [e["event"] for e in got["events"]]
    assert outcomes == ["failed"]
    assert [r.getMessage() for r in caplog.records if "error_frame_failed" in r.getMessage()]


@contextlib.contextmanager
def errors_logged(caplog: pytest.LogCaptureFixture) -> Any:
    with caplog.at_level(logging.WARNING):
        yield
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert bad == [], [(r.name, r.getMessage()) for r in bad]


@pytest.mark.parametrize(("script", "path"), [("agui_run.mjs", "agui"),
                                              ("aisdk_chat.mjs", "chat")])
async def test_a_client_that_stops_cancels_the_call_quietly(
        app: App, script: str, path: str, caplog: pytest.LogCaptureFixture) -> None:
    with errors_logged(caplog):
        got = await node(script, f"{app.url}/{path}/disconnect", "abort")
        await asyncio.wait_for(app.cancelled.wait(), 10)  # the model's stream was closed
        await asyncio.wait_for(app.ended.wait(), 10)  # the response's on_close ran
    assert app.outcomes == ["disconnected"]
    if path == "agui":
        assert got["aborted"] and got["thrown"] is None
        # the client reports its own abort (a RUN_ERROR it makes, code "abort");
        # the server sent no error: the run was cut, not failed
        assert got["runError"] == {"message": "This operation was aborted", "code": "abort"}
        assert [e["type"] for e in got["events"]][-1] == "RUN_ERROR"
        assert [e for e in got["events"] if e["type"] == "RUN_ERROR"] == [
            {"type": "RUN_ERROR", "message": "This operation was aborted", "code": "abort",
             "rawEvent": got["events"][-1].get("rawEvent")}]
    else:
        assert got["stopped"] and got["status"] == "ready" and got["error"] is None
        assert got["finishes"] == [{"isAbort": True, "isError": False, "finishReason": None}]


# ------------------------------------------------------------ agent.stream() itself


@pytest.mark.parametrize("mode", [m for m in EXPECTED
                                  if m not in ("provider-before", "before-start", "ends-early")])
async def test_agent_stream_raises_after_the_events_so_far(mode: str) -> None:
    running = App()
    running.models = []
    agent = running.agent(mode)
    events: list[Event] = []
    expected: type[BaseException] = {"middleware": RuntimeError}.get(mode, AgentflowError)
    try:
        with pytest.raises(expected) as info:
            async with aclosing(agent.stream("Find Ada", output_of(mode))) as stream:
                async for event in stream:
                    events.append(event)
    finally:
        for model in running.models:
            await model.aclose()  # type: ignore[attr-defined]
    code = EXPECTED[mode][0]
    assert code == "InternalError" or type(info.value).__name__ == code or any(
        c.__name__ == code for c in type(info.value).__mro__)
    assert not any(isinstance(e, Complete) for e in events)
    assert bool(events) and events[0].type == "call_started"
    assert any(isinstance(e, ReasoningChunk) for e in events) == EXPECTED[mode][1]
    if mode == "tool-raises":
        assert isinstance(info.value, ToolRetriesExceededError)
        for shown in (str(info.value), *(getattr(e, "output", "") for e in events)):
            assert SECRET not in shown and TOKEN not in shown, shown


async def test_agent_stream_closed_early_closes_the_model_stream() -> None:
    running = App()
    running.cancelled = asyncio.Event()
    agent = running.agent("disconnect")
    async with aclosing(agent.stream("go")) as stream:
        async for event in stream:
            if isinstance(event, ReasoningChunk):
                break
    assert running.cancelled.is_set()


async def test_a_tool_raising_cancelled_error_on_its_own_is_its_failure() -> None:
    """A tool's own ``CancelledError`` (not a cancellation of the call) is an
    error result the model reads, as any exception; the call goes on."""
    async def wait_for_it(name: str) -> str:
        """Wait for a job someone else may cancel."""
        job: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        job.cancel()
        return await job

    def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        return (Reply(text=f"failed: {results[0]}") if results else
                Reply(tool_calls=[Call("wait_for_it", {"name": "Ada"})]))

    agent = ReActAgent("ui", FunctionModel(answer), tools=[wait_for_it])
    events = [e async for e in agent.stream("go")]
    assert isinstance(events[-1], Complete)
    assert events[-1].message.text == "failed: CancelledError: "


async def test_a_ping_into_a_gone_client_ends_the_response_quietly() -> None:
    """The write that finds the client gone may be a keep-alive ping: the call
    is cancelled as on ``http.disconnect``, and nothing escapes the response
    (no unhandled error for the server to log)."""
    closed = asyncio.Event()

    async def events() -> AsyncIterator[Event]:
        try:
            yield ReasoningChunk("a", 1)
            await asyncio.Event().wait()  # a long model request: only pings go out
            yield ReasoningChunk("unreached", 1)
        finally:
            closed.set()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the server never says the client left
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message.get("body", b"").startswith(b": ping"):
            raise OSError("connection reset by peer")

    outcomes: list[Outcome] = []

    async def record(outcome: Outcome) -> None:
        outcomes.append(outcome)

    response = EventStreamResponse(events(), ping_interval=0.05, on_close=record)
    await asyncio.wait_for(response({"type": "http"}, receive, send), 10)  # type: ignore[arg-type]
    assert closed.is_set() and outcomes == ["disconnected"] and response.error is None
