"""``mcp/_listing.checked_streams`` notes the id of each ``tools/list`` the
session writes until its answer comes; one the SDK gives up on (a read
timeout: it writes ``notifications/cancelled``) used to stay noted for the
session's life. A cancelled request is forgotten (its late answer, which the
SDK no longer reads, is not checked), and at most ``MAX_PENDING`` are noted."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from agentflow.mcp._listing import MAX_PENDING, checked_streams

_BAD_TOOL = {"name": "bad", "inputSchema": {"type": "string"}}


async def _dropped_by_answer(sent: list[Any], answered: int) -> list[str]:
    """The tools dropped from the answer to request ``answered`` after ``sent``."""
    out_send, out_receive = anyio.create_memory_object_stream[Any](len(sent) + 1)
    in_send, in_receive = anyio.create_memory_object_stream[Any](1)
    dropped: list[str] = []
    read, write = checked_streams(in_receive, out_send, lambda: None,
                                  lambda name, why: dropped.append(name))
    async with out_send, out_receive, in_send, in_receive:
        for message in sent:
            await write.send(SessionMessage(message))
        answer = JSONRPCResponse(jsonrpc="2.0", id=answered, result={"tools": [_BAD_TOOL]})
        await in_send.send(SessionMessage(answer))
        await read.receive()
    return dropped


def _listing(request_id: int) -> JSONRPCRequest:
    return JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/list")


async def test_an_answered_listing_is_checked() -> None:
    assert await _dropped_by_answer([_listing(1)], 1) == ["bad"]


async def test_a_cancelled_listing_is_forgotten() -> None:
    cancelled = JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                    params={"requestId": 1, "reason": "timed out after 5s"})
    assert await _dropped_by_answer([_listing(1), cancelled], 1) == []


async def test_at_most_max_pending_listings_are_noted() -> None:
    sent = [_listing(index) for index in range(MAX_PENDING + 1)]
    assert await _dropped_by_answer(sent, 0) == []
    assert await _dropped_by_answer(sent, MAX_PENDING) == ["bad"]
