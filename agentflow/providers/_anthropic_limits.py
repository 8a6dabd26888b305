"""Anthropic's rate limits: the ``anthropic-ratelimit-*`` headers of a reply
(``rate_limit_headers``) and the model class the limits apply to
(``rate_family``). ``agentflow.providers.anthropic`` re-exports both."""

from __future__ import annotations

import re
from collections.abc import Mapping

from agentflow.providers._http import parse_retry_after
from agentflow.ratelimit import RateLimitSnapshot, model_family, parse_count, seconds_until

__all__ = ["rate_family", "rate_limit_headers"]


def rate_limit_headers(headers: Mapping[str, str]) -> RateLimitSnapshot | None:
    """Anthropic's rate-limit headers (docs.anthropic.com/en/api/rate-limits;
    shared/providers.md §3): ``anthropic-ratelimit-requests-{limit,remaining,reset}``
    and ``anthropic-ratelimit-tokens-*`` (the most restrictive token limit in
    force), else ``anthropic-ratelimit-input-tokens-*``; resets are RFC 3339
    times; ``retry-after`` (seconds) on 429. ``None`` when none is present.
    """
    prefix = "anthropic-ratelimit-"
    dim = "tokens" if f"{prefix}tokens-remaining" in headers else "input-tokens"
    snap = RateLimitSnapshot(
        requests_limit=parse_count(headers.get(f"{prefix}requests-limit")),
        requests_remaining=parse_count(headers.get(f"{prefix}requests-remaining")),
        requests_reset=seconds_until(headers.get(f"{prefix}requests-reset")),
        tokens_limit=parse_count(headers.get(f"{prefix}{dim}-limit")),
        tokens_remaining=parse_count(headers.get(f"{prefix}{dim}-remaining")),
        tokens_reset=seconds_until(headers.get(f"{prefix}{dim}-reset")),
        retry_after=parse_retry_after(headers),
    )
    return None if snap == RateLimitSnapshot() else snap


_TIER = re.compile(r"claude-(?:(opus|sonnet|haiku)-(\d+)|(\d+)(?:-\d+)?-(opus|sonnet|haiku))")


def rate_family(model: str) -> str:
    """The model class Anthropic's limits apply to: ``claude-sonnet-4-5-20250929``
    and ``claude-sonnet-4-0`` -> ``claude-sonnet-4``; ``claude-3-5-haiku-latest`` ->
    ``claude-haiku-3`` (limits are per model class, docs.anthropic.com/en/api/rate-limits)."""
    match = _TIER.match(model)
    if match is None:
        return model_family(model)
    tier = match.group(1) or match.group(4)
    major = match.group(2) or match.group(3)
    return f"claude-{tier}-{major}"
