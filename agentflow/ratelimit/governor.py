"""The rate governor's machinery (``agentflow.ratelimit`` is its public face
and explains how admission works): ``RateGovernor`` and its queue of
waiters, and the process share a new governor starts with
(``set_default_share``). Request priority (``priority``), the token bucket
(``bucket``) and the lease a request holds with its queue entry (``lease``)
are modules of their own; this one re-exports ``Priority``,
``request_priority``, ``current_priority``, ``RateLease`` and ``WINDOW_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable

from agentflow._arguments import check_int, check_number
from agentflow.ratelimit.bucket import WINDOW_S, Bucket
from agentflow.ratelimit.corrections import corrected_bucket
from agentflow.ratelimit.formats import RateLimitSnapshot
from agentflow.ratelimit.lease import RateLease, _Waiter
from agentflow.ratelimit.priority import (
    PRIORITY,
    RANK,
    Priority,
    current_priority,
    request_priority,
)

__all__ = [
    "WINDOW_S",
    "Priority",
    "RateGovernor",
    "RateLease",
    "current_priority",
    "request_priority",
    "set_default_share",
]

_BATCH_RANK = RANK["batch"]

_default_share = 1.0
"""The share of every limit a new governor uses (``set_default_share``)."""


def set_default_share(share: float) -> None:
    """Make governors created from now on use ``share`` of every limit
    (``agentflow.ratelimit.set_process_share`` checks it and rescales the
    governors that exist)."""
    global _default_share
    _default_share = share


class RateGovernor:
    """Admission control for one account's limits on one model family.

    Args:
        name: shown in ``repr`` and logs (never holds a key).
        rpm / tpm: known limits (requests / tokens per minute); headers fill
            in the ones not given, and never raise a given one.
        typical_output_tokens: the reply part of a request's token estimate.
        live_reserve: fraction (0..1) of each bucket batch requests leave to live ones.
        slow_start: before any limit is known, one request at a time.
        clock: the clock its buckets, pauses and waits read, in seconds
            (``time.monotonic``; a test gives its event loop's virtual one).
            Waits run on the event loop's own clock: a clock other than
            ``time.monotonic`` must be ``loop.time`` of the loop it serves.

    Raises:
        ArgumentValueError: a limit <= 0 or a reserve outside [0, 1) (a
            ``ValueError``); ``ArgumentTypeError`` (a ``TypeError``) for a
            limit or reserve that is no number.
    """

    def __init__(
        self,
        name: str = "",
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        typical_output_tokens: int = 256,
        live_reserve: float = 0.0,
        slow_start: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for limit, value in (("rpm", rpm), ("tpm", tpm)):
            check_number(limit, value, "a number > 0", lambda v: v > 0, optional=True)
        check_number("live_reserve", live_reserve, "a number in [0, 1)",
                     lambda r: 0.0 <= r < 1.0)
        check_int("typical_output_tokens", typical_output_tokens, 0)
        self.name = name
        self.typical_output_tokens = typical_output_tokens
        self.live_reserve = live_reserve
        self._lock = threading.Lock()
        self._clock = clock
        self._rpm, self._tpm = rpm, tpm
        self._share = _default_share
        now = clock()
        self._req = Bucket(rpm * self._share, rpm * self._share, now) if rpm else None
        self._tok = Bucket(tpm * self._share, tpm * self._share, now) if tpm else None
        self._known = not slow_start or bool(rpm or tpm)
        self._pause_until = 0.0
        self._cap: float | None = None
        self._in_flight = 0
        self._unheard_req = 0.0
        self._unheard_tok = 0.0
        self._queue: list[tuple[int, int, _Waiter]] = []
        self._seq = itertools.count()
        self.admitted = 0
        """Requests admitted (retries included)."""
        self.throttles = 0
        """429 replies seen."""
        self.waited_s = 0.0
        """Seconds requests spent waiting for admission, summed."""

    def __repr__(self) -> str:
        return (f"RateGovernor({self.name!r}, rpm={self.limits[0]}, tpm={self.limits[1]}, "
                f"in_flight={self._in_flight})")

    @property
    def limits(self) -> tuple[float | None, float | None]:
        """``(requests, tokens)`` per minute this governor works with (after its share)."""
        return (self._req.capacity if self._req else None,
                self._tok.capacity if self._tok else None)

    @property
    def queued(self) -> int:
        """Requests waiting for admission now (a request that must wait is
        queued in its first step)."""
        return len(self._queue)

    @property
    def concurrency_cap(self) -> float | None:
        """The current cap on requests in flight (``None``: none, until a 429)."""
        return self._cap

    # -- admission -----------------------------------------------------------
    def admit_now(self, tokens: float) -> RateLease | None:
        """The lease of a request of ``tokens`` estimated tokens that may go out
        at once (nobody queued, room now: ``admit`` would not wait), or
        ``None``: then ``await admit(tokens)``. No coroutine for the common case."""
        lease = RateLease(self, tokens if tokens > 0.0 else 0.0)  # NaN -> 0.0, as admit
        with self._lock:
            if self._queue:
                return None
            if (self._req is None and self._tok is None and self._cap is None
                    and self._known):  # nothing limits it: no bucket, cap or priority to read
                if self._pause_until and self._clock() < self._pause_until:
                    return None
                self._count(lease, new=True)
                return lease
            return lease if self._take(lease, RANK[PRIORITY.get()], new=True) == 0.0 else None

    async def admit(self, tokens: float) -> RateLease:
        """Wait until a request of ``tokens`` estimated tokens may go out.

        Returns:
            The lease; the caller must ``release`` it when the reply is over.
        """
        lease = RateLease(self, tokens if tokens > 0.0 else 0.0)  # NaN -> 0.0, as max gave
        await self._acquire(lease, new=True)
        return lease

    async def _acquire(self, lease: RateLease, *, new: bool) -> None:
        # a retry already holds a concurrency slot: it goes before every new request
        rank = RANK[PRIORITY.get()] if new else -1  # current_priority(), inline
        if self._take_now(lease, rank, new=new):
            return
        waiter = _Waiter(rank, next(self._seq), lease, new, asyncio.get_running_loop())
        start = self._clock()
        with self._lock:
            heapq.heappush(self._queue, (waiter.rank, waiter.seq, waiter))
            if self._queue[0][2] is waiter:
                waiter.event.set()
        try:
            while True:
                waiter.event.clear()
                with self._lock:
                    delay = 0.0 if waiter.admitted else self._try_take(waiter, lease, new=new)
                    if delay == 0.0:
                        self.waited_s += self._clock() - start
                        return
                if math.isinf(delay):
                    await waiter.event.wait()
                else:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):
                            await waiter.event.wait()
        except BaseException:
            with self._lock:
                admitted = waiter.admitted
                if not admitted:
                    self._remove(waiter)
            if admitted and new:  # taken on its behalf, but nobody will hold the lease
                lease.release()
            raise

    def _take_now(self, lease: RateLease, rank: int, *, new: bool) -> bool:
        """Whether ``lease``'s request was taken at once: nobody queued and
        room now (the fast path of ``admit_now`` and ``_acquire``: no waiter,
        no event, no heap)."""
        with self._lock:
            return not self._queue and self._take(lease, rank, new=new) == 0.0

    def _try_take(self, waiter: _Waiter, lease: RateLease, *, new: bool) -> float:
        """0 and the request taken (``waiter`` leaves the queue), or seconds to
        wait (``inf``: until woken); lock held."""
        if self._queue[0][2] is not waiter:
            return math.inf
        delay = self._take(lease, waiter.rank, new=new)
        if delay == 0.0:
            self._remove(waiter)
        return delay

    def _take(self, lease: RateLease, rank: int, *, new: bool) -> float:
        """0 and ``lease``'s request taken, or seconds to wait (``inf``: until
        woken); the caller is first in line; lock held."""
        now = self._clock()
        if now < self._pause_until:
            return self._pause_until - now
        if new and ((not self._known and self._in_flight >= 1)
                    or (self._cap is not None and self._in_flight >= self._cap)):
            return math.inf
        req, tok = self._req, self._tok
        if req is not None or tok is not None:  # a limit known: its buckets decide
            reserve = self.live_reserve if rank == _BATCH_RANK else 0.0
            delay = 0.0
            if req is not None:
                delay = req.delay(1.0 + reserve * req.capacity, now)
            if tok is not None:
                delay = max(delay, tok.delay(lease.tokens + reserve * tok.capacity, now))
            if delay > 0.0:
                return delay
            if req is not None:
                req.level -= 1.0
            if tok is not None:
                tok.level -= lease.tokens
        self._count(lease, new=new)
        return 0.0

    def _count(self, lease: RateLease, *, new: bool) -> None:
        """Count ``lease``'s request as admitted and unheard (lock held)."""
        self._unheard_req += 1.0
        self._unheard_tok += lease.tokens
        lease._unheard += 1
        self.admitted += 1
        if new:
            self._in_flight += 1

    def _remove(self, waiter: _Waiter) -> None:
        """Drop ``waiter`` from the queue and move the queue on (lock held)."""
        if self._queue and self._queue[0][2] is waiter:  # the head, as a taken request is
            heapq.heappop(self._queue)
            self._admit_queued()
            return
        self._queue = [item for item in self._queue if item[2] is not waiter]
        heapq.heapify(self._queue)  # not the head: the head stays, nobody new to wake

    def _admit_queued(self) -> None:
        """Admit the waiters at the head of the queue that may go now, in
        queue order, on their behalf (each woken only to return), and wake
        the first that may not, to wait for its own delay (lock held).

        Admitting them here rather than one by one as each wakes keeps a
        queue formed once (at a slow start, every request behind the first)
        from lasting: new requests queue behind a non-empty one, and a chain
        of wake-ups, one loop turn each, would never catch up with them."""
        queue = self._queue
        while queue:
            waiter = queue[0][2]
            if self._take(waiter.lease, waiter.rank, new=waiter.new) != 0.0:
                waiter.wake()
                return
            heapq.heappop(queue)
            waiter.admitted = True
            waiter.wake()

    def _wake_head(self) -> None:
        if self._queue:
            self._admit_queued()

    # -- feedback -----------------------------------------------------------
    def _hear(self, lease: RateLease, admissions: int) -> None:
        """Stop counting ``admissions`` of ``lease`` as unheard (lock held)."""
        n = min(admissions, lease._unheard)
        if n:
            lease._unheard -= n
            self._unheard_req = max(0.0, self._unheard_req - n)
            self._unheard_tok = max(0.0, self._unheard_tok - n * lease.tokens)

    def _release(self, lease: RateLease) -> None:
        with self._lock:
            if lease._unheard:  # a request that failed unheard (a heard one: nothing to take off)
                self._hear(lease, lease._unheard)
            n = self._in_flight
            self._in_flight = n - 1 if n > 0 else 0
            if self._queue:  # _wake_head, inline: nobody waits in the common case
                self._admit_queued()

    def _observe(self, lease: RateLease, snap: RateLimitSnapshot | None, *, ok: bool) -> None:
        with self._lock:
            if ok and self._cap is not None:
                self._cap += 1.0 / self._cap
            if lease._unheard:  # _hear(lease, 1), inline
                lease._unheard -= 1
                self._unheard_req = max(0.0, self._unheard_req - 1)
                self._unheard_tok = max(0.0, self._unheard_tok - lease.tokens)
            if snap is not None:
                # The reply's ``remaining`` counts the requests the vendor saw before
                # this one, in the vendor's order, which under load is not the order
                # of admission here. Every other request admitted and not yet heard
                # from may be missing from it, so all of them are taken off: at worst
                # a request is counted twice (slower, never a 429).
                now = self._clock()
                share = self._share
                self._req, req_pause = corrected_bucket(
                    self._req, self._rpm, snap.requests_limit, snap.requests_remaining,
                    snap.requests_reset, self._unheard_req, now, share)
                self._tok, tok_pause = corrected_bucket(
                    self._tok, self._tpm, snap.tokens_limit, snap.tokens_remaining,
                    snap.tokens_reset, self._unheard_tok, now, share)
                self._pause_until = max(self._pause_until, req_pause, tok_pause)
            self._known = True
            if self._queue:  # _wake_head, inline
                self._admit_queued()

    def _reshare(self, share: float) -> None:
        with self._lock:
            now = self._clock()
            for bucket in (self._req, self._tok):
                if bucket is not None:
                    bucket.refill(now)
                    bucket.capacity *= share / self._share
                    bucket.level = min(bucket.capacity, bucket.level * share / self._share)
            self._share = share
            self._wake_head()

    def _throttled(self, retry_after: float | None) -> None:
        with self._lock:
            now = self._clock()
            self.throttles += 1
            self._pause_until = max(self._pause_until,
                                    now + (1.0 if retry_after is None else retry_after))
            self._cap = max(1.0, (self._in_flight or 1) / 2)
            for bucket in (self._req, self._tok):
                if bucket is not None:
                    bucket.refill(now)
                    bucket.level = min(bucket.level, 0.0)
            self._known = True
            self._wake_head()
