"""What each event name on agentflow's own SSE wire carries, read by a real
SSE client (``eventsource-parser``, as a page reads it): the reply text is
``text_chunk``, the model's thinking ``thinking_chunk``, never the reply
under a reasoning name (the AI SDK's and AG-UI's "reasoning" is the
thinking); ``text_event="reasoning_chunk"`` keeps agentflow 0.1.0's name."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.testing import FunctionModel, RecordedRequest, Reply
from agentflow.web import sse_response

from .test_web_adapters import node, node_ready, served

THOUGHT = "The card names Ada; her email follows."
ANSWER = "Ada's email is ada@example.org."


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=ANSWER, thinking=THOUGHT, chunk_size=8)


async def run(**options: Any) -> dict[str, str]:
    """The text each event name carried in one call, read by the real client."""
    async def sse(request: Request) -> Response:
        return sse_response(ReActAgent("ui", FunctionModel(answer)), "Find Ada's email",
                            ping_interval=60, **options)

    node_ready()
    async with served(Starlette(routes=[Route("/sse", sse, methods=["POST"])])) as url:
        got = await node("sse_run.mjs", f"{url}/sse")
    assert got["status"] == 200 and got["thrown"] is None, got["thrown"]
    carried: dict[str, str] = {}
    for event in got["events"]:
        assert event["event"] == event["data"]["type"]
        if "text" in event["data"] and event["event"] != "complete":
            carried[event["event"]] = carried.get(event["event"], "") + event["data"]["text"]
    return carried


async def test_the_reply_text_is_text_chunk_and_the_thinking_thinking_chunk() -> None:
    assert await run() == {"text_chunk": ANSWER, "thinking_chunk": THOUGHT}


@pytest.mark.parametrize("name", ["reasoning_chunk", "text_chunk"])
async def test_a_client_not_yet_moved_can_keep_the_old_name(name: str) -> None:
    assert await run(text_event=name) == {name: ANSWER, "thinking_chunk": THOUGHT}
