"""The wait an error reply asks for before a retry: ``Retry-After`` and
``retry-after-ms`` (``parse_retry_after``), and what a rate-limit or overload
error says otherwise, in a relayed header, its message's words or an empty
rate-limit window's reset time (``implied_retry_after``).
"""

from __future__ import annotations

import contextlib
import email.utils
import math
import re
import time
from collections.abc import Mapping
from typing import Any

from agentflow.ratelimit.formats import parse_duration

__all__ = ["implied_retry_after", "parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an
    HTTP date), or ``None`` (unreadable, ``nan`` or ``inf`` included)."""
    ms = headers.get("retry-after-ms") or headers.get("Retry-After-Ms")
    if ms:
        with contextlib.suppress(ValueError):
            if math.isfinite(millis := float(ms)):
                return max(0.0, millis / 1000)
    value = headers.get("retry-after") or headers.get("Retry-After")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:  # "nan"/"inf" are no delay: the default backoff, never a storm or an endless wait
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_RELAYED = ("llm_provider-retry-after-ms", "llm_provider-retry-after")
"""The vendor's own wait relayed under a prefix (LiteLLM's proxy forwards an
upstream ``retry-after`` only as ``llm_provider-retry-after``,
BerriAI/litellm#21553)."""

_TRY_AGAIN = re.compile(
    r"(?:try again|retry|retrying) (?:in|after) (?:about )?"
    r"(?P<go>(?:\d+(?:\.\d+)?(?:h|ms|m|s))+)\b"
    r"|(?:try again|retry|retrying) (?:in|after) (?:about )?(?P<n>\d+(?:\.\d+)?) ?"
    r"(?P<unit>milliseconds?|seconds?|secs?|minutes?|mins?)\b", re.I)
_WORD_UNIT = {"milli": 1e-3, "sec": 1.0, "min": 60.0}


def implied_retry_after(headers: Mapping[str, str], message: str,
                        reset: float | None = None, data: Any = None) -> float | None:
    """The wait a rate-limit or overload error says other than in
    ``Retry-After``: a relayed header (``_RELAYED``), the words of its message
    ("Please try again in 5.289s.", Groq and OpenAI, Aider-AI/aider#3265;
    "Please retry after 20 seconds.", Azure OpenAI; "try again in 1m30s"), an
    empty window's ``X-RateLimit-Reset`` time, in the headers or in the error
    body's ``error.metadata.headers`` (OpenRouter: ``"X-RateLimit-Remaining":
    "0", "X-RateLimit-Reset": "1741305600000"``, epoch milliseconds;
    everruns/everruns#2280), else ``reset``: the seconds until the exhausted
    rate-limit bucket refills, from the vendor's rate-limit headers
    (Anthropic's ``anthropic-ratelimit-*-reset``,
    anthropics/anthropic-sdk-typescript#357). ``data``: the error body's JSON.
    ``None`` when nothing says (the default backoff then)."""
    relayed = {name.removeprefix("llm_provider-"): headers[name]
               for name in _RELAYED if headers.get(name)}
    if relayed:
        hint = parse_retry_after(relayed)
        if hint is not None:
            return hint
    window = _window_reset(headers) or _window_reset(_body_headers(data))
    if window is not None:
        return window
    found = _TRY_AGAIN.search(message)
    if found is not None:
        if found.group("go"):
            seconds = parse_duration(found.group("go"))
        else:
            unit = found.group("unit").lower()
            scale = next(v for k, v in _WORD_UNIT.items() if unit.startswith(k))
            seconds = float(found.group("n")) * scale
        if seconds is not None and math.isfinite(seconds):
            return seconds
    return reset


def _body_headers(data: Any) -> Mapping[str, str]:
    """The rate-limit headers a gateway copies into its error body
    (``{"error": {"metadata": {"headers": {...}}}}``), or ``{}``."""
    node = data[0] if isinstance(data, list) and data else data
    error = node.get("error") if isinstance(node, Mapping) else None
    meta = error.get("metadata") if isinstance(error, Mapping) else None
    found = meta.get("headers") if isinstance(meta, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _window_reset(headers: Mapping[str, Any]) -> float | None:
    """Seconds until ``X-RateLimit-Reset`` when ``X-RateLimit-Remaining`` is 0:
    epoch milliseconds or seconds (a value that large), else seconds from now."""
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in headers.items()}
    try:
        left = float(lowered.get("x-ratelimit-remaining", "nan"))
        value = float(lowered["x-ratelimit-reset"])
    except (KeyError, TypeError, ValueError):
        return None
    if left != 0 or not math.isfinite(value):
        return None
    if value > 1e12:  # epoch milliseconds
        value = value / 1000 - time.time()
    elif value > 1e9:  # epoch seconds
        value -= time.time()
    return max(0.0, value)
