"""Stream framing shared by every adapter: server-sent events (``iter_sse``)
and NDJSON (``iter_ndjson``), read with incremental UTF-8 decoding across
network chunks (a character split between two TCP reads survives).
Re-exported by ``_http``.

A whole reply may come as a stream anyway: some proxies and gateways force
streaming on every request and answer ``stream: false`` with server-sent
events (``Content-Type: text/event-stream``, or a mislabelled body that
starts with ``data:``), or, for NDJSON vendors (Ollama), one JSON object per
line. ``sse_response`` / ``sse_body`` / ``ndjson_body`` tell such a reply
from a JSON body, and ``BufferedBody`` lets a stream reader read a body that
was already read whole. ``has_event`` tells whether the start of a stream
holds an event (the HTTP layer reads that far before it hands a stream on:
one with none is no reply), and ``HeadedResponse`` gives readers the
response with that start read again first.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from agentflow.errors import ProviderConnectionError, ReplyTooLargeError

__all__ = [
    "BufferedBody",
    "HeadedResponse",
    "SSEEvent",
    "first_payload",
    "has_event",
    "iter_lines",
    "iter_ndjson",
    "iter_sse",
    "ndjson_body",
    "sse_body",
    "sse_response",
]

_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")
_CONTENT_LINE = re.compile(rb"^[ \t]*[^\s:]", re.M)
"""A line that is neither blank nor an SSE comment (``:``...)."""


def has_event(head: bytes) -> bool:
    """Whether ``head``, the start of a streamed body, holds more than a
    byte-order mark, blank lines and SSE comments (keep-alives): a line of
    an event (or an NDJSON line, or anything a reader will refuse)."""
    return _CONTENT_LINE.search(head.removeprefix(b"\xef\xbb\xbf")) is not None


def first_payload(head: bytes, ndjson: bool) -> bytes | None:
    """The payload of the first event of ``head``, the start of a streamed
    body: the first SSE event's ``data`` (its lines joined; comments, blank
    lines and a block of other fields only are no event), or the first NDJSON
    line (``ndjson``); ``None`` while ``head`` does not hold it whole."""
    text = head.removeprefix(b"\xef\xbb\xbf")
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = text.split(b"\n")[:-1]  # (the last is not ended yet)
    if ndjson:
        return next((line for line in lines if line.strip()), None)
    data: list[bytes] = []
    for line in lines:
        if not line:
            if data and (len(data) > 1 or data[0]):
                return b"\n".join(data)
            data = []
        elif line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
    return None


def sse_response(response: aiohttp.ClientResponse) -> bool:
    """Whether ``response`` says it is an event stream (``Content-Type:
    text/event-stream``), whatever the request asked for."""
    return response.content_type == "text/event-stream"


def sse_body(body: bytes) -> bool:
    """Whether ``body`` (a whole reply, read) is server-sent events rather than
    JSON: it starts (after a byte-order mark and blank space) with an SSE
    field (``data:``, ``event:``, ``id:``, ``retry:``) or comment (``:``)."""
    head = body[:64].lstrip(b"\xef\xbb\xbf").lstrip()
    return head.startswith(_SSE_FIELDS)


def ndjson_body(body: bytes) -> bool:
    """Whether ``body`` (a whole reply, read) is two or more JSON objects, one a
    line (an NDJSON stream) rather than one JSON document."""
    text = body.strip()
    if not text.startswith(b"{") or b"\n" not in text:
        return False
    first, _, rest = text.partition(b"\n")
    if not rest.strip():
        return False
    try:
        return isinstance(orjson.loads(first), dict)
    except orjson.JSONDecodeError:
        return False


class _BufferedContent:
    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def iter_any(self) -> AsyncIterator[bytes]:
        if self._body:
            yield self._body


class BufferedBody:
    """A body already read, in the shape the stream readers take
    (``.content.iter_any()``, ``.content_type``, ``.headers``): a stream that
    came as the answer to a whole-reply request is read by the same reader
    as any stream."""

    __slots__ = ("content", "content_type", "headers")

    def __init__(self, body: bytes, response: aiohttp.ClientResponse) -> None:
        self.content = _BufferedContent(body)
        self.content_type = response.content_type
        self.headers = response.headers


class _HeadedContent:
    """A response's body stream whose first bytes (``head``) were read already."""

    __slots__ = ("_head", "_rest")

    def __init__(self, head: bytes, rest: aiohttp.StreamReader) -> None:
        self._head = head
        self._rest = rest

    async def iter_any(self) -> AsyncIterator[bytes]:
        head, self._head = self._head, b""
        if head:
            yield head
        async for raw in self._rest.iter_any():
            yield raw

    async def read(self, n: int = -1) -> bytes:
        head, self._head = self._head, b""
        if n < 0:
            return head + await self._rest.read()
        if head:
            self._head = head[n:]
            return head[:n]
        return await self._rest.read(n)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rest, name)


