"""A tool whose code calls ``sys.exit`` (a command-line parser refusing its
arguments: argparse, click) failed like any tool: an error result the model
reads, the call goes on. It escaped the agent as ``SystemExit``: the Python
stream raised it untyped, and a web stream was cut after its ``tool_use``
frame with no error frame and no end. A ``SystemExit`` that still comes out of the events
(middleware's) is that web stream's failure (error frame, end; never the
server's exit); a ``KeyboardInterrupt`` is raised on after the frame and end."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.events import Complete, Event, ReasoningChunk, ToolResult
from agentflow.execution import CallExecution
from agentflow.middleware.base import Middleware
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import AGUIEncoder
from agentflow.web.aisdk import UIMessageEncoder
from agentflow.web.encoding import AgentflowEncoder, StreamEncoder
from agentflow.web.sse import EventStreamResponse


def count(args: str) -> str:
    """Run the counter's command line."""
    parser = argparse.ArgumentParser(prog="count", exit_on_error=True)
    parser.add_argument("--n", type=int, required=True)
    return str(parser.parse_args(args.split()).n)


async def count_async(args: str) -> str:
    """Run the counter's command line (async)."""
    return count(args)


def _answer(request: RecordedRequest) -> Reply:
    results = [r.output for m in request.messages for r in m.tool_results]
    if results:
        return Reply(text=" | ".join(sorted(results)))
    return Reply(tool_calls=[Call("count", {"args": "--n x"}, id="a"),
                             Call("count_async", {"args": "--n 3"}, id="b"),
                             Call("count_async", {"args": "--bad"}, id="c")])


async def test_a_tool_that_exits_is_an_error_result_and_the_call_goes_on(
        capsys: pytest.CaptureFixture[str]) -> None:
    agent = ReActAgent("cli", FunctionModel(_answer), tools=[count, count_async])
    events = [e async for e in agent.stream("count")]
    results = {e.id: (e.output, e.is_error) for e in events if isinstance(e, ToolResult)}
    assert results == {"a": ("SystemExit: the tool exited (status 2)", True),
                       "b": ("3", False),
                       "c": ("SystemExit: the tool exited (status 2)", True)}
    assert isinstance(events[-1], Complete)
    assert events[-1].message.text.count("SystemExit") == 2
    one = ReActAgent("cli", FunctionModel(lambda r: Reply(text="ok") if any(
        m.tool_results for m in r.messages) else Reply(tool_calls=[Call("count", {"args": ""})])),
        tools=[count])
    assert (await one.call("count")).text == "ok"  # one call alone: no task group
    capsys.readouterr()


class _Exits(Middleware):
    """Middleware whose code exits (after the first reply was streamed)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def post_reasoning(self, ex: CallExecution, reply: Any) -> None:
        raise self.exc


async def _serve(response: EventStreamResponse, exc: type[BaseException] | None) -> bytes:
    """What ``response`` sent (``<end>`` marks the last body); it raised ``exc``
    (anyio's task group wraps it in a ``BaseExceptionGroup``)."""
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])
            if not message.get("more_body", False):
                sent.append(b"<end>")

    try:
        await asyncio.wait_for(response({"type": "http"}, receive, send), 10)  # type: ignore[arg-type]
    except BaseException as raised:
        assert exc is not None and (isinstance(raised, exc) or (isinstance(
            raised, BaseExceptionGroup) and raised.subgroup(exc) is not None)), raised
    else:
        assert exc is None
    assert sent[-1] == b"<end>"
    return b"".join(sent)


ENCODERS = pytest.mark.parametrize(
    "encoder", [AgentflowEncoder, lambda: AGUIEncoder("thread", "run"), UIMessageEncoder],
    ids=["sse", "agui", "aisdk"])


@ENCODERS
@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "interrupt"])
async def test_an_exit_from_middleware_ends_the_web_stream_then_is_raised(
        encoder: Callable[[], StreamEncoder], exc: BaseException) -> None:
    agent = ReActAgent("ui", FunctionModel(lambda r: Reply(text="Hello")),
                       middleware=[_Exits(exc)])
    response = EventStreamResponse(agent.stream("hi"), encoder=encoder())
    body = await _serve(response, None if isinstance(exc, SystemExit) else type(exc))
    assert response.outcome == "failed" and response.error is exc
    assert b"Hello" in body and b"internalerror" in body.lower().replace(b"_", b""), body


async def _events() -> AsyncIterator[Event]:
    yield ReasoningChunk("Hello", 1)
    raise SystemExit(4)


@ENCODERS
async def test_the_error_frame_and_the_end_are_sent_before_the_exit(
        encoder: Callable[[], StreamEncoder]) -> None:
    response = EventStreamResponse(_events(), encoder=encoder())
    body = await _serve(response, None)  # one request's exit never stops the server
    assert b"Hello" in body and b"internalerror" in body.lower().replace(b"_", b""), body


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


class Tree(BaseModel):
    kids: list[Any]


def fetch(levels: int) -> Any:
    """Fetch a tree as nested lists."""
    return _deep(levels)


def fetch_model(levels: int) -> Tree:
    """Fetch a tree as a model."""
    return Tree(kids=_deep(levels))


@pytest.mark.parametrize(("tool", "levels"), [(fetch, 2000), (fetch_model, 300)],
                         ids=["lists", "model"])
async def test_a_result_no_writer_takes_is_the_tools_failure(tool: Any, levels: int) -> None:
    """A result nested past what can be written as text (Python's recursion
    limit, pydantic's 254 levels) raised RecursionError or
    PydanticSerializationError out of the agent; it is the tool's error result."""
    def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        return (Reply(text="done") if results else
                Reply(tool_calls=[Call(tool.__name__, {"levels": levels})]))

    events = [e async for e in ReActAgent("t", FunctionModel(answer), tools=[tool]).stream("x")]
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and result.output.startswith(
        "the tool's result could not be written as text")
    assert isinstance(events[-1], Complete)


async def _interrupted() -> AsyncIterator[Event]:
    yield ReasoningChunk("Hello", 1)
    raise KeyboardInterrupt


async def test_an_interrupt_is_raised_on_when_the_client_is_gone_too() -> None:
    """A ``KeyboardInterrupt`` whose error frame finds the client gone (the
    write fails) is raised all the same: it was lost, replaced by the
    disconnect, and the server ran on."""
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # no disconnect message: the write finds it
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and sent:
            raise ConnectionResetError("the client is gone")
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    response = EventStreamResponse(_interrupted(), encoder=AgentflowEncoder())
    with pytest.raises(BaseException) as raised:
        await asyncio.wait_for(response({"type": "http"}, receive, send), 10)  # type: ignore[arg-type]
    assert raised.type is KeyboardInterrupt or (isinstance(raised.value, BaseExceptionGroup)
                                                and raised.value.subgroup(KeyboardInterrupt))
    assert b"Hello" in b"".join(sent) and response.error.__class__ is KeyboardInterrupt
