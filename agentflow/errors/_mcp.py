"""Failures of MCP tool sources (``agentflow.mcp``): a server that cannot
start, a connection lost, a call past its timeout, a tool that cannot be
declared (``agentflow.errors`` re-exports these; the tree is drawn there).

Every message names the server by its ``target``: the command it runs (for
stdio) or its URL without userinfo, query or fragment (for HTTP), passed
through ``mask_secrets``; headers and environment values never appear."""

from __future__ import annotations

from agentflow.errors._root import AgentflowError
from agentflow.errors._usage import ToolDefinitionError, UsageError

__all__ = [
    "MCPConnectionError",
    "MCPError",
    "MCPNotRunningError",
    "MCPReconnectError",
    "MCPServerStartError",
    "MCPStatusError",
    "MCPTimeoutError",
    "MCPToolSchemaError",
]


class MCPError(AgentflowError):
    """An MCP server failed (base of the run-time MCP errors).

    Attributes:
        server: the server's name (``MCPServer.name``).
        target: the command or redacted URL it runs at.
    """

    def __init__(self, message: str, *, server: str, target: str) -> None:
        super().__init__(message)
        self.server = server
        self.target = target


class MCPServerStartError(MCPError):
    """The server could not be started or connected to, or did not complete
    the MCP handshake (``initialize``, then ``tools/list``) within its
    ``connect_timeout``. The cause is chained."""


class MCPConnectionError(MCPError):
    """The connection to a running server was lost (the process exited, the
    HTTP endpoint went away, an HTTP server no longer knew the session) while
    a request was pending or before it was sent. The call that met it fails;
    the server's next call reconnects first (``MCPServer(reconnect=True)``)."""


class MCPReconnectError(MCPConnectionError):
    """A server whose connection was lost could not be reconnected: its
    process did not start again, its URL did not answer, or the handshake
    failed. Each later call tries once more. The cause is chained.

    Attributes:
        lost: why the connection had been lost.
    """

    def __init__(self, message: str, *, server: str, target: str, lost: str) -> None:
        super().__init__(message, server=server, target=target)
        self.lost = lost


class MCPStatusError(MCPError):
    """An HTTP server answered a request with an error status and no JSON-RPC
    error: 401 or 403 (its credentials were refused: a token expired), 429
    (rate limited), a 5xx (it, or a gateway before it, failed). The SDK said
    only "Server returned an error response".

    Attributes:
        status: the HTTP status.
        retry_after: seconds its ``Retry-After`` header asked to wait, or ``None``.
    """

    def __init__(self, message: str, *, server: str, target: str, status: int,
                 retry_after: float | None = None) -> None:
        super().__init__(message, server=server, target=target)
        self.status = status
        self.retry_after = retry_after


class MCPTimeoutError(MCPError):
    """A tool call got no result within its timeout; the SDK sent the server a
    cancellation for it.

    Attributes:
        tool: the tool's name on the server.
        timeout: the timeout, in seconds.
    """

    def __init__(self, message: str, *, server: str, target: str, tool: str,
                 timeout: float) -> None:
        super().__init__(message, server=server, target=target)
        self.tool = tool
        self.timeout = timeout


class MCPNotRunningError(UsageError, RuntimeError):
    """A server's tools were used outside its ``async with`` block (before it
    started or after it closed)."""


class MCPToolSchemaError(ToolDefinitionError):
    """A server's tool cannot be declared to a model: its input schema is not
    valid JSON Schema, does not describe an object, holds a reference no
    vendor follows, or a schema dialect cannot express it.

    Attributes:
        server: the server's name.
        tool: the tool's name on the server.
        dialect: the schema dialect that refused it (``None``: every dialect).
    """

    def __init__(self, message: str, *, server: str, tool: str,
                 dialect: str | None = None) -> None:
        super().__init__(message)
        self.server = server
        self.tool = tool
        self.dialect = dialect
