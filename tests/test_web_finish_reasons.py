"""The AI SDK's ``finish`` chunk says why a text answer ended as the ``ai``
package's own providers say it (``mapOpenAIFinishReason``,
``mapAnthropicStopReason``): ``length`` for one the token limit cut (it
said ``stop``), ``content-filter`` for a refusal as for a filtered reply (a
refusal said ``stop``). Read by the real client (``ai``'s chat: its
``onFinish`` gets the ``finishReason``)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.testing import FunctionModel, Reply
from agentflow.web._aisdk_frames import finish_reason as _finish_reason
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served


async def chat_ending(last_reply: Any) -> dict[str, Any]:
    """One chat turn whose reply text ends with finish reason ``last_reply``."""
    agent = ReActAgent("ui", FunctionModel(lambda r: Reply(text="The first half",
                                                            finish_reason=last_reply)))

    async def chat(request: Request) -> Response:
        return ui_message_stream_response(agent, read_chat_request(await read_json(request)))

    node_ready()
    async with served(Starlette(routes=[Route("/chat", chat, methods=["POST"])])) as url:
        return await node("aisdk_chat.mjs", f"{url}/chat")


@pytest.mark.parametrize(("last_reply", "shown"), [
    ("length", "length"), ("refusal", "content-filter"), ("content_filter", "content-filter"),
    ("stop", "stop")])
async def test_a_text_answers_finish_reason_reaches_the_chat(last_reply: str, shown: str) -> None:
    got = await chat_ending(last_reply)
    assert got["status"] == "ready" and got["error"] is None, got["error"]
    assert got["finishes"] == [{"isAbort": False, "isError": False, "finishReason": shown}]
    assert got["chunks"][-1]["messageMetadata"]["stop_reason"] == "completed"


def test_the_finish_reason_table() -> None:
    assert _finish_reason("completed", "length") == "length"
    assert _finish_reason("structured_output", "stop") == "stop"
    assert _finish_reason("max_iters", "length") == "other"  # the loop's limit, not the reply's
    assert _finish_reason("output_failed", "length") == "error"
    assert _finish_reason("output_failed", "refusal") == "content-filter"
    assert _finish_reason("approval_required", "tool_calls") == "tool-calls"
    assert _finish_reason("client_tool_calls", None) == "tool-calls"
    assert _finish_reason("stopped", None) == "other"
