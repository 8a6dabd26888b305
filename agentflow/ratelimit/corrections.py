"""What a reply's rate-limit headers say about a governor's token bucket:
its capacity (a limit the headers give, never above a given one) and its
level (the ``remaining`` count, less the requests admitted and not yet heard
from). ``RateGovernor`` corrects its request and token buckets with it."""

from __future__ import annotations

from agentflow.ratelimit.bucket import Bucket

__all__ = ["corrected_bucket"]


def corrected_bucket(
    bucket: Bucket | None, given: float | None, limit: float | None,
    remaining: float | None, reset: float | None, since: float, now: float, share: float,
) -> tuple[Bucket | None, float]:
    """The bucket after a reply said ``limit`` / ``remaining`` / ``reset``, and
    the time admissions pause until (``0.0``: no pause; only when no limit is
    known and nothing remains: an empty bucket then only pauses until its reset).

    Args:
        bucket: the bucket now (``None``: no limit known yet).
        given: the limit the governor was given, if any (never raised).
        limit / remaining / reset: from the reply's headers.
        since: admitted and not yet heard from (taken off ``remaining``).
        now: ``time.monotonic()``.
        share: the share of every limit the governor uses.
    """
    if limit is not None and limit > 0:
        capacity = min(limit, given) * share if given else limit * share
        if bucket is None:
            bucket = Bucket(capacity, capacity, now)
        else:
            bucket.refill(now)
            bucket.capacity = capacity
    if remaining is None:
        return bucket, 0.0
    if bucket is None:
        return None, now + reset if remaining <= 0 and reset else 0.0
    bucket.refill(now)
    bucket.level = min(bucket.capacity, remaining * share - since)
    return bucket, 0.0
