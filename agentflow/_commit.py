"""The commit point of a store's ``save`` (or of any work that cannot be
called back once begun: an approved tool's run), under cancellation.

A save is a transaction with one commit point. Before it, a cancellation
rolls the transaction back and ``save`` raises ``CancelledError`` (nothing
written). Once the commit is under way it cannot be called back, so a
cancellation that arrives then waits for it: ``save`` returns the new
version (the write happened) and the cancellation is delivered again at
the caller's next ``await``. So ``save`` either returns (all written) or
raises (nothing written), whatever the moment of a cancellation.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

__all__ = ["finish", "rearm_cancel", "stray_cancel"]

T = TypeVar("T")


async def finish(future: asyncio.Future[T]) -> tuple[T, bool]:
    """Wait for ``future`` (which runs on its own: a task or a thread's
    future) to its end, whatever cancellations arrive meanwhile.

    Returns its result and whether the waiting task was cancelled while it
    waited (the caller re-delivers that with ``rearm_cancel``).

    Raises:
        whatever ``future`` raised.
    """
    cancelled = False
    while True:
        try:
            return await asyncio.shield(future), cancelled
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                return future.result(), True
            cancelled = True


def rearm_cancel() -> None:
    """Deliver again a cancellation that ``finish`` held back: the current
    task raises ``CancelledError`` at its next ``await``. The task's count of
    cancel requests stays what the canceller made it (``asyncio.timeout`` and
    task groups keep working)."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
        task.cancel()


def stray_cancel(error: BaseException) -> bool:
    """Whether ``error`` is a ``CancelledError`` that no canceller asked for:
    raised by code (a tool awaiting a future someone else cancelled, a library
    that re-raises one) while the current task is not being cancelled
    (``Task.cancelling()`` is 0). Such an error is a failure of that code,
    not a cancellation of the call: treating it as one would end a stream
    silently. ``False`` outside a task and for any other error."""
    if not isinstance(error, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop (another async backend)
        return False
    return task is not None and task.cancelling() == 0
