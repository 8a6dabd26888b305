"""Where an MCP server runs and how to reach it: a command over stdio, a URL
over streamable HTTP or (legacy) HTTP with SSE, each opened with the official
SDK's transport (``mcp.client.stdio.stdio_client``,
``mcp.client.streamable_http.streamable_http_client``,
``mcp.client.sse.sse_client``).

``describe()`` names the server in errors, logs and reprs: the command line,
or the URL without user info, query and fragment, through ``mask_secrets``.
Header values, environment values and option values (``--api-key=X``,
``--token X``) whose name says they are secret, and key-like URL path
segments, are registered as secrets (``agentflow._secrets``), so they are
masked there and in any SDK message that echoes one; the SDK's loggers
(``mask_sdk_records``: every module's under ``mcp``, and its client session's
``client``) and its HTTP client's (``_HTTP_LOGGERS``), whose records quote
the URL, query included, or a server's message, get the same mask, over
every transport.
The session id a streamable HTTP server gives (``mcp-session-id``: whoever
holds it may act in the session) is masked in those loggers' records too
(``_session_ids``: the SDK logs it at INFO, "Received session ID: <id>").
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import orjson
from mcp_types import INTERNAL_ERROR

from agentflow._arguments import wrong_type
from agentflow._logging import mask_records, mask_records_from
from agentflow._secrets import mask_secrets, register_secret
from agentflow.mcp._call_reads import (
    READ_TIMEOUT,
    CallWaits,
    follow_call,
    limited_stream,
    unlimited_reads,
)
from agentflow.mcp._session_ids import SESSION_IDS

__all__ = ["ERROR_BODY_BYTES", "HTTP_STATUS", "MAX_RESULT_BYTES", "READ_TIMEOUT", "HTTPTarget",
           "StdioTarget", "Target"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|COOKIE|SESSION", re.I)
"""Environment variable and option names whose values are masked wherever they could appear."""

_TOKEN_SEGMENT = re.compile(r"(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}")
"""A URL path segment that looks like a key (hosted MCP servers put one in the path:
``https://host/mcp/<key>/sse``): 20 or more letters, digits, ``_``, ``-``, with a digit
and a letter."""


_HTTP_LOGGERS = ("httpx2", "mcp", "mcp.client.streamable_http", "mcp.client.sse")
"""The loggers that write an HTTP server's URL (httpx2's INFO ``HTTP Request: POST <url>``
for every request; the SDK's "Connecting to ... endpoint: <url>"), and the SDK's others
(``mask_records`` masks each module's logger under ``mcp``: the transports are named as
they may be imported only when their first server opens)."""

_SDK_CLIENT_LOGGER = "client"
"""The logger the SDK's client session writes to (``mcp.client.session``:
``logging.getLogger("client")``): a notification it cannot read, with the
validation error quoting the server's values, a callback that failed. An
application may name a logger so too: only the SDK's own records are masked
(``mask_records_from``)."""


def mask_sdk_records() -> None:
    """Mask the records of the SDK's loggers (``mcp`` and each module's
    under it, its client session's ``client``) and of its HTTP client's
    (``_HTTP_LOGGERS``), as agentflow's own are (``_logging``). Idempotent."""
    import mcp

    mask_records(*_HTTP_LOGGERS)
    mask_records_from(_SDK_CLIENT_LOGGER, os.path.dirname(mcp.__file__))


_SESSION_HEADER = "mcp-session-id"
"""The streamable HTTP transport's session header."""

def _register_args(args: Sequence[str]) -> None:
    """Mask the values of secret-named options: ``--api-key=X``, ``--token X``."""
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not name.startswith("-") or not _SECRET_NAME.search(name):
            continue
        if eq:
            register_secret(value)
        elif i + 1 < len(args):
            register_secret(args[i + 1])


def _register_url(url: str) -> None:
    """Mask the key-like path segments and the user info of ``url``."""
    parts = urlsplit(url)
    for segment in parts.path.split("/"):
        if _TOKEN_SEGMENT.fullmatch(segment):
            register_secret(segment)
    if parts.password:
        register_secret(parts.password)


@dataclass(frozen=True, slots=True)
class StdioTarget:
    """A server the client starts as a subprocess and talks to over its
    stdin/stdout (newline-delimited JSON-RPC). ``env`` is merged over the SDK's
    safe default environment (``HOME``, ``PATH``, ...: the parent's secrets are
    not passed on unless named here)."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    cwd: str | Path | None = None
    stderr: TextIO | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name, value in (self.env or {}).items():
            if _SECRET_NAME.search(name):
                register_secret(value)
        _register_args(self.args)

    def __repr__(self) -> str:
        return f"StdioTarget({self.describe()!r})"

    @property
    def kind(self) -> str:
        return "stdio"

    def describe(self) -> str:
        """The command line, secrets masked."""
        return mask_secrets(shlex.join([self.command, *self.args]))

    async def open(self, stack: AsyncExitStack, expired: Callable[[], None]) -> Any:
        """Start the process; its read and write streams (closed with ``stack``:
        stdin closed, then SIGTERM and SIGKILL to its process group, by the SDK).
        ``expired`` is for HTTP (a process has no session to expire)."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        mask_sdk_records()
        # bytes that are not UTF-8 (a child process of the server writing to the stdout it
        # inherited, a Latin-1 file's content) read as U+FFFD: the SDK's strict decoding
        # ended its reader inside a drain that lasts as long as the process, so that call
        # and every later one waited for their timeouts (without one, for ever)
        params = StdioServerParameters(command=self.command, args=list(self.args),
                                       env=dict(self.env) if self.env else None, cwd=self.cwd,
                                       encoding_error_handler="replace")
        errlog = self.stderr or sys.stderr
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))


