"""A connection lost while the session is being opened (``initialize``, the
first ``tools/list``) fails that start: its error says so, and never that
"the next call reconnects" (there is no next call on a server that did not
start). Against a real stdio process that speaks JSON-RPC until the
listing, then exits."""

from __future__ import annotations

import sys

import pytest

from agentflow.errors import MCPConnectionError, MCPServerStartError
from agentflow.mcp import MCPServer

EXITS_ON_LIST = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "lister", "version": "1"}}}),
            flush=True)
    elif message.get("method") == "tools/list":
        raise SystemExit(3)
"""


async def test_a_listing_the_server_exits_during_fails_the_start_and_says_so() -> None:
    with pytest.raises(MCPServerStartError) as info:
        async with MCPServer.stdio(sys.executable, ["-c", EXITS_ON_LIST]):
            pass
    message = str(info.value)
    assert "could not start over stdio" in message
    assert "closed the connection during tools/list" in message
    assert "reconnect" not in message
    assert isinstance(info.value.__cause__, MCPConnectionError)
