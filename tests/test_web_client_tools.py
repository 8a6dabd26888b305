"""Frontend tools through both UI protocols, with their real JavaScript
clients in Node (tests/js) against a Starlette app on 127.0.0.1: the client
declares (AG-UI ``RunAgentInput.tools``) or the server offers (AI SDK
client-side tools) ``pick_color``; the scripted model calls it beside the
server's ``lookup``; the stream shows the call and finishes; the client runs
the tool and sends its result; the next run's model reads it and answers.
Each protocol runs stateless (the client sends the whole history) and with a
SQLite store (the server keeps the conversation)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.client_tools import ClientTool
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served

COLOR_SCHEMA = {"type": "object", "properties": {"hint": {"type": "string"}},
                "required": ["hint"]}
COLOR = ClientTool("pick_color", "Ask the user to pick a color.", COLOR_SCHEMA)


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def color_result(request: RecordedRequest) -> str | None:
    """The result of the model's pick_color call, as the request shows it."""
    asked = [c.id for m in request.messages for c in m.tool_uses if c.name == "pick_color"]
    if not asked:
        return None
    return next((r.output for m in request.messages for r in m.tool_results
                 if r.tool_use_id == asked[-1]), "no result")


def answer(request: RecordedRequest) -> Reply:
    color = color_result(request)
    if color is None:
        return Reply(text="Let me ask.", tool_calls=[
            Call("lookup", {"city": "Oslo"}), Call("pick_color", {"hint": "a warm one"})])
    return Reply(text=f"The banner will be {color}.")


class App:
    url = ""
    model: FunctionModel


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    node_ready()
    running = App()
    running.model = FunctionModel(answer)
    agent = ReActAgent("ui", running.model, tools=[lookup])

    async with SQLiteStateStore(tmp_path / "s.db") as store:
        async def agui(request: Request) -> Response:
            run = read_run_input(await read_json(request))
            return agui_response(agent, run)

        async def agui_stored(request: Request) -> Response:
            run = read_run_input(await read_json(request))
            return agui_response(agent, run, store=store, key=f"agui:{run.thread_id}")

        async def chat(request: Request) -> Response:
            run = read_chat_request(await read_json(request))
            return ui_message_stream_response(agent, run, client_tools=[COLOR])

        async def chat_stored(request: Request) -> Response:
            run = read_chat_request(await read_json(request))
            return ui_message_stream_response(agent, run, client_tools=[COLOR], store=store,
                                              key=f"chat:{run.thread_id}")

        routes = [Route("/agui", agui, methods=["POST"]),
                  Route("/agui-stored", agui_stored, methods=["POST"]),
                  Route("/chat", chat, methods=["POST"]),
                  Route("/chat-stored", chat_stored, methods=["POST"])]
        async with served(Starlette(routes=routes)) as running.url:
            yield running


def check_model(model: FunctionModel, expected: dict[str, Any]) -> None:
    """Two model requests: the first offered pick_color beside lookup; the
    second read the client's result."""
    assert len(model.requests) == 2, [r.messages for r in model.requests]
    first, second = model.requests
    offered = {t.name: t for t in first.tools}
    assert sorted(offered) == ["lookup", "pick_color"]
    assert offered["pick_color"].parameters == COLOR_SCHEMA
    assert offered["pick_color"].description == COLOR.description
    result = color_result(second)
    assert result is not None and orjson.loads(result) == expected
    # the server's own tool ran once, in the first run; its result is history
    assert [r.output for m in second.messages for r in m.tool_results
            if r.name == "lookup"] == ["Oslo: sunny"]


@pytest.mark.parametrize("route", ["/agui", "/agui-stored"])
async def test_agui_frontend_tool_round_trip(app: App, route: str) -> None:
    got = await node("agui_client_tool.mjs", f"{app.url}{route}", "thread" + route[1:])
    assert got["error"] is None, got
    first, second = got["runs"]
    assert first["events"].count("TOOL_CALL_START") == 2  # lookup and pick_color
    assert "TOOL_CALL_ARGS" in first["events"] and "TOOL_CALL_END" in first["events"]
    assert first["events"].count("TOOL_CALL_RESULT") == 1  # lookup's; pick_color's is the client's
    assert first["result"]["stop_reason"] == "client_tool_calls"
    asked = got["asked"]
    assert first["outcome"] == {"type": "success", "pendingToolCallIds": [asked["id"]]}
    assert first["pendingToolCallIds"] == [asked["id"]]  # as the client reads it
    assert asked["function"]["name"] == "pick_color"
    # the client kept the model's step as one assistant message with both calls
    user, assistant, looked, answered = got["firstRun"]
    assert user["content"] == "Pick a color for the banner"
    assert [c["function"]["name"] for c in assistant["toolCalls"]] == ["lookup", "pick_color"]
    assert assistant["content"] == "Let me ask."
    assert (looked["role"], looked["content"]) == ("tool", "Oslo: sunny")
    assert (answered["role"], answered["toolCallId"]) == ("tool", asked["id"])
    assert orjson.loads(asked["function"]["arguments"]) == {"hint": "a warm one"}
    assert second["result"]["stop_reason"] == "completed"
    assert "teal" in second["result"]["text"]
    check_model(app.model, {"color": "teal", "hint": "a warm one"})


@pytest.mark.parametrize("route", ["/chat", "/chat-stored"])
async def test_ai_sdk_client_side_tool_round_trip(app: App, route: str) -> None:
    got = await node("aisdk_client_tool.mjs", f"{app.url}{route}")
    assert got["error"] is None, got
    assert [c["toolName"] for c in got["calls"]] == ["lookup", "pick_color"]
    assert got["calls"][1]["input"] == {"hint": "a warm one"}
    assert [f["finishReason"] for f in got["finishes"]] == ["tool-calls", "stop"]
    assert got["status"] == "ready"
    # the second stream continued the same assistant message
    user, assistant = got["messages"]
    assert user["role"] == "user"
    parts = assistant["parts"]
    tool = next(p for p in parts if p["type"] == "tool-pick_color")
    assert tool["state"] == "output-available" and tool["output"] == {"color": "teal"}
    looked = next(p for p in parts if p["type"] == "tool-lookup")
    assert looked["state"] == "output-available" and looked["output"] == "Oslo: sunny"
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[0] == "Let me ask." and texts[-1] == 'The banner will be {"color":"teal"}.'
    check_model(app.model, {"color": "teal"})
