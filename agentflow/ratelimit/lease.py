"""What an admitted request holds (``RateLease``) and a request waiting in
a governor's queue (``_Waiter``); the governor (``governor``) admits them.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Protocol

from agentflow.ratelimit.formats import RateLimitSnapshot

__all__ = ["RateLease"]


class _Governor(Protocol):
    """What a lease calls on its governor (``governor.RateGovernor``; named
    by its shape so this module need not import that one)."""

    def _observe(self, lease: RateLease, snap: RateLimitSnapshot | None, *, ok: bool) -> None: ...

    def _throttled(self, retry_after: float | None) -> None: ...

    async def _acquire(self, lease: RateLease, *, new: bool) -> None: ...

    def _release(self, lease: RateLease) -> None: ...


@dataclass(eq=False, slots=True)
class _Waiter:
    rank: int
    seq: int
    lease: RateLease
    new: bool
    loop: asyncio.AbstractEventLoop
    event: asyncio.Event = field(default_factory=asyncio.Event)
    admitted: bool = False
    """Taken on the waiter's behalf when the queue moved (``_admit_queued``):
    it only has to return."""

    def wake(self) -> None:
        if asyncio._get_running_loop() is self.loop:  # its own loop: no self-pipe write
            self.event.set()
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            self.loop.call_soon_threadsafe(self.event.set)


class RateLease:
    """One admitted request (held from admission to the end of its reply).

    The HTTP layer calls ``observe`` with each reply's headers, ``throttled``
    on a 429, ``readmit`` before a retry and ``release`` when done.
    """

    __slots__ = ("_governor", "_released", "_unheard", "tokens")

    def __init__(self, governor: _Governor, tokens: float) -> None:
        self._governor = governor
        self.tokens = tokens
        self._unheard = 0
        """Admissions of this lease whose reply the governor has not heard yet."""
        self._released = False

    def observe(self, snapshot: RateLimitSnapshot | None, *, ok: bool) -> None:
        """Correct the governor with a reply's headers (``ok``: a 2xx reply)."""
        self._governor._observe(self, snapshot, ok=ok)

    def throttled(self, retry_after: float | None) -> None:
        """The vendor answered 429: pause admissions, halve the concurrency cap."""
        self._governor._throttled(retry_after)

    async def readmit(self) -> None:
        """Wait for admission again (a retry is a new request to the vendor)."""
        await self._governor._acquire(self, new=False)

    def release(self) -> None:
        """The request is over (idempotent)."""
        if not self._released:
            self._released = True
            self._governor._release(self)
