"""Stream framing shared by every adapter: server-sent events (``iter_sse``)
and NDJSON (``iter_ndjson``), read with incremental UTF-8 decoding across
network chunks (a character split between two TCP reads survives).
Re-exported by ``_http``.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from agentflow.errors import ProviderConnectionError

__all__ = ["SSEEvent", "iter_lines", "iter_ndjson", "iter_sse"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One server-sent event: ``event`` name (``""`` when absent), ``data``
    (multi-line data joined with ``\\n``) and ``id``."""

    event: str
    data: str
    id: str = ""


async def _lines(response: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """Decoded lines (without line endings: LF, CRLF or CR) of a streamed body."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    async for raw in response.content.iter_any():
        buffer += decoder.decode(raw)
        held = buffer.endswith("\r")  # maybe half of a CRLF: decide with the next read
        if held:
            buffer = buffer[:-1]
        buffer = buffer.replace("\r\n", "\n").replace("\r", "\n")
        *complete, buffer = buffer.split("\n")
        if held:
            buffer += "\r"
        for line in complete:
            yield line
    buffer += decoder.decode(b"", final=True)
    if buffer:
        yield buffer.replace("\r", "")


def iter_lines(response: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """Decoded lines of a streamed body (without line endings), for line
    formats whose lines a reader takes one by one (a batch API's JSONL results)."""
    return _lines(response)


async def iter_sse(response: aiohttp.ClientResponse) -> AsyncIterator[SSEEvent]:
    """Server-sent events of ``response`` (WHATWG framing: comments ignored,
    ``data:`` lines joined, an event dispatched on a blank line or at the end)."""
    event, ev_id = "", ""
    data: list[str] = []
    async for line in _lines(response):
        if not line:
            if data:
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
    if data:
        yield SSEEvent(event, "\n".join(data), ev_id)


async def iter_ndjson(response: aiohttp.ClientResponse) -> AsyncIterator[Any]:
    """One parsed JSON value per non-blank line of ``response``.

    Raises:
        ProviderConnectionError: a line is not JSON (a cut or garbled stream).
    """
    async for line in _lines(response):
        if not line.strip():
            continue
        try:
            yield orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ProviderConnectionError(
                f"malformed NDJSON line: {line[:200]!r}", partial=True
            ) from exc
