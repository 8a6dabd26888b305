"""A long tool's progress streams while it runs: an MCP server's
``notifications/progress`` (the request carries a ``progressToken`` when the
call is streamed, as the MCP spec's Progress section has it) and a Python
tool's ``report_progress`` are ``ToolProgress`` events between the call's
``ToolUse`` and its ``ToolResult``; they were dropped (no token was sent). A
call nobody streams asks the server for none. The UI protocols carry them
(the real ``ai`` client reads the AI SDK stream's ``data-tool-progress``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent, ToolProgress, ToolResult, ToolUse
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from agentflow.tools import report_progress
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json
from agentflow.web.wire import event_to_dict

from .test_web_adapters import node, node_ready, served

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def tool_events(events: list[object]) -> list[object]:
    return [e for e in events if isinstance(e, ToolUse | ToolProgress | ToolResult)]


async def test_an_mcp_servers_progress_streams_between_the_call_and_its_result() -> None:
    model = ScriptedModel([Reply(tool_calls=[Call("steps", {"steps": 3}, id="c1")]), "done"])
    async with MCPServer.stdio(sys.executable, [SERVER], include=["steps"], timeout=30) as mcp:
        agent = ReActAgent("worker", model, tools=[mcp])
        events = [e async for e in agent.stream("Work")]
        seen = tool_events(events)
        assert seen[0] == ToolUse("c1", "steps", {"steps": 3})
        assert seen[1:4] == [ToolProgress("c1", "steps", float(n), 3.0, f"step {n} of 3")
                             for n in (1, 2, 3)]
        assert isinstance(seen[4], ToolResult) and seen[4].output == "3 steps; progress asked"
        assert event_to_dict(seen[1]) == {"type": "tool_progress", "id": "c1", "name": "steps",
                                          "progress": 1.0, "total": 3.0,
                                          "message": "step 1 of 3"}
        # a call nobody streams reads no progress: the server is asked for none
        model = ScriptedModel([Reply(tool_calls=[Call("steps", {"steps": 2})]), "done"])
        await ReActAgent("worker", model, tools=[mcp]).call("Work")
        assert model.requests[1].messages[-1].tool_results[0].output == (
            "2 steps; progress not asked")


def copy_files(count: int) -> str:
    """Copy files, reporting each one (a sync tool: a worker thread)."""
    for n in range(1, count + 1):
        report_progress(n, count, f"copied file {n}")
    return "copied"


async def index(pages: int) -> str:
    """Index pages, reporting how many so far (no total)."""
    for n in range(1, pages + 1):
        report_progress(n, message=None)
        await anyio.lowlevel.checkpoint()
    return "indexed"


async def test_a_python_tool_reports_its_progress() -> None:
    model = ScriptedModel([Reply(tool_calls=[Call("copy_files", {"count": 2}, id="a"),
                                             Call("index", {"pages": 1}, id="b")]), "done"])
    agent = ReActAgent("worker", model, tools=[copy_files, index])
    events = [e async for e in agent.stream("Work")]
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert sorted(progress, key=lambda e: (e.id, e.progress)) == [
        ToolProgress("a", "copy_files", 1, 2, "copied file 1"),
        ToolProgress("a", "copy_files", 2, 2, "copied file 2"),
        ToolProgress("b", "index", 1, None, None)]
    kinds = [type(e).__name__ for e in tool_events(events)]
    assert kinds == ["ToolUse", "ToolUse", *["ToolProgress"] * 3, "ToolResult", "ToolResult"]
    report_progress(1)  # outside a tool run: nothing to report to, no error


@pytest.mark.parametrize(("args", "error", "named"), [
    (("half",), TypeError, "progress"), ((None,), TypeError, "progress"),
    ((True,), TypeError, "progress"), ((float("nan"),), ValueError, "progress"),
    ((1, float("inf")), ValueError, "total"), ((1, "10"), TypeError, "total"),
    ((1, 10, 3), TypeError, "message")])
async def test_a_progress_that_is_no_number_is_the_tools_error_not_a_frame(
        args: tuple[Any, ...], error: type[Exception], named: str) -> None:
    """A report a frontend cannot read as numbers (text, ``None``, NaN, infinity:
    ``null`` on the wire) is refused where it is made, naming the argument; it
    was streamed to the client as it was."""
    with pytest.raises(error, match=named):
        report_progress(*args)  # outside a tool run too: a misuse is one everywhere

    def work() -> str:
        """Work, reporting badly."""
        report_progress(*args)
        return "worked"

    model = ScriptedModel([Reply(tool_calls=[Call("work", {})]), "done"])
    events = [e async for e in ReActAgent("w", model, tools=[work]).stream("Work")]
    assert not [e for e in events if isinstance(e, ToolProgress)]
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and named in result.output


def copy_then_answer(request: RecordedRequest) -> Reply | str:
    if request.messages[-1].tool_results:
        return "Copied."
    return Reply(tool_calls=[Call("copy_files", {"count": 2})])


async def test_the_ai_sdk_client_reads_the_progress_chunks() -> None:
    node_ready()

    async def chat(request: Request) -> Response:
        agent = ReActAgent("ui", FunctionModel(copy_then_answer), tools=[copy_files])
        return ui_message_stream_response(agent, read_chat_request(await read_json(request)))

    async with served(Starlette(routes=[Route("/chat", chat, methods=["POST"])])) as base:
        got = await node("aisdk_client.mjs", f"{base}/chat")
    assert got["error"] is None, got
    chunks = got["chunks"]
    assert chunks.count("data-tool-progress") == 2
    first = chunks.index("data-tool-progress")
    assert chunks.index("tool-input-available") < first < chunks.index("tool-output-available")
    # transient: the message keeps no part of it
    assert not any(p["type"] == "data-tool-progress" for p in got["snapshots"][-1]["parts"])
