"""The most bytes one reply may hold (``HttpSettings.max_reply_bytes``).

A server that streams without end, or answers with a body no model reply is
(a 2 GB page, a decompression bomb), would fill the memory: every reader of
a reply (a whole body read, an event stream, an error body) reads it
through aiohttp's ``StreamReader``, so the cap is kept there, at the one
place bytes arrive (``cap_reply``): past the limit the reader fails with
``ReplyTooLargeError`` (naming the limit) and the connection is closed.
Bytes are counted as they arrive after decompression (``Content-Encoding``),
so a small compressed body that inflates past the limit is cut off too.
"""

from __future__ import annotations

import functools
from typing import Any

import aiohttp
from aiohttp.streams import StreamReader

from agentflow.errors import ReplyTooLargeError

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "cap_reply"]

DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024
"""64 MiB: far above any model reply (a 128k-token reply with logprobs is a
few MiB; an inline generated image tens of MiB at most), far below what
would exhaust a machine's memory."""


def cap_reply(response: aiohttp.ClientResponse, limit: int | None, vendor: str) -> None:
    """Fail ``response``'s body readers with ``ReplyTooLargeError`` once
    more than ``limit`` bytes arrived (``None``: no limit). A body aiohttp
    knows to be empty (no ``StreamReader`` of its own) needs no cap."""
    content = response.content
    if limit is None or type(content) is not StreamReader:
        return
    content.__class__ = _capped_reader(limit, vendor)
    if content.total_bytes > limit:  # arrived with the headers, before the cap
        _cut(content, limit, vendor)


def _cut(reader: StreamReader, limit: int, vendor: str) -> None:
    """Fail ``reader`` past ``limit`` (its next read raises; what it holds,
    one network read past the limit at most, is read first by a reader that
    was woken for it) and close the connection: nothing more arrives."""
    reader.set_exception(ReplyTooLargeError(
        f"the reply from {vendor} passed {limit:,} bytes (HttpSettings.max_reply_bytes): "
        f"cut off and its connection closed; raise the limit if such replies are expected",
        limit=limit, vendor=vendor))
    transport = reader._protocol.transport
    if transport is not None:
        transport.close()


@functools.lru_cache(maxsize=64)
def _capped_reader(limit: int, vendor: str) -> type[StreamReader]:
    """A ``StreamReader`` of the same layout (``__slots__ = ()``: an existing
    reader takes it as its class) that counts what arrives against ``limit``."""

    class CappedReader(StreamReader):
        __slots__ = ()

        def feed_data(self, data: bytes, *args: Any) -> bool:
            if isinstance(self._exception, ReplyTooLargeError):
                return False  # cut off: what still arrives is dropped
            super().feed_data(data, *args)
            if self.total_bytes > limit:
                _cut(self, limit, vendor)
            return False

        def set_exception(self, exc: BaseException, *args: Any) -> None:
            cut = self._exception
            if isinstance(cut, ReplyTooLargeError):  # the cause stays (the connection's
                super().set_exception(cut)  # loss wakes a reader with it)
            else:
                super().set_exception(exc, *args)

    return CappedReader
