"""The base of every fake provider server: an aiohttp app on 127.0.0.1 (free
port) that records each request and answers from a script.

A vendor fake subclasses ``FakeServer``: it declares its routes, renders a
``FakeReply`` in its own wire format (``render_json`` for a whole reply,
``render_events`` for a stream) and may refuse requests the real vendor
refuses (``check``). The base does the rest: recording, the script queue,
scripted HTTP errors with headers, latency, chunk pacing and stream cuts.

    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="hi"))
        fake.add_error(429, {"error": {...}}, headers={"Retry-After": "1"})
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k")
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from .limits import FakeLimits, LimitState

MAX_BODY = 256 * 1024 * 1024
"""The largest request body a fake reads (aiohttp's default, 1 MiB, is below
every vendor's limit: each fake checks its vendor's own)."""


@dataclass(frozen=True)
class FakeCall:
    """A tool call in a fake reply. ``arguments``: an object, or raw text sent as is."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class FakeReply:
    """What the fake model answers.

    Attributes:
        text / thinking / tool_calls: the content.
        finish_reason: the vendor's raw value (default chosen by the fake).
        usage: (input tokens, output tokens).
        chunk_size: characters per streamed text/argument fragment.
        cut_after: close the connection after this many stream events (no terminal marker).
        event_delay: seconds between stream events.
        latency: seconds before the response starts.
        extra: vendor-specific fields the fake may use.
    """

    text: str = ""
    thinking: str = ""
    tool_calls: Sequence[FakeCall] = ()
    finish_reason: str | None = None
    usage: tuple[int, int] = (12, 7)
    chunk_size: int | None = 8
    cut_after: int | None = None
    event_delay: float = 0.0
    latency: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeError:
    """A scripted HTTP error: status, JSON (or raw bytes) body, headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    """A request the fake received."""

    path: str
    headers: Mapping[str, str]
    body: Any


Script = FakeReply | FakeError | Callable[[Any], "FakeReply | FakeError"]


DEFAULT_LOGPROB = -0.01
"""The log-probability fakes give a token ``extra["token_logprobs"]`` does not name."""
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def fake_tokens(text: str) -> list[str]:
    """The fakes' tokenizer: runs of word characters, of spaces, and single
    other characters (their concatenation is ``text``)."""
    return _TOKEN.findall(text)


def pieces(text: str, size: int | None) -> list[str]:
    """``text`` split into ``size``-character fragments (at least one)."""
    if not size or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeServer:
    """Base fake. Subclasses set ``routes`` and implement the render hooks."""

    routes: Sequence[str] = ()
    vendor = "fake"

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Script] = deque()
        self.default: Script | None = None
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.host = "127.0.0.1"
        self.port = 0
        """The port to listen on (0: a free one, the default)."""
        self.record = True
        """Record requests in ``requests`` (a long-running server turns it off)."""
        self.hold: asyncio.Event | None = None
        """When set, each request waits for this event before being answered
        (a test holds a client mid-request, deterministically)."""
        self.transports: list[str] = []
        """``"stream"`` or ``"whole"`` per reply sent (recorded with ``requests``)."""
        self.streams_aborted = 0
        """Streams the client abandoned before their end (its connection closed)."""
        self.echo_key = False
        """Refuse every request with the vendor's wrong-key error quoting the
        credential it carried, whole and as a prefix (as servers that echo keys do)."""
        self.limits: FakeLimits | None = None
        """Requests/tokens per minute to enforce with 429s and the vendor's headers."""
        self.force_stream: str | None = None
        """A proxy that forces streaming: when set, a whole-reply request is
        answered with the vendor's stream, under this content type (the
        vendor's own, e.g. ``text/event-stream``, or a mislabel such as
        ``application/json``)."""

    # -- script -------------------------------------------------------------
    def add(self, *items: Script) -> None:
        """Queue replies (a callable receives the request body and returns one)."""
        self.script.extend(items)

    def add_error(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        """Queue an HTTP error."""
        self.script.append(FakeError(status, body, headers or {}))

    @property
    def bodies(self) -> list[Any]:
        """Recorded request bodies, in order."""
        return [r.body for r in self.requests]

    # -- lifecycle ----------------------------------------------------------
    async def __aenter__(self) -> FakeServer:
        app = web.Application(client_max_size=MAX_BODY)
        for route in self.routes:
            app.router.add_post(route, self._handle)
        self.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = self.base_url(f"http://127.0.0.1:{port}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def add_routes(self, app: web.Application) -> None:
        """Routes beyond ``routes`` (e.g. a vendor's batch API); default none."""

    def base_url(self, root: str) -> str:
        """The base URL an adapter is given (vendors add path prefixes)."""
        return root

    # -- hooks for vendors ---------------------------------------------------
    def is_stream(self, request: web.Request, body: Any) -> bool:
        """Whether the request asks for a stream."""
        return bool(isinstance(body, dict) and body.get("stream"))

    def canonical(self, body: Any) -> Any:
        """The body as the vendor reads it, before ``check`` and rendering
        (``requests`` keep it as sent): e.g. Gemini's proto JSON takes both
        ``includeThoughts`` and ``include_thoughts``."""
        return body

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        """Refuse what the real vendor refuses (return the error), else ``None``."""
        return None

    def key_error(self, key: str) -> FakeError:
        """The vendor's wrong-key error, quoting ``key`` (see ``echo_key``)."""
        return FakeError(401, {"error": {"message": f"invalid api key {key} ({key[:12]}...)"}})

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        """The whole (non-streamed) reply as JSON."""
        raise NotImplementedError

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        """The streamed reply as raw frames (each written as one network write)."""
        raise NotImplementedError

    def stream_content_type(self) -> str:
        """Content type of a streamed reply."""
        return "text/event-stream"

    def limit_headers(self, state: LimitState) -> dict[str, str]:
        """The vendor's rate-limit headers for ``state`` (default: none)."""
        return {}

    def rate_limit_error(self, state: LimitState) -> FakeError:
        """The vendor's 429 for a request over the limits (``Retry-After`` in seconds)."""
        return FakeError(429, {"error": {"message": "rate limit exceeded"}},
                         {"retry-after": str(math.ceil(state.retry_after))})

    def render_error(self, error: FakeError) -> web.Response:
        """An HTTP error response: ``error.body`` as JSON (bytes as they are),
        under ``application/json`` unless its headers name a ``content-type``
        (a proxy's HTML page)."""
        data = error.body if isinstance(error.body, bytes) else orjson.dumps(error.body)
        headers = {k: v for k, v in error.headers.items() if k.lower() != "content-type"}
        kind = next((v for k, v in error.headers.items() if k.lower() == "content-type"),
                    "application/json")
        response = web.Response(status=error.status, body=data, headers=headers)
        response.headers["Content-Type"] = kind
        return response

    # -- the handler -------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            body = raw
        if self.record:
            self.requests.append(Recorded(request.path, dict(request.headers), body))
        if self.hold is not None:
            await self.hold.wait()
        if self.echo_key:
            return self.render_error(self.key_error(credential(request)))
        body = self.canonical(body)
        refused = self.check(request, body)
        if refused is not None:
            return self.render_error(refused)
        if self.script:
            item = self.script.popleft()
        elif self.default is not None:
            item = self.default
        else:
            return self.render_error(FakeError(500, {"error": {"message": "fake: script empty"}}))
        scripted = item
        if callable(item) and not isinstance(item, FakeReply | FakeError):
            item = item(body)
        if isinstance(item, FakeError):
            return self.render_error(item)
        headers: dict[str, str] = {}
        if self.limits is not None:
            ok, state = self.limits.take(sum(item.usage))
            if not ok:
                if scripted is not self.default:  # the script item is still owed
                    self.script.appendleft(scripted)
                refusal = self.rate_limit_error(state)
                return self.render_error(FakeError(
                    refusal.status, refusal.body,
                    {**self.limit_headers(state), **refusal.headers}))
            headers = self.limit_headers(state)
        if item.latency:
            await asyncio.sleep(item.latency)
        streamed = self.is_stream(request, body)
        if self.record:
            self.transports.append("stream" if streamed else "whole")
        if not streamed and self.force_stream is None:
            return web.json_response(self.render_json(item, body), dumps=_dumps, headers=headers)
        return await self._stream(request, item, body, headers,
                                  None if streamed else self.force_stream)

    async def _stream(
        self, request: web.Request, reply: FakeReply, body: Any,
        headers: Mapping[str, str] | None = None, content_type: str | None = None,
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers=headers)
        response.content_type = content_type or self.stream_content_type()
        await response.prepare(request)
        try:
            for i, frame in enumerate(self.render_events(reply, body)):
                if reply.cut_after is not None and i >= reply.cut_after:
                    # drop the connection without the terminal marker
                    if request.transport is not None:
                        request.transport.close()
                    return response
                await response.write(frame)
                if reply.event_delay:
                    await asyncio.sleep(reply.event_delay)
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            self.streams_aborted += 1  # the client went away mid-stream
            raise
        return response


def credential(request: web.Request) -> str:
    """The credential a request carries (``Authorization: Bearer``, ``x-api-key``,
    ``x-goog-api-key`` or ``api-key``), or ``""``."""
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:]
    for name in ("x-api-key", "x-goog-api-key", "api-key"):
        if request.headers.get(name):
            return request.headers[name]
    return auth


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame (``data`` JSON-encoded unless bytes/str)."""
    if isinstance(data, bytes):
        payload = data
    elif isinstance(data, str):
        payload = data.encode()
    else:
        payload = orjson.dumps(data)
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + payload + b"\n\n"


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    """All items of an async iterator."""
    return [item async for item in stream]
