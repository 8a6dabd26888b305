"""Retry policy of the HTTP layer: which failures are retried (before the
first byte of a 2xx reply only) and how long to wait (the server's hint,
capped, else exponential backoff with jitter, tenacity's)."""

from __future__ import annotations

import inspect

from tenacity import RetryCallState, wait_exponential_jitter

from agentflow.errors import ProviderError
from agentflow.providers._http_settings import HttpSettings

__all__ = ["Wait", "retryable"]

# tenacity >= 9.2 renamed wait_exponential_jitter's ``initial`` to ``multiplier``
_BACKOFF_START = (
    "multiplier"
    if "multiplier" in inspect.signature(wait_exponential_jitter.__init__).parameters
    else "initial"
)


class Wait:
    """Backoff: the server's ``retry_after`` when given (capped), else
    exponential with jitter."""

    def __init__(self, settings: HttpSettings) -> None:
        self.settings = settings
        self.exp = wait_exponential_jitter(
            **{_BACKOFF_START: settings.backoff_initial}, max=settings.backoff_max,
            jitter=settings.backoff_initial,
        )

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if isinstance(hint, int | float):
            return min(float(hint), self.settings.max_retry_after)
        return float(self.exp(state))


def retryable(exc: BaseException) -> bool:
    """Whether ``exc`` may be retried: a retryable ``ProviderError`` that did
    not happen after the reply had started (``partial``)."""
    return isinstance(exc, ProviderError) and exc.retryable and not getattr(exc, "partial", False)
