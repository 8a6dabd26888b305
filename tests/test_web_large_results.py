"""Values larger than a UI client takes in one event: the AG-UI run is read
to its end by the real ``@ag-ui/client`` (its SSE reader failed the whole
run on one event over 10 MB: "SSE buffer size exceeded maximum limit of 10
MB"), as ``agentflow.web._agui_caps`` says: a tool result (an MCP server's
file read) shown cut with a note while the model reads all of it, a tool
call's input sent in several deltas, an output or text over the cap left
out of ``RUN_FINISHED`` and named there. The AI SDK's chat (the ``ai``
package's, which keeps every part and posts the history back) is shown a
tool's result, or its error, cut the same way, and a tool's input or the
output over the cap as a marker naming its size (``_frame_caps``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import Interrupt, RunFinishedEvent, RunFinishedInterruptOutcome
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.events import ToolUse
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web._agui_caps import finished_frame
from agentflow.web.agui import (
    MAX_SHOWN_RESULT,
    MAX_SHOWN_STATE,
    AGUIEncoder,
    agui_response,
    read_run_input,
)
from agentflow.web.aisdk import UIMessageEncoder, read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json
from agentflow.web.sse import EventStreamResponse

from .test_web_adapters import node, node_ready, served

SIZE = 11 * 1024 * 1024


def read_log(name: str) -> str:
    """Read a log file."""
    return "x" * SIZE


async def test_a_result_over_the_clients_event_limit_is_shown_cut() -> None:
    node_ready()
    read: list[int] = []

    def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        if not results:
            return Reply(tool_calls=[Call("read_log", {"name": "app.log"})])
        read.append(len(results[0]))
        return Reply(text="The log is all x.")

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(ReActAgent("ui", FunctionModel(answer), tools=[read_log]), run,
                             ping_interval=60)

    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        got = await node("agui_run.mjs", f"{url}/agui")
    assert got["thrown"] is None and got["runError"] is None, (got["thrown"], got["runError"])
    types = [e["type"] for e in got["events"]]
    assert types[-1] == "RUN_FINISHED" and "TEXT_MESSAGE_CONTENT" in types
    [shown] = [e["content"] for e in got["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert shown.startswith("x" * MAX_SHOWN_RESULT) and shown.endswith(
        f"[... {SIZE - MAX_SHOWN_RESULT:,} more characters not shown here; "
        "the model read the whole result when the tool ran, but a history the client "
        "sends back holds only this]")
    assert read == [SIZE]  # the model read all of it


def fail_log(name: str) -> str:
    """Read a log file that is not there."""
    raise ValueError("no such log; the directory holds: " + "f" * SIZE)


@pytest.mark.parametrize("tool", [read_log, fail_log])
async def test_ai_sdk_a_result_over_the_cap_is_shown_cut(tool: Any) -> None:
    node_ready()
    read: list[int] = []

    def answer(request: RecordedRequest) -> Reply:
        results = [r.output for m in request.messages for r in m.tool_results]
        if not results:
            return Reply(tool_calls=[Call(tool.__name__, {"name": "app.log"})])
        read.append(len(results[0]))
        return Reply(text="Done.")

    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(
            ReActAgent("ui", FunctionModel(answer), tools=[tool], tool_retries=1), run,
            ping_interval=60)

    async with served(Starlette(routes=[Route("/chat", chat, methods=["POST"])])) as url:
        got = await node("aisdk_chat.mjs", f"{url}/chat")
    assert got["status"] == "ready" and got["error"] is None, got["error"]
    [part] = [p for m in got["messages"] for p in m["parts"]
              if p["type"] == f"tool-{tool.__name__}"]
    shown = part["output"] if tool is read_log else part["errorText"]
    assert part["state"] == ("output-available" if tool is read_log else "output-error")
    assert len(shown) < MAX_SHOWN_RESULT + 200 and shown.endswith(
        "but a history the client sends back holds only this]")
    assert read[0] >= SIZE  # the model read all of it


def write_log(text: str) -> str:
    """Write a log file."""
    return f"wrote {len(text)} characters"


async def run_agui(agent: ReActAgent, output: Any = None, **encoder: Any) -> dict[str, Any]:
    """One run of ``agent`` read by the real ``@ag-ui/client``."""
    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        if encoder:
            return EventStreamResponse(agent.stream(run.message, output), encoder=AGUIEncoder(
                run.thread_id, run.run_id, **encoder))
        return agui_response(agent, run, output, ping_interval=60)

    node_ready()
    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        got = await node("agui_run.mjs", f"{url}/agui")
    assert got["thrown"] is None and got["runError"] is None, (got["thrown"], got["runError"])
    assert got["events"][-1]["type"] == "RUN_FINISHED"
    return got


async def test_a_tool_input_over_the_clients_event_limit_is_sent_in_pieces() -> None:
    text = "y" * SIZE

    def answer(request: RecordedRequest) -> Reply:
        if not any(m.tool_results for m in request.messages):
            return Reply(tool_calls=[Call("write_log", {"text": text})])
        return Reply(text="Written.")

    got = await run_agui(ReActAgent("ui", FunctionModel(answer), tools=[write_log]))
    deltas = [e["delta"] for e in got["events"] if e["type"] == "TOOL_CALL_ARGS"]
    assert len(deltas) > 1 and max(map(len, deltas)) <= MAX_SHOWN_RESULT
    assert json.loads("".join(deltas)) == {"text": text}


class Log(BaseModel):
    title: str
    lines: list[str]


async def test_an_output_over_the_clients_event_limit_is_named_not_sent() -> None:
    log = {"title": "Log", "lines": ["y" * SIZE]}

    def answer(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", log)], chunk_size=4 * 1024 * 1024)

    got = await run_agui(ReActAgent("ui", FunctionModel(answer)), Log)
    result = got["result"]
    assert result["output"] is None and result["stop_reason"] == "structured_output"
    # (the reply's text is the output's JSON: as large, left out too)
    assert result["not_shown"] == {"fields": ["output", "text"],
                                   "bytes": result["not_shown"]["bytes"], "limit": MAX_SHOWN_STATE}
    assert result["not_shown"]["bytes"] > SIZE
    assert any(e["type"] == "CUSTOM" and e["name"] == "agentflow.state_not_shown"
               for e in got["events"])


async def test_a_finished_run_over_the_cap_leaves_the_text_out_too() -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(text="z" * 3000)

    got = await run_agui(ReActAgent("ui", FunctionModel(answer)), max_state_bytes=1000)
    result = got["result"]
    assert result["text"] is None and result["output"] is None
    assert result["not_shown"]["fields"] == ["text"] and result["not_shown"]["limit"] == 1000
    finished = next(e for e in got["events"] if e["type"] == "RUN_FINISHED")
    assert len(json.dumps(finished, separators=(",", ":"))) <= 1000
    streamed = "".join(e["delta"] for e in got["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert streamed == "z" * 3000  # the client had it in the text message


def test_an_interrupts_inputs_are_left_out_last() -> None:
    event = RunFinishedEvent(thread_id="t", run_id="r", result={"output": None, "text": "ok"},
                             outcome=RunFinishedInterruptOutcome(interrupts=[Interrupt(
                                 id="c1", reason="tool_approval", tool_call_id="c1",
                                 metadata={"name": "write_log", "input": {"text": "y" * 3000}})]))
    frame = finished_frame(event, EventEncoder(), 1000)
    sent = json.loads(frame.decode().removeprefix("data: "))
    assert sent["result"]["not_shown"]["fields"] == ["text", "interrupts.metadata.input"]
    assert sent["outcome"]["interrupts"][0]["metadata"] == {"name": "write_log", "input": None}
    assert len(frame) - 8 <= 1000


OVER = MAX_SHOWN_RESULT + 1000
NOT_SHOWN = {"not_shown": {"characters": MAX_SHOWN_RESULT + 1011, "limit": MAX_SHOWN_RESULT}}
"""The marker the AI SDK chat is shown for ``{"text": "y" * OVER}`` (its JSON: 11 more)."""


async def run_ai_sdk_chat(agent: ReActAgent, output: Any = None) -> dict[str, Any]:
    """One exchange with ``agent`` through the ``ai`` package's own chat."""
    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent, run, output, ping_interval=60)

    node_ready()
    async with served(Starlette(routes=[Route("/chat", chat, methods=["POST"])])) as url:
        got = await node("aisdk_chat.mjs", f"{url}/chat")
    assert got["status"] == "ready" and got["error"] is None, got["error"]
    return got


