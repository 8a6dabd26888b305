"""A server's ``tools/list`` answer, each tool checked alone.

The SDK checks a ``tools/list`` result against the negotiated protocol
version's wire model as a whole (``mcp_types.methods.validate_server_result``):
one tool that breaks it (an ``inputSchema`` without ``"type": "object"``,
which every revision of the spec's ``Tool`` requires, a schema that is not
an object, a tool without a name) failed the whole listing with pydantic's
``ValidationError``, so a server of another SDK with one such tool could not
start, and a refresh that met one raised it into the run. ``checked_streams``
wraps a session's streams: it notes the ids of the ``tools/list`` requests the
session writes, and takes out of their answers each tool that fails that
same check on its own (the rest of the result as the server sent it), handing
its name and why to ``dropped``; the SDK then reads the listing of the tools
that pass. ``ServerTools._declare`` leaves the dropped ones out, logged and
kept in ``skipped`` (or raises ``MCPToolSchemaError`` for one ``include``
names).
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

from agentflow._secrets import mask_secrets

__all__ = ["FALLBACK_VERSION", "MAX_PENDING", "checked_streams", "tool_fault"]

FALLBACK_VERSION = "2025-11-25"
"""The protocol version a result is checked at before one is negotiated (the SDK's own)."""

_METHOD = "tools/list"

_CANCELLED = "notifications/cancelled"
"""What the SDK writes when it gives up on a request (its read timeout, or the
caller cancelled): that request's answer is no longer read."""

MAX_PENDING = 256
"""The most ``tools/list`` requests noted at once: the oldest is forgotten past
it (one the SDK gave up on without a ``notifications/cancelled``)."""


def tool_fault(tool: Any, version: str | None) -> str | None:
    """Why ``tool`` (one entry of a ``tools/list`` result, as sent) breaks
    the ``Tool`` of protocol ``version``, or ``None`` when it does not (or the
    version is one the SDK does not know: the SDK's own check then decides)."""
    try:
        validate_server_result(_METHOD, version or FALLBACK_VERSION, {"tools": [tool]})
    except (KeyError, ValueError) as exc:
        if not isinstance(exc, ValidationError):
            return None
        error = exc.errors()[0]
        place = ".".join(str(part) for part in error["loc"][2:]) or "the tool"
        return mask_secrets(f"{place}: {error['msg']}")
    return None


def _name(tool: Any, index: int) -> str:
    """The tool's name, or its place in the listing when it has none."""
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else f"<tool #{index} of the listing, no name>"


class _Wrapped:
    """A session stream around ``_inner``: closing and entering go to it."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        result: bool | None = await self._inner.__aexit__(kind, exc, tb)
        return result


class _Writes(_Wrapped):
    """The session's write stream; notes the id of each ``tools/list`` it sends,
    and forgets it when the session cancels that request (so a session whose
    listings time out keeps no id of them), at most ``MAX_PENDING`` at once."""

    def __init__(self, inner: Any, pending: dict[Any, None]) -> None:
        self._inner, self._pending = inner, pending

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, JSONRPCRequest) and message.method == _METHOD:
            self._pending[message.id] = None
            while len(self._pending) > MAX_PENDING:
                del self._pending[next(iter(self._pending))]
        elif (isinstance(message, JSONRPCNotification) and message.method == _CANCELLED
              and isinstance(message.params, dict)):
            self._pending.pop(message.params.get("requestId"), None)
        await self._inner.send(item)


class _Reads(_Wrapped):
    """The session's read stream; the answers to the noted requests checked."""

    def __init__(self, inner: Any, pending: dict[Any, None], version: Callable[[], str | None],
                 dropped: Callable[[str, str], None]) -> None:
        self._inner, self._pending = inner, pending
        self._version, self._dropped = version, dropped

    @property
    def last_context(self) -> Any:
        """The inner stream's sender context (the SDK reads it by duck typing)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return self._checked(await self._inner.receive())

    def __aiter__(self) -> _Reads:
        return self

    async def __anext__(self) -> Any:
        return self._checked(await self._inner.__anext__())

    def _checked(self, item: Any) -> Any:
        """``item``; an answer to a noted ``tools/list`` without the tools that fail."""
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCError):
            self._pending.pop(message.id, None)
        if not (isinstance(message, JSONRPCResponse) and message.id in self._pending):
            return item
        del self._pending[message.id]
        tools = message.result.get("tools")
        if isinstance(tools, list):
            kept = []
            for index, tool in enumerate(tools):
                if (fault := tool_fault(tool, self._version())) is None:
                    kept.append(tool)
                else:
                    self._dropped(_name(tool, index), fault)
            if len(kept) < len(tools):
                message.result["tools"] = kept
        return item


def checked_streams(read: Any, write: Any, version: Callable[[], str | None],
                    dropped: Callable[[str, str], None]) -> tuple[Any, Any]:
    """``(read, write)`` of a session, the tools of every ``tools/list``
    answer checked one by one (the module docstring); ``version`` is the
    negotiated protocol version (``None`` before it is), ``dropped`` is called
    with ``(name, why)`` for each tool taken out."""
    pending: dict[Any, None] = {}
    return _Reads(read, pending, version, dropped), _Writes(write, pending)