MAX_RESULT_BYTES = 32 * 1024 * 1024
"""The largest message (a tool's result) a streamable HTTP server may send in
one SSE event, by default: the SDK's own default, 1 MiB, failed a screenshot
tool's result (a PNG in base64) that stdio carries whole."""


@dataclass(frozen=True, slots=True)
class HTTPTarget:
    """A server at ``url``, over streamable HTTP (``sse=False``) or the
    legacy HTTP+SSE transport. ``headers`` go with every request
    (``Authorization``...). ``max_result_bytes``: the largest message the
    server may send in one SSE event over streamable HTTP (``None``: no
    limit); the legacy transport's is its HTTP client's, 1 MiB.
    ``http_timeout``: seconds to connect and to write a request.
    ``read_timeout``: seconds a response may go without a byte
    (``READ_TIMEOUT``), for the requests no tool call makes (over the legacy
    transport, its one SSE stream while no call waits); a tool call's wait as
    long as its own timeout (``None``: no limit), over both transports
    (``agentflow.mcp._call_reads``). ``transport``: the httpx2 transport
    streamable HTTP requests go through (an ``httpx2.AsyncBaseTransport``: a
    proxy's, custom TLS, or a test's that records what it carries), under
    agentflow's handling of error statuses and timeouts; its owner closes
    it (the default, a new ``httpx2.AsyncHTTPTransport()`` per session, is
    closed with its session)."""

    url: str
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    sse: bool = False
    http_timeout: float = 30.0
    max_result_bytes: int | None = MAX_RESULT_BYTES
    read_timeout: float = READ_TIMEOUT
    transport: Any = field(default=None, repr=False, compare=False)
    call_waits: CallWaits = field(init=False, repr=False, compare=False)
    """The tool calls waiting on the server, whose timeouts the legacy SSE
    stream's reads follow (``agentflow.mcp._call_reads``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "call_waits", CallWaits(self.read_timeout))
        for value in (self.headers or {}).values():
            register_secret(value)
        _register_url(self.url)

    def __repr__(self) -> str:
        return f"HTTPTarget({self.describe()!r}, sse={self.sse})"

    @property
    def kind(self) -> str:
        return "sse" if self.sse else "streamable HTTP"

    def describe(self) -> str:
        """The URL without user info, query and fragment, secrets masked."""
        return mask_secrets(self.url)

    async def open(self, stack: AsyncExitStack, expired: Callable[[], None]) -> Any:
        """Connect; the read and write streams (closed with ``stack``: the
        session is ended with an HTTP DELETE, the connections closed).
        ``expired`` is called when the server answers 404 to a request naming
        the session (streamable HTTP: "the client MUST start a new session")."""
        mask_sdk_records()
        SESSION_IDS.watch(*_HTTP_LOGGERS, "agentflow")  # (mask_records, with the ids)
        headers = dict(self.headers or {})
        import httpx2

        if self.sse:
            from mcp.client.sse import sse_client

            def sse_http_client(headers: dict[str, str] | None = None,
                                timeout: httpx2.Timeout | None = None,
                                auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
                # (the SDK's client, 30 s and reads as long as the calls: _call_reads)
                return httpx2.AsyncClient(
                    headers=headers, auth=auth, transport=_status_transport(
                        httpx2.AsyncHTTPTransport(), owned=True, sse=self.call_waits),
                    timeout=httpx2.Timeout(self.http_timeout, read=self.read_timeout))

            return await stack.enter_async_context(sse_client(
                self.url, headers=headers, timeout=self.http_timeout,
                httpx_client_factory=sse_http_client))
        from mcp.client.streamable_http import streamable_http_client

        held: set[str] = set()

        def release() -> None:
            for session_id in held:
                SESSION_IDS.drop(session_id)

        stack.callback(release)  # (the last to run: the session's DELETE is logged masked)

        async def on_response(response: httpx2.Response) -> None:
            # (before the SDK reads the response, and logs its session id)
            if (given := response.headers.get(_SESSION_HEADER)) and given not in held:
                held.add(given)
                SESSION_IDS.hold(given)
            if response.status_code == 404 and _SESSION_HEADER in response.request.headers:
                expired()

        # the SDK's defaults (30 s, reads 300 s: a response stream may stay open; a tool
        # call's as long as its timeout, call_reads), but no
        # limit on the wait for a free connection: each call waiting on the server holds
        # one (its response stream) of the pool's 100, and a call that waited past the
        # pool timeout failed with an exception that ended the SDK's transport, so every
        # call on the session failed; a call's own timeout bounds its wait (its
        # cancellation leaves the queue cleanly)
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(
            self.http_timeout, read=self.read_timeout, pool=None),
            event_hooks={"response": [on_response]},
            transport=_status_transport(self.transport or httpx2.AsyncHTTPTransport(),
                                        owned=self.transport is None))
        await stack.enter_async_context(client)
        return await stack.enter_async_context(streamable_http_client(
            self.url, http_client=client, max_sse_event_size=self.max_result_bytes))


Target = StdioTarget | HTTPTarget

_BODY_HEADERS = frozenset({"content-type", "content-length", "content-encoding",
                           "transfer-encoding"})
"""The headers that describe a response's body, which ``_status_transport`` replaces."""

