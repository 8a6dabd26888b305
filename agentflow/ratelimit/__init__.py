"""Rate governor: admission control that keeps a process near a vendor's rate
limits without 429 storms.

One ``RateGovernor`` exists per (vendor, API root, key, model family) in a
process (``governor_for``), shared by every agent, batch and model object
that talks to that account, so two batches and a web handler in one process
see one budget. The HTTP layer asks it before each request attempt
(``admit``), tells it what the reply's rate-limit headers said
(``Lease.observe``) and when the vendor answered 429 (``Lease.throttled``).

How admission works:

* **Two token buckets**, requests and tokens. Capacity is the vendor's limit
  (from the ``*-limit`` headers, or set by the caller), refilled continuously
  at ``limit / 60`` per second: the vendors document per-minute limits
  (RPM, TPM) replenished continuously (OpenAI: "rate limits in headers",
  platform.openai.com/docs/guides/rate-limits; Anthropic: token bucket,
  docs.anthropic.com/en/api/rate-limits). A request is admitted when one
  request and its estimated tokens are in both buckets.
* **Headers correct the model.** Each reply's ``*-remaining`` value is the
  server's own level after that request; the local level becomes that value
  minus what this process admitted since (requests the server may not have
  counted yet). Estimation errors therefore never accumulate.
* **429 / Retry-After** pauses every admission of the governor for the
  server's wait (capped by the HTTP settings), and the concurrency cap is
  halved (multiplicative decrease); each success adds ``1/cap`` (additive
  increase). Before any limit is known, one request at a time goes out
  (slow start) until a reply tells what the limits are.
* **Priority.** Waiters are served retries first (they already hold a
  slot), then live, then batch, each in arrival order. ``extract_many`` runs
  its calls with ``request_priority("batch")``; everything else is live by
  default, so a web request overtakes a queued batch. ``live_reserve`` keeps
  a fraction of each bucket for live calls.
* **Share.** ``set_process_share(1 / n)`` makes every governor of the process
  use ``1/n`` of each limit (and of each ``remaining`` value): the Ray engine
  runs ``n`` actors, each its own process, and splits the budget evenly
  between them, so no cross-process round trip sits in front of a request.

Per-request token estimate (``estimate_request_tokens``): the request's
characters divided by 4 (OpenAI's rule of thumb for English text), leaving out
the base64 of image and document blocks, which count by the vendor's rule
(``agentflow.media.tokens``, profile data: OpenAI's tiles, Anthropic's area / 750,
Gemini's 258 per tile and per PDF page), plus the reply budget (the request's
``max_tokens`` capped at ``typical_output_tokens``).

The governor is thread-safe and not tied to one event loop: every waiter
sleeps on an ``asyncio.Event`` of its own loop and is woken thread-safely.

This module holds the process's registry of governors (``governor_for``,
``set_process_share``) and re-exports the rest: the governor itself and
the queue live in ``agentflow.ratelimit.governor``, request priority in
``agentflow.ratelimit.priority``, the token bucket in
``agentflow.ratelimit.bucket``, header formats and the token estimate in
``agentflow.ratelimit.formats``.
"""

from __future__ import annotations

import hashlib
import threading

from agentflow._arguments import check_number
from agentflow.ratelimit.bucket import WINDOW_S
from agentflow.ratelimit.formats import (
    RateLimitSnapshot,
    estimate_request_tokens,
    model_family,
    parse_count,
    parse_duration,
    seconds_until,
)
from agentflow.ratelimit.governor import RateGovernor, RateLease, set_default_share
from agentflow.ratelimit.priority import Priority, current_priority, request_priority

__all__ = [
    "WINDOW_S",
    "Priority",
    "RateGovernor",
    "RateLease",
    "RateLimitSnapshot",
    "current_priority",
    "estimate_request_tokens",
    "governor_for",
    "model_family",
    "parse_count",
    "parse_duration",
    "request_priority",
    "seconds_until",
    "set_process_share",
]

_registry: dict[tuple[str, str, str, str], RateGovernor] = {}
_registry_lock = threading.Lock()


def governor_for(vendor: str, *, base_url: str, api_key: str | None, family: str) -> RateGovernor:
    """The process's governor for this account and model family (created on first use).

    The key is kept only as a short SHA-256 digest.
    """
    digest = hashlib.sha256((api_key or "").encode()).hexdigest()[:16]
    key = (vendor, base_url.rstrip("/"), digest, family)
    with _registry_lock:
        governor = _registry.get(key)
        if governor is None:
            governor = _registry[key] = RateGovernor(f"{vendor}:{family}")
        return governor


def set_process_share(share: float) -> None:
    """Make every governor of this process use ``share`` (0..1] of every limit,
    those that exist and those created later (the Ray engine sets
    ``1 / actors`` in each actor).

    Raises:
        ArgumentTypeError: ``share`` is no number (a ``TypeError``).
        ArgumentValueError: ``share`` outside (0, 1] (a ``ValueError``).
    """
    check_number("share", share, "a number in (0, 1]", lambda s: 0.0 < s <= 1.0)
    set_default_share(share)
    with _registry_lock:
        for governor in _registry.values():  # a reused worker process: rescale what exists
            governor._reshare(share)
