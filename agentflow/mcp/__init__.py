"""Tools from MCP servers (the Model Context Protocol), beside Python tools.

    from agentflow.mcp import MCPServer

    files = MCPServer.stdio("python", ["files_server.py"], prefix="files", timeout=20)
    search = MCPServer.http("http://127.0.0.1:8000/mcp", headers={"Authorization": token})
    async with files, search:
        agent = ReActAgent("a", model, tools=[files, search, my_function])
        reply = await agent.call("...", Invoice)     # still a validated Invoice

Built on the official ``mcp`` SDK (the ``mcp`` extra: ``pip install
'agentflow[mcp]'``); importing ``agentflow`` never needs it, importing this
module does. ``MCPServer`` (``_server``: its configuration) is a
``ToolSource``: the session's lifecycle and reconnection
(``_server_session``), filters, prefixes and refresh on
``notifications/tools/list_changed`` (``_server_tools``), calls and their
timeouts (``_server_calls``); ``_declare`` makes each listed tool an agent
``Tool`` and checks its schema against every schema dialect; ``_listing``
takes out of a ``tools/list`` answer each tool the protocol's ``Tool``
refuses (flagged in ``skipped``), so the others stay usable; ``_results`` turns a
``tools/call`` result into what the model reads (``MCPToolResult``);
``_transports`` holds the stdio, streamable HTTP and SSE targets, and
``_session_ids`` keeps a streamable HTTP session's id out of every log record. The errors
are in ``agentflow.errors`` (``MCPError`` and its subclasses,
``MCPNotRunningError``, ``MCPToolSchemaError``).
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401  (the SDK, not this package: imports are absolute)
except ImportError as _exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "agentflow.mcp needs the official MCP SDK: pip install 'agentflow[mcp]'"
    ) from _exc

from agentflow.mcp._results import MCPToolResult
from agentflow.mcp._server import MCPServer
from agentflow.mcp._transports import HTTPTarget, StdioTarget

__all__ = ["HTTPTarget", "MCPServer", "MCPToolResult", "StdioTarget"]
