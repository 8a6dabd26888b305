"""Bounded, well-formed requests: reading a JSON body and checking where a
request comes from, with a client's error answered as a 4xx that names the
problem (never a 500, never a traceback in the log).

    try:
        check_request(request, allowed_hosts={"app.example.org"})
        body = await read_json(request, max_bytes=64 * 1024)
    except RequestRejected as exc:
        return exc.response()

``read_json`` reads at most ``max_bytes`` (it stops reading there: an
oversized body never sits in memory whole) and refuses, each with its own
message: a body over the limit (``413``), a ``Content-Type`` other than
``application/json`` (``415``: a cross-site form or ``text/plain`` "simple
request" cannot send JSON without a CORS preflight, so this alone stops
such CSRF), an empty body, bytes that are not UTF-8, malformed JSON, and
JSON nested deeper than ``max_depth`` (``400``).

``check_request`` refuses a ``Host`` the app does not serve (``421``: DNS
rebinding points a hostile name at a local server) and a cross-site
``Origin`` (``403``): browsers send ``Origin`` on every POST, and a
request from a page of another origin carries that origin.

The error body is ``{"error": {"type": str, "message": str}}`` (the shape of
the SSE ``error`` event); ``type`` is one of ``payload_too_large``,
``unsupported_media_type``, ``empty_body``, ``invalid_utf8``,
``malformed_json``, ``too_deep``, ``misdirected_host``, ``cross_origin``,
``invalid_request``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from agentflow._nesting import nesting_depth
from agentflow.web._frame_caps import shown_input

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "RequestRejected",
    "check_request",
    "json_depth",
    "read_json",
]

DEFAULT_MAX_BYTES = 1024 * 1024
"""``read_json``'s default body limit: 1 MiB."""
DEFAULT_MAX_DEPTH = 32
"""``read_json``'s default nesting limit (arrays and objects)."""
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


class RequestRejected(Exception):
    """A client's request the app refuses, with the HTTP status and a message
    naming what is wrong (no secret, no internals).

    Attributes:
        status: the HTTP status (400, 403, 413, 415, 421).
        kind: a short machine-readable name (see the module docstring).
        message: for the client.
    """

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message

    def response(self) -> JSONResponse:
        """The error as ``{"error": {"type", "message"}}`` with its status."""
        return JSONResponse({"error": {"type": self.kind, "message": self.message}},
                            status_code=self.status)


def json_depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests arrays and objects (a scalar: 0), counting
    no further than ``limit + 1`` (iterative: any depth is safe)."""
    return nesting_depth(value, limit)


async def read_body(request: Request, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The request body, read no further than ``max_bytes``.

    Raises:
        RequestRejected: 413 when ``Content-Length`` or the bytes read pass
            ``max_bytes``; 400 when the client went away mid-body.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise RequestRejected(400, "invalid_request", "Content-Length is not a number")
        if int(declared) > max_bytes:
            raise _too_large(max_bytes)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(max_bytes)
            chunks.append(chunk)
    except ClientDisconnect:
        raise RequestRejected(400, "invalid_request", "the body ended early") from None
    return b"".join(chunks)


def _too_large(max_bytes: int) -> RequestRejected:
    return RequestRejected(413, "payload_too_large", (
        f"the body is larger than {max_bytes} bytes: a route whose clients send more takes "
        "read_json(..., max_bytes=...); a chat posts its whole history with each message "
        "(tool results included), and with a store it may send only the new one"))


async def read_json(request: Request, *, max_bytes: int = DEFAULT_MAX_BYTES,
                    max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The request's JSON body, bounded and checked (see the module docstring).

    Returns: the parsed JSON value (dict, list, str, number, bool or None).

    Raises:
        RequestRejected: 413 (too large), 415 (not ``application/json``),
            400 (empty, not UTF-8, malformed, nested deeper than ``max_depth``).
    """
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise RequestRejected(415, "unsupported_media_type",
                              "send the body as Content-Type: application/json")
    body = await read_body(request, max_bytes=max_bytes)
    if not body.strip():
        raise RequestRejected(400, "empty_body", "the body is empty: send a JSON object")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestRejected(400, "invalid_utf8",
                              f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc):
            raise _too_deep(max_depth) from None
        raise RequestRejected(400, "malformed_json",
                              f"the body is not valid JSON: {exc.msg} at "
                              f"line {exc.lineno} column {exc.colno}") from None
    if json_depth(value, max_depth) > max_depth:
        raise _too_deep(max_depth)
    return value


def _too_deep(max_depth: int) -> RequestRejected:
    return RequestRejected(400, "too_deep",
                           f"the JSON nests deeper than {max_depth} levels")


def _host_name(authority: str) -> str:
    """``authority`` (``host[:port]``) without its port, lower-cased."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority.split("]")[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def check_request(request: Request, *, allowed_hosts: Collection[str] = LOCAL_HOSTS,
                  allowed_origins: Collection[str] = ()) -> None:
    """Refuse a request for another host or from another site.

    Args:
        allowed_hosts: host names the app serves (no port; ``"*"`` for any);
            by default the loopback names only, for a local app.
        allowed_origins: origins (``scheme://host[:port]``) allowed besides
            the app's own (same host and port as the request's ``Host``).

    Raises:
        RequestRejected: 421 for a ``Host`` not in ``allowed_hosts`` (or
            missing); 403 for an ``Origin`` that is neither the app's own nor
            in ``allowed_origins`` (``Origin: null`` included). A request
            without ``Origin`` (not from a browser page, or a same-origin GET)
            passes.
    """
    host = request.headers.get("host", "")
    if not host or ("*" not in allowed_hosts and _host_name(host) not in allowed_hosts):
        raise RequestRejected(421, "misdirected_host", (
            f"this server does not serve the Host {shown_input(host)}: an app served under "
            "that name allows it with check_request(..., allowed_hosts=[the name])"))
    origin = request.headers.get("origin")
    if origin is None:
        return
    own = {f"http://{host.lower()}", f"https://{host.lower()}"}
    if origin.lower() not in own and origin not in allowed_origins:
        raise RequestRejected(403, "cross_origin", (
            f"requests from the origin {shown_input(origin)} are refused: a page served elsewhere "
            "(a dev server on another port) is allowed with "
            "check_request(..., allowed_origins=[its origin])"))
