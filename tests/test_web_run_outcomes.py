"""How a run that did not fail ends, as the protocols' real clients read it
(``@ag-ui/client``'s ``onRunFinishedEvent`` outcome; the ``ai`` chat's
``onFinish``): a completed call is a success; one its runner cut short (a
middleware's ``post_acting`` stop, the ``max_iters`` limit) is AG-UI 1.0's
``cancelled`` outcome ("stopped before it completed, by whoever was running
it, and did not fail"), never read as a success, and the AI SDK's
``finishReason`` ``other``; neither is an error."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Middleware
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served


def lookup(name: str) -> str:
    """Look a person up in the address book."""
    return f"{name}: ada@example.org"


class StopAfterTools(Middleware):
    """An app's rule: stop once the tools have run (``post_acting``)."""

    async def post_acting(self, ex: CallExecution, results: Msg) -> bool:
        return True


def calling(request: RecordedRequest) -> Reply:
    """Calls the tool until it has its result, then answers."""
    if any(m.tool_results for m in request.messages):
        return Reply(text="Ada is at ada@example.org.")
    return Reply(text="Looking Ada up.", tool_calls=[Call("lookup", {"name": "Ada"})])


def agent_for(mode: str) -> ReActAgent:
    model = FunctionModel(calling)
    if mode == "stopped":
        return ReActAgent("ui", model, tools=[lookup], middleware=[StopAfterTools()])
    if mode == "max_iters":
        return ReActAgent("ui", model, tools=[lookup], max_iters=1)
    assert mode == "completed"
    return ReActAgent("ui", model, tools=[lookup])


async def run(script: str, mode: str) -> dict[str, Any]:
    async def agui(request: Request) -> Response:
        return agui_response(agent_for(mode), read_run_input(await read_json(request)))

    async def chat(request: Request) -> Response:
        return ui_message_stream_response(agent_for(mode),
                                          read_chat_request(await read_json(request)))

    node_ready()
    routes = [Route("/agui", agui, methods=["POST"]), Route("/chat", chat, methods=["POST"])]
    async with served(Starlette(routes=routes)) as url:
        return await node(script, f"{url}/{'agui' if script.startswith('agui') else 'chat'}")


@pytest.mark.parametrize(("mode", "outcome"), [
    ("completed", "success"), ("stopped", "cancelled"), ("max_iters", "cancelled")])
async def test_agui_client_reads_the_runs_outcome(mode: str, outcome: str) -> None:
    got = await run("agui_run.mjs", mode)
    assert got["runError"] is None and got["thrown"] is None, got
    assert got["finished"] == {"outcome": outcome}
    finished = got["events"][-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished.get("outcome") == (None if outcome == "success" else {"type": outcome})
    assert finished["result"]["stop_reason"] == mode
    assert finished["result"]["error"] is None
    # the tool's call and result were shown before the run was cut short
    assert "TOOL_CALL_RESULT" in [e["type"] for e in got["events"]]


@pytest.mark.parametrize(("mode", "reason"), [
    ("completed", "stop"), ("stopped", "other"), ("max_iters", "other")])
async def test_ai_sdk_chat_reads_the_runs_finish_reason(mode: str, reason: str) -> None:
    got = await run("aisdk_chat.mjs", mode)
    assert got["status"] == "ready" and got["error"] is None, got
    assert got["finishes"] == [{"isAbort": False, "isError": False, "finishReason": reason}]
    assert got["chunks"][-1]["messageMetadata"]["stop_reason"] == mode
