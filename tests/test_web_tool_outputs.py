"""A tool's result as the AI SDK chat shows it, read by the real ``ai`` client
(tests/js ``aisdk_client.mjs``): a result that is a JSON object or array (a
Python tool's dict, an MCP server's structured content) is the part's
``output`` value, as ``streamText``'s own tools give it, so a UI reads
``part.output.celsius``; it was a string of JSON. A value the tool returned (a
Python tool's number, an MCP server's wrapped ``int``) is that value, ``12``
not ``"12"`` (it was its text). Any other text is sent as it is, and a history
sent back gives the model the same JSON text."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.mcp import MCPServer
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web._frame_caps import MAX_SHOWN_RESULT, shown_output
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served


def weather(city: str) -> dict[str, Any]:
    """Today's weather in a city."""
    return {"city": city, "celsius": 18, "tags": ["rain"]}


def seats(city: str) -> str:
    """Seats left on the next train (a number, as text)."""
    return "12"


def trains(city: str) -> int:
    """Trains a day to a city (a number)."""
    return 7


def nothing(city: str) -> None:
    """A tool that returns nothing."""


def answer(request: RecordedRequest) -> Reply | str:
    if request.messages[-1].tool_results:
        return "Rainy."
    return Reply(tool_calls=[Call(name, {"city": "Paris"}) for name in (
        "weather", "seats", "trains", "nothing", "sdk_seats", "sdk_stops", "sdk_forecast")])


@contextlib.asynccontextmanager
async def chat_url() -> AsyncIterator[str]:
    """A chat route over the Python tools and the SDK server's (entered and
    left in the test's own task, as an MCP server must be)."""
    node_ready()
    sdk = MCPServer.stdio(sys.executable, [str(Path(__file__).with_name("mcp_sdk_server.py"))],
                          prefix="sdk", include=["seats", "stops", "forecast"], timeout=30)

    async def chat(request: Request) -> Response:
        agent = ReActAgent("ui", FunctionModel(answer), tools=[weather, seats, trains, nothing,
                                                                sdk])
        return ui_message_stream_response(agent, read_chat_request(await read_json(request)))

    async with sdk, served(Starlette(routes=[Route("/chat", chat, methods=["POST"])])) as base:
        yield f"{base}/chat"


async def test_a_json_result_is_the_parts_output_value() -> None:
    async with chat_url() as url:
        got = await node("aisdk_client.mjs", url)
    assert got["error"] is None, got
    final = got["snapshots"][-1]
    outputs = {p["type"]: p["output"] for p in final["parts"] if p["type"].startswith("tool-")}
    assert outputs == {"tool-weather": {"city": "Paris", "celsius": 18, "tags": ["rain"]},
                       "tool-seats": "12", "tool-trains": 7, "tool-nothing": None,
                       "tool-sdk_seats": 12, "tool-sdk_stops": ["Turin", "Paris"],
                       "tool-sdk_forecast": "Paris: sunny, 21 C"}
    # the history the chat posts back gives the model the result's JSON text again
    run = read_chat_request({"id": "c", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather?"}]},
        final, {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]}]})
    read = {r.name: (r.output, r.is_json) for m in run.history for r in m.tool_results}
    assert read == {"weather": ('{"city":"Paris","celsius":18,"tags":["rain"]}', True),
                    "seats": ("12", False), "trains": ("7", True), "nothing": ("null", True),
                    "sdk_seats": ("12", True), "sdk_stops": ('["Turin","Paris"]', True),
                    "sdk_forecast": ("Paris: sunny, 21 C", False)}


def test_a_text_is_a_value_when_it_is_an_object_or_array_or_the_tool_returned_one() -> None:
    assert shown_output(' [1, {"a": null}]') == [1, {"a": None}]
    assert shown_output("12") == "12" and shown_output("true") == "true"
    assert shown_output("12", is_json=True) == 12 and shown_output("true", True) is True
    assert shown_output('"x"', is_json=True) == "x" and shown_output("null", True) is None
    assert shown_output("12 [cut]", is_json=True) == "12 [cut]"  # a middleware's edit: text
    assert shown_output("[image: image/png, 68 bytes; not shown]").startswith("[image")
    assert shown_output("[" * 100_000) == "[" * 100_000  # past Python's stack: text
    big = '{"a": "' + "x" * MAX_SHOWN_RESULT + '"}'
    assert isinstance(shown_output(big), str) and "not shown here" in shown_output(big)
