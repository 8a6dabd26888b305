"""Frames between ``agentflow extract`` and its worker processes
(``agentflow.cli.workers``): a 4-byte big-endian length, then a pickle.

Both ends are this package, started from one interpreter and one source
tree, so pickle's trust model holds: nothing else writes to these pipes."""

from __future__ import annotations

import asyncio
import pickle
import struct
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["FrameError", "frame", "frames"]

_LENGTH = struct.Struct(">I")


class FrameError(Exception):
    """The other end closed its pipe in the middle of a frame."""


def frame(value: Any) -> bytes:
    """``value`` as one frame (length prefix and pickle, protocol 5)."""
    body = pickle.dumps(value, protocol=5)
    return _LENGTH.pack(len(body)) + body


async def frames(reader: asyncio.StreamReader, chunk: int = 1 << 16) -> AsyncIterator[Any]:
    """Every frame's value until the pipe ends, read ``chunk`` bytes at a
    time (one wait for all the frames a read brings, not two per frame).

    Raises:
        FrameError: the pipe ended inside a frame.
    """
    buffer = bytearray()
    start = 0
    unpack, size, loads = _LENGTH.unpack_from, _LENGTH.size, pickle.loads
    while True:
        data = await reader.read(chunk)
        if not data:
            if start < len(buffer):
                raise FrameError(f"the pipe ended inside a frame ({len(buffer) - start} bytes "
                                 "of it came)")
            return
        if start:
            del buffer[:start]
            start = 0
        buffer += data
        end = len(buffer)
        while end - start >= size:
            (length,) = unpack(buffer, start)
            if end - start - size < length:
                if length > chunk:  # a large frame: read the rest of it at once
                    rest = length - (end - start - size)
                    try:
                        buffer += await reader.readexactly(rest)
                    except asyncio.IncompleteReadError:
                        raise FrameError(f"the pipe ended inside a frame of {length} bytes"
                                         ) from None
                    end = len(buffer)
                    continue
                break
            body_start = start + size
            start = body_start + length
            with memoryview(buffer) as view:
                value = loads(view[body_start:start])
            yield value
