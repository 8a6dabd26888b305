"""The text of an exception raised by the user's code (a tool, an output
validator, a schema module, a ``prepare`` function), for a message that
quotes it: ``str(exc)`` can itself raise (a ``__str__`` that fails), and the
message being made then became the failure: a tool's error crashed the call
it should have been reported to, as a bare ``RuntimeError`` from its
``__str__``."""

from __future__ import annotations

__all__ = ["exception_text"]


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or, when that raises, a text saying so (the class names of
    ``exc`` and of what its ``__str__`` raised); never raises."""
    try:
        return str(exc)
    except Exception as failure:
        return f"(its message could not be written: {type(failure).__name__} in __str__)"
