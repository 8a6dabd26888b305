"""``VarScope``: a context variable set for the length of a ``with`` block.

What ``contextlib.contextmanager`` around ``var.set`` / ``var.reset`` does,
without its generator: a scope entered once per model request or per input
(``agentflow.ratelimit.request_priority``, ``agentflow.batch_api.model.input_scope``)
costs a third as much. Also usable as a decorator (``ContextDecorator``), as
a ``contextmanager`` function's result is.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Generic, TypeVar

__all__ = ["VarScope"]

T = TypeVar("T")


class VarScope(contextlib.ContextDecorator, Generic[T]):
    """Sets ``var`` to ``value`` on entry and restores it on exit (also when
    the block raises). One scope object is entered once at a time."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: contextvars.ContextVar[T], value: T) -> None:
        self._var = var
        self._value = value
        self._token: contextvars.Token[T] | None = None

    def __enter__(self) -> None:
        self._token = self._var.set(self._value)

    def __exit__(self, *exc: Any) -> None:
        token, self._token = self._token, None
        if token is not None:
            self._var.reset(token)

    def _recreate_cm(self) -> VarScope[T]:  # a decorated function's each call: a fresh scope
        return VarScope(self._var, self._value)
