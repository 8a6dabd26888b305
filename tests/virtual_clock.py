"""An event loop on a virtual clock, for tests of code that waits on timers.

``run_virtual(main())`` runs ``main`` on a loop whose ``time()`` stands
still while callbacks run and jumps to the next timer whenever nothing else
is ready: a test of a 0.5 s wait takes no real time, and finds exactly
0.5 s gone on ``loop.time()`` whatever the machine's load (elapsed-time
targets are the benchmarks' business). Code under test reads the same
clock (e.g. ``RateGovernor(clock=asyncio.get_running_loop().time)``).

Only for code that waits on timers and in-loop events: a jump does not wait
for sockets or threads, so a real server's reply would come "late".
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["VirtualClockLoop", "run_virtual"]

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """Polls without blocking; where the loop would sleep until its next
    timer, moves the loop's clock there instead."""

    def __init__(self, loop: VirtualClockLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        events: list[Any] = super().select(0)
        if events or (timeout is not None and timeout <= 0):
            return events
        if timeout is None:  # no timer at all: only I/O or another thread can wake it
            return super().select(None)  # type: ignore[no-any-return]
        self._loop.advance(timeout)
        return events


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose clock moves only to the next timer, when idle."""

    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        """The virtual clock (seconds since the loop was made)."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self._now += seconds


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new ``VirtualClockLoop`` and close it."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(main)