HTTP_STATUS = "agentflow_http_status"
"""The key, in the ``data`` of the JSON-RPC error ``_StatusTransport`` writes, of
the HTTP status (and ``retry_after``, ``reason``) the server answered."""


ERROR_BODY_BYTES = 64 * 1024
"""The most of an HTTP error response's body ``_status_transport`` reads (its
first 300 characters are the message): the rest is left unread and the
connection closed, so a gateway answering an endless or huge error body costs
neither memory nor a call that never ends."""


async def _read_capped(response: Any, cap: int = ERROR_BODY_BYTES) -> bytes:
    """At most ``cap`` bytes of ``response``'s body (decoded), read chunk by
    chunk; the response is closed (its unread rest dropped with the connection)."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with contextlib.aclosing(response.aiter_bytes()) as parts:
            async for chunk in parts:
                chunks.append(chunk)
                size += len(chunk)
                if size >= cap:
                    break
    finally:
        await response.aclose()
    return b"".join(chunks)[:cap]


def _status_transport(inner: Any, owned: bool, sse: CallWaits | None = None) -> Any:
    """An httpx2 transport over ``inner`` whose requests made by a tool call
    wait as long as the call (``call_reads``; the legacy transport's SSE
    stream, with ``sse``, as long as the calls waiting: ``limited_stream``),
    and that turns a POST's error status
    whose body is no JSON-RPC error (a 401 of an expired token, a 429, a
    gateway's 502) into a JSON-RPC error naming it (``data[HTTP_STATUS]``):
    the SDK surfaces the server's JSON-RPC error, but for any other body
    says only "Server returned an error response". A 404 is left to the SDK
    (its session expiry). At most ``ERROR_BODY_BYTES`` of the error body are
    read (a JSON-RPC error longer than that reads as no JSON-RPC error)."""
    import httpx2

    class _StatusTransport(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            stream = sse is not None and request.method == "GET"  # (the one GET: the stream)
            if stream:
                unlimited_reads(request)
            else:
                follow_call(request)
            response: httpx2.Response = await inner.handle_async_request(request)
            if stream and sse is not None:
                limited_stream(request, response, sse)
            if request.method != "POST" or response.status_code < 400 or \
                    response.status_code == 404:
                return response
            body = await _read_capped(response)
            headers = [(k, v) for k, v in response.headers.multi_items()  # (WWW-Authenticate
                       if k.lower() not in _BODY_HEADERS]  # kept; the body is a new one)
            headers.append(("content-type", "application/json"))
            try:
                rpc = orjson.loads(body)
            except orjson.JSONDecodeError:
                rpc = None
            if isinstance(rpc, dict) and isinstance(rpc.get("error"), dict):
                return httpx2.Response(response.status_code, request=request, content=body,
                                       headers=headers)
            text = " ".join(body.decode("utf-8", "replace").split())[:300]
            error = {"code": INTERNAL_ERROR, "message": text or "no message", "data": {
                HTTP_STATUS: {"status": response.status_code,
                              "reason": response.reason_phrase,
                              "retry_after": response.headers.get("retry-after")}}}
            return httpx2.Response(
                response.status_code, request=request, headers=headers,
                content=orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error}))

        async def aclose(self) -> None:
            if owned:  # (a transport the user gave serves each session: theirs to close)
                await inner.aclose()

    return _StatusTransport()


def stdio_target(command: str, args: Sequence[str], env: Mapping[str, str] | None,
                 cwd: str | Path | None, stderr: TextIO | None) -> StdioTarget:
    """A ``StdioTarget``, its arguments checked.

    Raises:
        ArgumentTypeError: ``args`` is one string (a command line is a list of
            arguments) or no sequence (a ``TypeError``).
    """
    if isinstance(args, str | bytes) or not isinstance(args, Sequence):
        raise wrong_type("args", "a list of arguments", args,
                         hint="split a command line (shlex.split) or pass [arg]")
    return StdioTarget(command, tuple(str(a) for a in args), env, cwd, stderr)
