"""How a batch-mode run is set up (``BatchSettings``) and where it is
(``BatchProgress``): the plain data the runner (``agentflow.batch_api.runner``)
reads and reports."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from agentflow._arguments import (
    check_flag,
    check_function,
    check_int,
    check_number,
    check_optional,
)
from agentflow.model import Usage

__all__ = ["BatchProgress", "BatchSettings"]


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """Where the batch part of a run is. Units: requests (``batches``: batches).

    ``submitted``: handed to the vendor (resumed ones included);
    ``in_progress``: in batches not finished yet; ``completed``: with a reply;
    ``failed``: with an error (resubmitted ones count once more when they end).
    """

    submitted: int
    in_progress: int
    completed: int
    failed: int
    batches: int

    def line(self) -> str:
        """One progress line, e.g. ``batch: 4 submitted, 2 in progress, 1 completed,
        1 failed (1 batch)``."""
        plural = "" if self.batches == 1 else "es"
        return (f"batch: {self.submitted} submitted, {self.in_progress} in progress, "
                f"{self.completed} completed, {self.failed} failed "
                f"({self.batches} batch{plural})")


@dataclass(frozen=True, slots=True)
class BatchSettings:
    """How the batch mode runs.

    Attributes:
        batch_only: re-asks go into follow-up batches too (else live).
        flush_after: seconds without a new request before a partial group is
            submitted.
        poll_initial / poll_max / poll_factor: seconds between polls of a
            batch, growing by ``poll_factor`` up to ``poll_max``.
        max_wait: seconds a batch is polled before its requests fail with
            ``BatchRequestError`` (kind ``"timeout"``, naming the batch id;
            the batch is left at the vendor, journalled: a rerun polls it
            again); ``None``: no bound. Default 72 hours, past every
            vendor's own window (24 h: OpenAI's ``completion_window``,
            Anthropic's; Gemini's 48 h expiry), after which the vendor
            itself ends it ``expired``: only a server that never does is
            stopped by it.
        max_resubmits: follow-up submissions of a request whose item failed
            retryably (1: once, never twice).
        journal: the journal file (``None``: in memory; nothing survives a restart).
        max_inflight: inputs awaiting a batch reply at once (bounds memory;
            also the largest group, with the vendor's ``max_requests``).
        on_progress: called with a ``BatchProgress`` on every change.
        on_usage: called with the ``Usage`` of each reply that came from a
            batch (billed at the batch price; ``agentflow.batch_api.cost``).
    """

    batch_only: bool = False
    flush_after: float = 2.0
    poll_initial: float = 5.0
    poll_max: float = 300.0
    poll_factor: float = 1.5
    max_wait: float | None = 72 * 3600.0
    max_resubmits: int = 1
    journal: str | None = None
    max_inflight: int = 10_000
    on_progress: Callable[[BatchProgress], None] | None = field(default=None, compare=False)
    on_usage: Callable[[Usage], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        """Refuse settings that would poll the vendor in a tight loop (a zero,
        negative or NaN interval, a shrinking factor) or never submit.

        Raises:
            ArgumentTypeError / ArgumentValueError: (a ``TypeError`` /
                ``ValueError``) naming the setting, what it must be and the
                value given (``agentflow._arguments``).
        """
        check_flag("BatchSettings.batch_only", self.batch_only)
        check_number("BatchSettings.poll_initial", self.poll_initial,
                     "a number of seconds > 0", lambda v: v > 0)
        if not _forever(self.poll_max):  # (+inf: no cap; -inf is refused)
            check_number("BatchSettings.poll_max", self.poll_max,
                         "a number of seconds >= poll_initial", lambda v: v >= self.poll_initial)
        check_number("BatchSettings.poll_factor", self.poll_factor, "a number >= 1",
                     lambda v: v >= 1)
        if not _forever(self.max_wait):
            check_number("BatchSettings.max_wait", self.max_wait, "a number of seconds > 0",
                         lambda v: v > 0, optional=True)
        check_number("BatchSettings.flush_after", self.flush_after, "a number of seconds >= 0",
                     lambda v: v >= 0)
        check_int("BatchSettings.max_resubmits", self.max_resubmits, 0)
        check_int("BatchSettings.max_inflight", self.max_inflight, 1)
        check_optional("BatchSettings.journal", self.journal, str, "a str (a file path)")
        check_function("BatchSettings.on_progress", self.on_progress, optional=True)
        check_function("BatchSettings.on_usage", self.on_usage, optional=True)


def _forever(value: object) -> bool:
    """``value`` is ``+inf`` (a setting with no bound); ``-inf`` is not, so the
    setting's check refuses it."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == math.inf
