"""An MCP server over stdio written without the SDK (newline-delimited
JSON-RPC by hand), as a server of another SDK, or a hand-rolled one, is: it
can list what the Python SDK's own server refuses to send.

    python tests/mcp_raw_server.py    # lists ``echo``, ``untyped`` (an inputSchema with
                                      # no ``type``: the spec requires "object"), ``listed``
                                      # (an inputSchema that is a list) and ``nameless``
                                      # (no name); ``echo`` answers its ``text``;
                                      # with ``"garble": true`` it first sends a log
                                      # notification whose ``level`` is that text
                                      # (no level: the client cannot read it)
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Return the text unchanged.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "untyped", "description": "Its schema has no type.",
     "inputSchema": {"properties": {"x": {"type": "string"}}}},
    {"name": "listed", "description": "Its schema is a list.", "inputSchema": [{"type": "object"}]},
    {"description": "It has no name.", "inputSchema": {"type": "object"}},
]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The response to ``request`` (``None`` for a notification)."""
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    result: dict[str, Any]
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "raw", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": f"no method {method!r}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = orjson.loads(line)
        arguments = (request.get("params") or {}).get("arguments") or {}
        if request.get("method") == "tools/call" and arguments.get("garble"):
            sys.stdout.buffer.write(orjson.dumps({
                "jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": str(arguments.get("text", "")), "data": "hello"}}) + b"\n")
        response = answer(request)
        if response is not None:
            sys.stdout.buffer.write(orjson.dumps(response) + b"\n")
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
