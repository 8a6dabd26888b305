"""Request priority: ``live`` requests (someone waits) go before ``batch``
ones at every governor; ``request_priority`` sets it for a block of code,
``current_priority`` reads it (``agentflow.ratelimit`` re-exports them)."""

from __future__ import annotations

import contextvars
from contextlib import AbstractContextManager
from typing import Literal

from agentflow._arguments import check_choice
from agentflow._scopes import VarScope

__all__ = ["PRIORITY", "RANK", "Priority", "current_priority", "request_priority"]


Priority = Literal["live", "batch"]
"""``live``: someone waits for this call (a web request); ``batch``: background work."""

RANK: dict[str, int] = {"live": 0, "batch": 1}
"""Each priority's place in a governor's queue (lower goes first)."""
PRIORITY: contextvars.ContextVar[Priority] = contextvars.ContextVar(
    "agentflow_rate_priority", default="live")
"""The priority of the requests made in this context (``current_priority``)."""


def request_priority(priority: Priority) -> AbstractContextManager[None]:
    """Run the model requests made inside the block at ``priority``
    (``with request_priority("batch"): ...``).

    Raises:
        ArgumentValueError: an unknown priority (a ``ValueError``; an
            ``ArgumentTypeError``, a ``TypeError``, for a value that is no str).
    """
    check_choice("priority", priority, tuple(RANK))
    return VarScope(PRIORITY, priority)


def current_priority() -> Priority:
    """The priority of requests made now (``live`` unless set)."""
    return PRIORITY.get()