async def test_ai_sdk_a_tool_input_over_the_cap_is_shown_as_a_marker() -> None:
    def answer(request: RecordedRequest) -> Reply:
        if not any(m.tool_results for m in request.messages):
            return Reply(tool_calls=[Call("write_log", {"text": "y" * OVER})])
        return Reply(text="Written.")

    got = await run_ai_sdk_chat(ReActAgent("ui", FunctionModel(answer), tools=[write_log]))
    [part] = [p for m in got["messages"] for p in m["parts"] if p["type"] == "tool-write_log"]
    assert part["input"] == NOT_SHOWN
    assert part["output"] == f"wrote {OVER} characters"  # the tool ran on the whole input


class Note(BaseModel):
    text: str


async def test_ai_sdk_an_output_over_the_cap_is_shown_as_a_marker() -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", {"text": "y" * OVER})],
                     chunk_size=MAX_SHOWN_RESULT // 2)

    got = await run_ai_sdk_chat(ReActAgent("ui", FunctionModel(answer)), Note)
    [part] = [p for m in got["messages"] for p in m["parts"] if p["type"] == "data-output"]
    assert part["data"] == NOT_SHOWN  # the last one: no partial left standing
    shown = [c["data"] for c in got["chunks"] if c["type"] == "data-output"]
    assert len(shown) > 1 and shown[-1] == NOT_SHOWN
    assert all(len(json.dumps(d)) <= MAX_SHOWN_RESULT for d in shown)


def test_ai_sdk_a_client_tools_input_is_sent_whole() -> None:
    call = ToolUse("c1", "pick_file", {"text": "y" * OVER})
    sent = UIMessageEncoder(whole_inputs=["pick_file"]).encode(call).decode()
    assert sent.count("y" * OVER) == 1
    shown = UIMessageEncoder().encode(call).decode()
    chunk = json.loads(shown.split("\n\n")[2].removeprefix("data: "))
    assert chunk["type"] == "tool-input-available" and chunk["input"] == NOT_SHOWN
