"""An error larger than a UI client reads in one event (a server's or a
tool's message quoted whole): the stream's last event still comes, well
formed, its error text cut with a marker (``agentflow.web._frame_caps``), on
both protocols, read by their real clients (``@ag-ui/client``'s SSE reader
fails the whole run on one event over 10 MB)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow.errors import StructuredOutputError, ToolError
from agentflow.events import CallStarted, Complete, Event, OutputRetry, ReasoningChunk
from agentflow.messages import Msg, StructuredResult
from agentflow.usage import Usage
from agentflow.web._frame_caps import MAX_ERROR_BYTES, cut_text
from agentflow.web.agui import AGUIEncoder, read_run_input
from agentflow.web.aisdk import UIMessageEncoder
from agentflow.web.requests import read_json
from agentflow.web.sse import EventStreamResponse

from .test_web_adapters import node, node_ready, served

SIZE = 11 * 1024 * 1024
MARKER = "more characters not shown]"


async def failing() -> AsyncIterator[Event]:
    """A call that fails with an error quoting 11 MB (a tool server's message)."""
    yield CallStarted("call-1", "ui", "agent-1")
    raise ToolError("the server answered: " + "e" * SIZE)


async def output_failed() -> AsyncIterator[Event]:
    """A call that completes without its output, the error quoting 11 MB."""
    yield CallStarted("call-1", "ui", "agent-1")
    error = StructuredOutputError("no valid output: " + "o" * SIZE, reason="invalid")
    yield Complete(Msg.assistant("", result=StructuredResult(error=error)), None, Usage(),
                   "output_failed")


async def read(script: str, events: Any, encoder: Any) -> dict[str, Any]:
    """``events`` through ``encoder`` (made of the request), read by ``script``."""
    async def endpoint(request: Request) -> Response:
        body = await read_json(request)
        return EventStreamResponse(events(), encoder=encoder(body), ping_interval=60)

    node_ready()
    async with served(Starlette(routes=[Route("/run", endpoint, methods=["POST"])])) as url:
        return await node(script, f"{url}/run")


def agui(body: Any) -> AGUIEncoder:
    run = read_run_input(body)
    return AGUIEncoder(run.thread_id, run.run_id)


def size(event: dict[str, Any]) -> int:
    return len(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())


async def test_agui_run_error_over_the_cap_comes_cut() -> None:
    got = await read("agui_run.mjs", failing, agui)
    assert "buffer" not in str(got["thrown"]), got["thrown"]  # (RUN_ERROR fails runAgent)
    last = got["events"][-1]
    assert last["type"] == "RUN_ERROR" and last["code"] == "ToolError"
    assert got["runError"]["message"] == last["message"]
    assert last["message"].startswith("the server answered: eee") and last["message"].endswith(
        MARKER)
    assert MAX_ERROR_BYTES - 100 < size(last) <= MAX_ERROR_BYTES


async def test_agui_output_error_over_the_cap_comes_cut_in_run_error() -> None:
    got = await read("agui_run.mjs", output_failed, agui)
    last = got["events"][-1]
    # (a complete without its output is a failed run: RUN_ERROR, never RUN_FINISHED)
    assert last["type"] == "RUN_ERROR" and last["code"] == "StructuredOutputError"
    assert "RUN_FINISHED" not in [e["type"] for e in got["events"]]
    assert got["runError"]["message"] == last["message"]
    assert last["message"].startswith("no valid output: ooo") and last["message"].endswith(MARKER)
    assert size(last) <= MAX_ERROR_BYTES


async def test_ai_sdk_error_over_the_cap_comes_cut() -> None:
    got = await read("aisdk_chat.mjs", failing, lambda body: UIMessageEncoder())
    last = got["chunks"][-1]
    assert last["type"] == "error" and got["status"] == "error"
    assert last["errorText"].startswith("ToolError: the server answered: eee")
    assert last["errorText"].endswith(MARKER) and got["error"] == last["errorText"]
    assert MAX_ERROR_BYTES - 100 < size(last) <= MAX_ERROR_BYTES


async def test_ai_sdk_output_error_over_the_cap_comes_cut_then_finish() -> None:
    got = await read("aisdk_chat.mjs", output_failed,
                     lambda body: UIMessageEncoder(max_error_bytes=4096))
    types = [c["type"] for c in got["chunks"]]
    assert types[-1] == "finish" and got["chunks"][-1]["finishReason"] == "error"
    [chunk] = [c for c in got["chunks"] if c["type"] == "data-output-error"]
    assert chunk["data"]["type"] == "StructuredOutputError"
    assert chunk["data"]["message"].endswith(MARKER) and size(chunk) <= 4096
    assert got["status"] == "ready"


def test_a_cut_text_is_short_enough_whatever_its_characters() -> None:
    for text in ("a" * 5000, "\u00e9" * 5000, "\U0001f600" * 5000, "\x01" * 5000, "ab"):
        for over in (1, 100, 4000, 30000):
            cut = cut_text(text, over)
            whole, shown = (len(json.dumps(t, ensure_ascii=False).encode()) for t in (text, cut))
            assert shown <= whole - over or cut == f"\n[... {len(text):,} {MARKER}"
            assert cut.endswith(MARKER)
    assert cut_text("abc", 0) == "abc"


async def retried() -> AsyncIterator[Event]:
    """A retry whose message quotes a vendor's 11 MB error, then the answer."""
    yield CallStarted("call-1", "ui", "agent-1")
    yield OutputRetry("degradation", 1, "forced tool_choice refused: " + "r" * SIZE)
    yield ReasoningChunk("Done.", 1)
    yield Complete(Msg.assistant("Done."), None, Usage(), "completed")


async def test_a_retry_message_over_the_cap_comes_cut_and_the_run_goes_on() -> None:
    got = await read("agui_run.mjs", retried, agui)
    assert got["thrown"] is None and got["runError"] is None, (got["thrown"], got["runError"])
    [retry] = [e for e in got["events"] if e["type"] == "CUSTOM"]
    assert retry["name"] == "agentflow.output_retry" and retry["value"]["message"].endswith(MARKER)
    assert size(retry) <= MAX_ERROR_BYTES and got["events"][-1]["type"] == "RUN_FINISHED"
    got = await read("aisdk_chat.mjs", retried, lambda body: UIMessageEncoder(max_error_bytes=4096))
    [retry] = [c for c in got["chunks"] if c["type"] == "data-output-retry"]
    assert retry["data"]["message"].endswith(MARKER) and size(retry) <= 4096
    assert got["chunks"][-1]["type"] == "finish" and got["status"] == "ready"
