"""Retry policy of the HTTP layer: which failures are retried (before the
first byte of a 2xx reply only, and never when the server asks for a wait
past ``max_retry_after``) and how long to wait (the server's hint, else
exponential backoff with jitter, tenacity's)."""

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


def retryable(exc: BaseException, settings: HttpSettings | None = None) -> bool:
    """Whether ``exc`` may be retried: a retryable ``ProviderError`` that did
    not happen after the reply had started (``partial``) and, given
    ``settings``, whose server-requested wait (``retry_after``) is not longer
    than ``settings.max_retry_after``. A longer wait (a 429 saying "retry in
    an hour": a spent hourly or daily quota) is raised at once, its
    ``retry_after`` saying when, as the vendors' SDKs do (openai-python
    ``_should_retry``: "Not retrying because `Retry-After` ... exceeds the
    maximum"): sleeping the cap and asking again only failed again, and held
    the caller for minutes (lobehub/lobehub#13572, google-gemini/gemini-cli#10925)."""
    if not (isinstance(exc, ProviderError) and exc.retryable
            and not getattr(exc, "partial", False)):
        return False
    hint = exc.retry_after
    return settings is None or hint is None or hint <= settings.max_retry_after
