"""A tool result larger than a UI client takes in one event (an MCP server's
file read): the AG-UI run is read to its end by the real ``@ag-ui/client``
(its SSE reader failed the whole run on one event over 10 MB: "SSE buffer
size exceeded maximum limit of 10 MB"), the result shown cut with a note,
while the model reads all of it."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import MAX_SHOWN_RESULT, agui_response, read_run_input
from agentflow.web.requests import read_json

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
        "the model read the whole result]")
    assert read == [SIZE]  # the model read all of it
