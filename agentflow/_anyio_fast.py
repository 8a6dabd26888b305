"""anyio memory-object streams without a checkpoint when they can go at once.

anyio's ``send()`` and ``receive()`` always pass a checkpoint (a trip
through the event loop) before they move an item, even when the buffer has
room or holds an item. On a run of millions of documents that is two extra
loop iterations per document for each stream it crosses. These helpers try
the ``*_nowait`` form first and wait (with anyio's checkpoint) only when they
must (``acquire_soon``: a semaphore's slot, the same way), so cancellation
still reaches a task that blocks; a task that does not block reaches a
checkpoint at its next real wait. Same semantics as
``send``/``receive`` otherwise: ``BrokenResourceError``,
``ClosedResourceError`` and ``EndOfStream`` propagate as they would.
(anyio documents the same trade for ``Semaphore(fast_acquire=True)``.)

``produced`` is the consuming side of a producer task and its stream, as
``extract_many`` and ``read_ahead`` use it: items as they come, the
producer stopped when the consumer leaves early.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["acquire_soon", "produced", "receive_soon", "send_soon", "stop_task"]

T = TypeVar("T")


async def send_soon(stream: MemoryObjectSendStream[T], item: T) -> None:
    """Send ``item``: at once when a receiver waits or the buffer has room,
    else wait for room (``stream.send``)."""
    try:
        stream.send_nowait(item)
    except anyio.WouldBlock:
        await stream.send(item)


async def acquire_soon(semaphore: anyio.Semaphore) -> None:
    """Acquire ``semaphore``: at once when it has a slot free
    (``acquire_nowait``: no cancel checkpoint, no frames of anyio's), else
    wait for one (``semaphore.acquire``). Released as usual (``release``)."""
    try:
        semaphore.acquire_nowait()
    except anyio.WouldBlock:
        await semaphore.acquire()


async def receive_soon(stream: MemoryObjectReceiveStream[T]) -> T:
    """The next item: at once when one is buffered, else wait for it
    (``stream.receive``).

    Raises:
        anyio.EndOfStream: every sender closed and nothing is left.
    """
    try:
        return stream.receive_nowait()
    except anyio.WouldBlock:
        return await stream.receive()


async def produced(
    receive: MemoryObjectReceiveStream[T | BaseException], producer: asyncio.Future[None],
) -> AsyncGenerator[T, None]:
    """The items ``producer`` (a task) sends to the stream ``receive`` reads, as
    they come (``receive_soon``); an exception item is raised here. At the
    stream's end ``producer`` is awaited (what it raised is raised).

    Closed early (``break``, an exception in the consumer, cancellation:
    wrap it in ``contextlib.aclosing``), ``producer`` is cancelled and waited
    for (``stop_task``). ``receive`` is closed in every case, so a producer
    still sending meets ``BrokenResourceError``.
    """
    finished = False
    try:
        while True:
            try:
                item = await receive_soon(receive)
            except anyio.EndOfStream:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
        finished = True
        await producer
    finally:
        try:
            if not finished or not producer.done():
                await stop_task(producer)
        finally:
            receive.close()


async def stop_task(task: asyncio.Future[None]) -> None:
    """Cancel ``task`` and wait until it has stopped, even when the waiting
    task is itself cancelled meanwhile (that cancellation is re-raised after);
    what the stopped task raised is not ours to raise: its consumer left."""
    task.cancel()
    interrupted: asyncio.CancelledError | None = None
    with anyio.CancelScope(shield=True):  # an enclosing anyio scope's cancel waits for this
        while not task.done():
            try:
                await asyncio.wait([task])
            except asyncio.CancelledError as exc:  # a plain task.cancel() of the consumer
                interrupted = exc
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" at shutdown
    if interrupted is not None:
        raise interrupted
