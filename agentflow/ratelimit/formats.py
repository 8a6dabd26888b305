"""What a reply says about rate limits, in plain data and small pure functions:
``RateLimitSnapshot`` (filled by each vendor module's header reader), the
formats vendors use for counts (``parse_count``) and reset times
(``parse_duration``: Go durations such as ``6m0s``; ``seconds_until``: RFC 3339
times and HTTP dates), the model family a
limit applies to (``model_family``) and the per-request token estimate
(``estimate_request_tokens``). Re-exported by ``agentflow.ratelimit``.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "RateLimitSnapshot",
    "estimate_request_tokens",
    "model_family",
    "parse_count",
    "parse_duration",
    "seconds_until",
]


@dataclass(frozen=True, slots=True)
class RateLimitSnapshot:
    """What one reply's headers said about the account's limits.

    Attributes:
        requests_limit / tokens_limit: the limits per window.
        requests_remaining / tokens_remaining: left in the window after this request.
        requests_reset / tokens_reset: seconds until that bucket is full again.
        retry_after: seconds the server asked to wait (429), if given.
    Any field may be ``None`` (not sent).
    """

    requests_limit: float | None = None
    requests_remaining: float | None = None
    requests_reset: float | None = None
    tokens_limit: float | None = None
    tokens_remaining: float | None = None
    tokens_reset: float | None = None
    retry_after: float | None = None


def parse_count(value: str | None) -> float | None:
    """The number a limit or remaining-count header holds (``"5000"``);
    ``None`` when it is absent or no number."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(value: str | None) -> float | None:
    """Seconds from a duration such as ``"6m0s"``, ``"1.5s"``, ``"12ms"`` (Go's
    ``time.Duration`` format) or a bare number of seconds; ``None`` if unreadable
    (``"nan"``, ``"inf"`` and numbers past ``float`` included)."""
    if not value:
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        pass
    else:  # "nan"/"inf" (or an overflow) are no duration: never an endless pause
        return max(0.0, number) if math.isfinite(number) else None
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def seconds_until(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from ``now`` (epoch seconds) until an RFC 3339 / ISO 8601 time or
    an HTTP date; ``None`` if unreadable. A time in the past gives 0."""
    if not value:
        return None
    text = value.strip()
    when: datetime | None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


_DATED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-latest|-preview)+$")


def model_family(model: str) -> str:
    """The model name without its snapshot suffix (``-2024-08-06``, ``-20250929``,
    ``-0613``, ``-latest``): snapshots of one model share its rate limits."""
    return _DATED.sub("", model) or model


def estimate_request_tokens(
    request_chars: int, max_output: int | None, typical_output: int, *, media_tokens: int = 0
) -> int:
    """Tokens one request is expected to count against a tokens-per-minute limit:
    ``ceil(request_chars / 4)`` plus ``media_tokens`` plus ``min(max_output,
    typical_output)`` (``typical_output`` when the request sets no reply cap).
    ``request_chars`` leaves out the base64 of image and document blocks, which
    count as ``media_tokens`` (``agentflow.media.tokens``: the vendor's rule
    from the profile), never as text."""
    output = typical_output if max_output is None else min(max_output, typical_output)
    # conditional expressions, not max(0, ...): three calls fewer on every request
    return (math.ceil(request_chars / 4) if request_chars > 0 else 0) \
        + (media_tokens if media_tokens > 0 else 0) + (output if output > 0 else 0)