class HeadedResponse:
    """``response`` whose body's first bytes (``head``) the HTTP layer read
    (to see that an event stream holds an event, ``_sending``): the same
    response to every reader (``.content.iter_any()`` and ``.read()`` start
    with ``head``; every other attribute is the response's own)."""

    __slots__ = ("_response", "content")

    def __init__(self, head: bytes, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.content = _HeadedContent(head, response.content)

    async def read(self) -> bytes:
        """The whole body, ``head`` first."""
        return await self.content.read()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One server-sent event: ``event`` name (``""`` when absent), ``data``
    (multi-line data joined with ``\\n``) and ``id``."""

    event: str
    data: str
    id: str = ""


class _LineSplitter:
    """Decoded lines (without line endings: LF, CRLF or CR) of a body fed in
    network chunks: ``feed`` each read, then ``close``. A plain object, so a
    reader loops over the lines of a read inline instead of resuming one more
    async generator per line."""

    __slots__ = ("_buffer", "_decoder")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    @property
    def pending(self) -> int:
        """The characters of the line not ended yet (a reader's line limit
        checks them before the line ends)."""
        return len(self._buffer)

    def feed(self, raw: bytes) -> list[str]:
        """The lines ``raw`` completes."""
        buffer = self._buffer + self._decoder.decode(raw)
        held = buffer.endswith("\r")  # maybe half of a CRLF: decide with the next read
        if held:
            buffer = buffer[:-1]
        if "\r" in buffer:
            buffer = buffer.replace("\r\n", "\n").replace("\r", "\n")
        *complete, buffer = buffer.split("\n")
        self._buffer = buffer + "\r" if held else buffer
        return complete

    def close(self) -> list[str]:
        """The last line, when the body did not end with a line ending."""
        buffer = self._buffer + self._decoder.decode(b"", final=True)
        self._buffer = ""
        return [buffer.replace("\r", "")] if buffer else []


async def _lines(response: aiohttp.ClientResponse, limit: int | None, vendor: str
                 ) -> AsyncIterator[str]:
    """Decoded lines (without line endings: LF, CRLF or CR) of a streamed body,
    none longer than ``limit`` characters (``None``: no limit)."""
    splitter = _LineSplitter()
    async for raw in response.content.iter_any():
        lines = splitter.feed(raw)
        if limit is not None and (splitter.pending > limit
                                  or any(len(line) > limit for line in lines)):
            response.close()  # (nothing more of it is read)
            raise ReplyTooLargeError(
                f"a line of the reply from {vendor} passed {limit:,} characters "
                "(HttpSettings.max_reply_bytes: one line is one reply); cut off and its "
                "connection closed", limit=limit, vendor=vendor)
        for line in lines:
            yield line
    for line in splitter.close():
        yield line


def iter_lines(response: aiohttp.ClientResponse, limit: int | None = None,
               vendor: str = "") -> AsyncIterator[str]:
    """Decoded lines of a streamed body (without line endings), for line
    formats whose lines a reader takes one by one (a batch API's JSONL
    results: the file of a large batch may be far larger than one reply, and
    is never held whole). ``limit``: the most characters one line may hold
    (one line is one reply: ``HttpSettings.max_reply_bytes``), else
    ``ReplyTooLargeError``, the connection closed: a line that never ends
    would fill the memory.

    Raises:
        ReplyTooLargeError: a line (or the unended rest) passed ``limit``.
    """
    return _lines(response, limit, vendor)


async def iter_sse(response: aiohttp.ClientResponse, *, bare_json: bool = False
                   ) -> AsyncGenerator[SSEEvent, None]:
    """Server-sent events of ``response`` (WHATWG framing: one leading
    byte-order mark and comments ignored, ``data:`` lines joined, an event
    dispatched on a blank line or at the end, never with empty data: a bare
    ``data:`` keep-alive frame, which relays and gateways send, is no event,
    openai/openai-go#621, NousResearch/hermes-agent#111887).
    One async generator: the lines of each network read are split inline.

    ``bare_json``: JSON written into the stream without ``data:`` (lines
    WHATWG framing ignores as unknown fields: Gemini sends an error object
    so, spread over lines, googleapis/python-genai ``_api_client.py``: "When
    API returns an error message, it comes line by line") is gathered from
    a line starting with ``{`` or ``[`` until the lines read parse, and
    yielded as an event of its own (``event="bare"``); what never parses is
    yielded at the end, for the reader to refuse.

    An ``error:`` line (no WHATWG field: llama.cpp's ``llama-server`` builds
    through 2025 write a failure after the 200 so, ``error: {"code": 400,
    "message": ..., "type": "exceed_context_size_error"}`` then ``data:
    [DONE]``; coddy-project/coddy-agent#106) is read as ``event: error``
    with its value as data, so the reader raises the server's own error
    instead of an empty or truncated reply that hid it."""
    event, ev_id = "", ""
    data: list[str] = []
    bare: list[str] = []
    splitter = _LineSplitter()
    reads = response.content.iter_any()
    first = True
    while True:
        raw = await anext(reads, None)
        lines = splitter.feed(raw) if raw is not None else splitter.close()
        if first and lines:
            first = False
            lines[0] = lines[0].removeprefix("\ufeff")
        for line in lines:
            if not line:
                if data and (len(data) > 1 or data[0]):
                    yield SSEEvent(event, "\n".join(data), ev_id)
                event, data = "", []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
            elif name == "id":
                ev_id = value
            elif name == "error":  # llama.cpp's own field: an ``event: error`` with this data
                event = "error"
                data.append(value)
            elif bare_json and (bare or line.lstrip().startswith(("{", "["))):
                bare.append(line)  # (only a line of no known field comes here)
                if line.rstrip().endswith(("}", "]")):
                    text = "\n".join(bare)
                    try:
                        orjson.loads(text)
                    except orjson.JSONDecodeError:
                        continue
                    bare = []
                    yield SSEEvent("bare", text)
        if raw is None:
            break
    if data and (len(data) > 1 or data[0]):
        yield SSEEvent(event, "\n".join(data), ev_id)
    if bare:
        yield SSEEvent("bare", "\n".join(bare))


async def iter_ndjson(response: aiohttp.ClientResponse) -> AsyncIterator[Any]:
    """One parsed JSON value per non-blank line of ``response``.

    Raises:
        ProviderConnectionError: a line is not JSON (a cut or garbled stream).
    """
    splitter = _LineSplitter()
    reads = response.content.iter_any()
    while True:
        raw = await anext(reads, None)
        for line in splitter.feed(raw) if raw is not None else splitter.close():
            if not line.strip():
                continue
            try:
                yield orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise ProviderConnectionError(
                    f"malformed NDJSON line: {line[:200]!r}", partial=True
                ) from exc
        if raw is None:
            break
