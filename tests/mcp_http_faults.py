"""HTTP faults the test MCP server (``tests/mcp_server.py --http``) can put
before its SDK app: ASGI wrappers that read a POST's JSON-RPC message and cut
its response (``cutting``) or refuse it as an authenticating proxy or a
gateway does (``guarded``). Imported by the server script from beside it."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["BLOAT_BYTES", "PROXY_COOKIE", "cutting", "guarded", "read_body", "rpc_of"]


async def read_body(receive: Any) -> tuple[list[Any], Any]:
    """The request's body messages, read whole, and a ``receive`` that replays them."""
    messages = [await receive()]
    while messages[-1].get("more_body"):
        messages.append(await receive())
    body = iter(messages)

    async def replay() -> Any:
        return next(body, None) or await receive()

    return messages, replay


def rpc_of(messages: list[Any]) -> Any:
    """The JSON-RPC message a request's body holds, or ``None``."""
    try:
        return orjson.loads(b"".join(m.get("body", b"") for m in messages))
    except orjson.JSONDecodeError:
        return None


def cutting(app: Any) -> Any:
    """``app``, but the response to a ``tools/call`` of ``echo`` with the text
    ``"cut"`` is cut after its headers (the connection dropped, as a proxy's
    idle timeout drops a long call's): the session and the server live on."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        messages, replay = await read_body(receive)
        rpc = rpc_of(messages)
        params = (rpc.get("params") or {}) if isinstance(rpc, dict) else {}
        cut = params.get("name") == "echo" and (params.get("arguments") or {}).get("text") == "cut"

        async def cutting_send(message: Any) -> None:
            if cut and message["type"] == "http.response.body":
                raise ConnectionResetError("the test server cut this response")
            await send(message)

        await app(scope, replay, cutting_send)

    return wrapped


async def _answer(send: Any, status: int, body: bytes, content_type: str,
                  *extra: tuple[bytes, bytes]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), *extra]})
    await send({"type": "http.response.body", "body": body})


PROXY_COOKIE = "pxc-5e0d7a91b3f24c68a0e1"
"""The session cookie ``guarded`` sets on the app's answers (as an authenticating proxy does)."""

BLOAT_BYTES = 64 * 1024 * 1024
"""The size of the error body ``POST /bloat`` makes the next POST answer (``guarded``)."""


async def _bloat(send: Any) -> None:
    """A 502 whose HTML body is ``BLOAT_BYTES`` long, sent piece by piece
    (ends early when the client hangs up)."""
    await send({"type": "http.response.start", "status": 502,
                "headers": [(b"content-type", b"text/html")]})
    piece = b"<p>Bad Gateway</p>" + b" " * (1024 * 1024 - 18)
    try:
        for _ in range(BLOAT_BYTES // len(piece)):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    except OSError:
        return


def guarded(app: Any, token: str) -> Any:
    """``app`` behind a bearer token, as an authenticating proxy puts it: a
    POST without ``Authorization: Bearer <token>`` is answered 401 with an
    OAuth error body (no JSON-RPC error); ``POST /revoke`` makes every token
    refused from then on (it expired), ``POST /overload`` answers the next
    POST 503 with an HTML page and ``Retry-After: 7``, as a gateway does;
    ``POST /bloat`` answers the next POST 502 with an HTML body of
    ``BLOAT_BYTES`` (sent in 1 MiB pieces, as a gateway streaming an endless
    error page; bounded, so a client that reads it whole still ends). Every
    answer the app gives sets the proxy's session cookie (``PROXY_COOKIE``)."""
    state = {"revoked": False, "overloaded": False, "bloated": False}
    paths = {"/revoke": "revoked", "/overload": "overloaded", "/bloat": "bloated"}

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        if scope["path"] in paths:
            state[paths[scope["path"]]] = True
            return await _answer(send, 200, b"{}", "application/json")
        if state["bloated"]:
            state["bloated"] = False
            return await _bloat(send)
        if state["overloaded"]:
            state["overloaded"] = False
            return await _answer(send, 503, b"<html><h1>503 Service Unavailable</h1></html>",
                                 "text/html", (b"retry-after", b"7"))
        headers = dict(scope["headers"])
        if state["revoked"] or headers.get(b"authorization") != f"Bearer {token}".encode():
            return await _answer(
                send, 401, b'{"error":"invalid_token","error_description":"The access token '
                b'expired"}', "application/json",
                (b"www-authenticate", b'Bearer error="invalid_token"'))

        async def cookied(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), (
                    b"set-cookie", f"proxy_session={PROXY_COOKIE}; Path=/; HttpOnly".encode())]}
            await send(message)

        await app(scope, receive, cookied)

    return wrapped
