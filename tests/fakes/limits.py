"""Rate limits a fake server can enforce: requests and tokens per minute, as
continuously refilled token buckets (the model both OpenAI and Anthropic
document), with the state each reply reports in the vendor's headers.

    fake.limits = FakeLimits(rpm=120, tpm=20_000)

A request is charged one request and the tokens its reply's ``usage``
reports (input + output), when it arrives. A request the buckets cannot
cover is refused with 429 (the vendor's body and ``Retry-After``, whole
seconds, rounded up) and charges nothing. Every reply, 2xx or 429, carries
the vendor's rate-limit headers (``FakeServer.limit_headers``).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

__all__ = ["FakeLimits", "LimitState", "go_duration"]


@dataclass(frozen=True, slots=True)
class LimitState:
    """The buckets after a request (what the headers say).

    ``*_reset``: seconds until the bucket is full again. ``retry_after``: for
    a refused request, seconds until it would fit.
    """

    requests_limit: int | None
    requests_remaining: int | None
    requests_reset: float
    tokens_limit: int | None
    tokens_remaining: int | None
    tokens_reset: float
    retry_after: float = 0.0


@dataclass
class FakeLimits:
    """Requests and tokens per minute (``None``: that dimension is not limited)."""

    rpm: int | None = None
    tpm: int | None = None
    window: float = 60.0
    admitted: int = 0
    refused: int = 0
    tokens: int = 0
    _levels: list[float] = field(default_factory=list)
    _stamp: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _refill(self, now: float) -> None:
        if not self._levels:
            self._levels = [float(self.rpm or 0), float(self.tpm or 0)]
            self._stamp = now
        elapsed, self._stamp = now - self._stamp, now
        for i, limit in enumerate((self.rpm, self.tpm)):
            if limit:
                self._levels[i] = min(float(limit), self._levels[i] + elapsed * limit / self.window)

    def take(self, tokens: int) -> tuple[bool, LimitState]:
        """Charge one request of ``tokens``; ``(admitted, state)``."""
        with self._lock:
            now = time.monotonic()
            self._refill(now)
            wait = 0.0
            for i, (limit, need) in enumerate(((self.rpm, 1), (self.tpm, tokens))):
                if limit:
                    need = min(need, limit)
                    if self._levels[i] < need:
                        wait = max(wait, (need - self._levels[i]) * self.window / limit)
            ok = wait == 0.0
            if ok:
                self._levels[0] -= 1
                self._levels[1] -= tokens
                self.admitted += 1
                self.tokens += tokens
            else:
                self.refused += 1
            return ok, self._state(wait)

    def _state(self, wait: float) -> LimitState:
        def reset(i: int, limit: int | None) -> float:
            return max(0.0, (limit - self._levels[i]) * self.window / limit) if limit else 0.0

        return LimitState(
            self.rpm, max(0, math.floor(self._levels[0])) if self.rpm else None, reset(0, self.rpm),
            self.tpm, max(0, math.floor(self._levels[1])) if self.tpm else None, reset(1, self.tpm),
            retry_after=wait,
        )


def go_duration(seconds: float) -> str:
    """``seconds`` as Go prints a ``time.Duration`` (``12ms``, ``1.5s``, ``6m0s``),
    the format of OpenAI's ``x-ratelimit-reset-*`` headers."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text
