"""Frames between ``agentflow extract`` and its worker processes
(``agentflow.cli.workers``): a 4-byte big-endian length, then a pickle.

Both ends are this package, started from one interpreter and one source
tree, so pickle's trust model holds: nothing else writes to these pipes."""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

__all__ = ["FrameError", "frame", "read_frame"]

_LENGTH = struct.Struct(">I")


class FrameError(Exception):
    """The other end closed its pipe in the middle of a frame."""


def frame(value: Any) -> bytes:
    """``value`` as one frame (length prefix and pickle, protocol 5)."""
    body = pickle.dumps(value, protocol=5)
    return _LENGTH.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """The next frame's value; ``EOFError`` when the pipe ends between frames.

    Raises:
        EOFError: the writer closed the pipe after a whole frame (or before any).
        FrameError: the pipe ended inside a frame.
    """
    try:
        head = await reader.readexactly(_LENGTH.size)
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise FrameError("the pipe ended inside a frame's length") from None
        raise EOFError from None
    (size,) = _LENGTH.unpack(head)
    try:
        body = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise FrameError(f"the pipe ended inside a frame of {size} bytes") from None
    return pickle.loads(body)
