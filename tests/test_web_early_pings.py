"""A response whose first event is slow to come sends the keep-alive comment
(``: ping``) all the same: a resumed approval runs the approved tool before
the call starts (``stream_with_store``), and a proxy's idle timeout cut a
stream that had sent no byte for as long as the tool ran. The first ping goes
out after ``ping_interval`` of silence, so a refusal met at once is still a
400 (``AlreadyDecidedError``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from agentflow import ReActAgent
from agentflow.approvals import Approve, RequireApproval
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import EventStreamResponse, SQLiteStateStore, sse_response, stream_with_store


async def run(response: EventStreamResponse, seen: list[bytes],
              on_body: Any = None) -> bytes:
    """``response`` answered in process; the bodies it sent in ``seen``."""
    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            seen.append(b"status %d" % message["status"])
        else:
            seen.append(message.get("body", b""))
            if on_body is not None:
                on_body(message.get("body", b""))

    await asyncio.wait_for(response({"type": "http"}, receive, send), 30)  # type: ignore[arg-type]
    return b"".join(seen)


async def test_a_slow_approved_tool_gets_pings_before_the_call_starts(tmp_path: Path) -> None:
    pinged = asyncio.Event()

    async def send_report(to: str) -> str:
        """Send the report (runs until the client has had a keep-alive)."""
        # (with no ping before the first event: never; a started tool runs to its end)
        await asyncio.wait_for(pinged.wait(), 10)
        return f"sent to {to}"

    def model(request: RecordedRequest) -> Reply | str:
        if request.messages[-1].tool_results:
            return request.messages[-1].tool_results[0].output
        return Reply(tool_calls=[Call("send_report", {"to": "ada"}, id="c1")])

    agent = ReActAgent("ops", FunctionModel(model), tools=[send_report],
                       middleware=[RequireApproval({"send_report"})])
    store = SQLiteStateStore(str(tmp_path / "s.sqlite3"))
    try:
        first = await run(sse_response(agent, "Send it", store=store, key="k"), [])
        assert b"event: approval_requested" in first
        seen: list[bytes] = []
        resumed = EventStreamResponse(
            stream_with_store(agent, store, "k", None, decisions={"c1": Approve()}),
            ping_interval=0.05)
        raw = await run(resumed, seen, lambda body: body == b": ping\n\n" and pinged.set())
        assert seen[0] == b"status 200" and seen[1] == b": ping\n\n"
        assert raw.index(b": ping") < raw.index(b"event: call_started")
        assert b'"output":"sent to ada"' in raw and b"event: complete" in raw
        # a decision sent twice is refused at once: a 400, no ping came first
        again: list[bytes] = []
        await run(EventStreamResponse(
            stream_with_store(agent, store, "k", None, decisions={"c1": Approve()}),
            ping_interval=0.05), again)
        assert again[0] == b"status 400"
        assert orjson.loads(again[1])["error"]["type"] == "AlreadyDecidedError"
    finally:
        await store.aclose()
        await agent.aclose()
