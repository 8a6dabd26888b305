"""The token bucket a governor keeps per limit (requests, tokens): refilled
continuously over the vendors' one-minute window."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WINDOW_S", "Bucket"]

WINDOW_S = 60.0
"""The window of the vendors' limits (requests and tokens per minute), seconds."""


@dataclass(slots=True)
class Bucket:
    """A continuously refilled bucket (capacity = limit * share)."""

    capacity: float
    level: float
    stamp: float

    @property
    def rate(self) -> float:
        """Units refilled per second: the capacity over ``WINDOW_S``."""
        return self.capacity / WINDOW_S

    def refill(self, now: float) -> None:
        """Add what flowed in since the last refill (at ``rate``, up to the
        capacity) and move the stamp to ``now`` (a clock reading in seconds;
        an earlier one changes nothing)."""
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def delay(self, need: float, now: float) -> float:
        """Seconds until ``need`` (capped at the capacity) is in the bucket."""
        self.refill(now)
        need = min(need, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate
