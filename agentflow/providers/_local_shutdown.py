"""Stopping the embedded llama.cpp server only once no request of ours is in flight.

xllamacpp's ``Server`` is stopped by dropping its last reference: its C++
destructor (``~Server()``) terminates the task loop, stops the HTTP server and
joins its threads, all while holding the GIL (it runs in the Cython object's
deallocation). An HTTP worker that is still streaming a reply finishes only
when it sees its connection closed or its task end. The client of that
connection is this process's own event loop, which cannot run while the
destructor holds the GIL: a request still open at that moment can only end
on the server's side, so the stop depends on llama.cpp's internals and on
timing (a loaded machine stretches every step). Closing the HTTP session is
not enough on its own: asyncio closes a transport's socket on the loop's next
iteration, after ``aclose()`` has returned control.

``InFlight`` counts the model's open streams; ``LocalModel.aclose()`` closes
the session, then waits until the count is 0 (each stream ends with a
connection error once its socket is really closed, or with its reply) before
dropping the server, bounded by ``STOP_WAIT`` seconds so that a stream that
never ends cannot keep ``aclose()`` from returning.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

__all__ = ["STOP_WAIT", "InFlight"]

STOP_WAIT = 10.0
"""Seconds ``aclose()`` waits for open streams to end before stopping the server."""


class InFlight:
    """A count of open requests (``with in_flight: ...``) that can be awaited to reach 0."""

    def __init__(self) -> None:
        self.count = 0
        self._idle: asyncio.Event | None = None

    def __enter__(self) -> InFlight:
        self.count += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.count -= 1
        if self.count == 0 and self._idle is not None:
            self._idle.set()

    async def drained(self, seconds: float) -> bool:
        """Wait until no request is open, at most ``seconds``.

        Returns:
            True when none is open, False when the time ran out first.
        """
        if self.count == 0:
            return True
        self._idle = asyncio.Event()
        try:
            await asyncio.wait_for(self._idle.wait(), seconds)
        except TimeoutError:
            return self.count == 0
        finally:
            self._idle = None
        return True
