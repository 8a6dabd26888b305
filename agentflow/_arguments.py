"""Checks of the arguments of the public entry points (``ReActAgent``, its
calls, ``OutputConfig``, ``extract_many``), each naming the argument, what it
must be and what it got. Without them a wrong kind of value met Python's own
error deep inside (``'<' not supported between instances of 'str' and
'int'``, ``'dict' object has no attribute 'memory'``, an anyio
``ExceptionGroup``), or was taken silently (``on_invalid="raize"`` retried,
``concurrency=True`` ran one at a time).

Raises, for every function: ``TypeError`` for a value of the wrong type,
``ValueError`` for one out of range (the errors Python's own functions raise).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

__all__ = ["check_choice", "check_finite", "check_flag", "check_instance", "check_int",
           "check_optional"]


def _got(value: Any) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{shown} ({type(value).__name__})"


def check_int(name: str, value: Any, minimum: int, *, optional: bool = False) -> None:
    """``value`` is an ``int`` (not a bool) at least ``minimum`` (``None`` too when
    ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        kind = f"an int >= {minimum}" + (" or None" if optional else "")
        raise TypeError(f"{name} must be {kind}, got {_got(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def check_finite(name: str, value: Any, *, optional: bool = False) -> None:
    """``value`` is a finite real number, an ``int`` or a ``float`` (not a bool;
    ``None`` too when ``optional``): NaN and infinity are no JSON numbers, so
    a frontend would get ``null`` or text where it reads a number."""
    if optional and value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool):
        kind = "a number" + (" or None" if optional else "")
        raise TypeError(f"{name} must be {kind}, got {_got(value)}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")


def check_flag(name: str, value: Any) -> None:
    """``value`` is a ``bool``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {_got(value)}")


def check_instance(name: str, value: Any, kind: type | tuple[type, ...], what: str) -> None:
    """``value`` is a ``kind`` (``what`` says so in the message)."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, got {_got(value)}")


def check_optional(name: str, value: Any, kind: type | tuple[type, ...], what: str) -> None:
    """``value`` is ``None`` or a ``kind``."""
    if value is not None:
        check_instance(name, value, kind, f"{what} or None")


def check_choice(name: str, value: Any, choices: Collection[str], *,
                 call: bool = False) -> None:
    """``value`` is one of ``choices`` (or, with ``call``, a callable)."""
    if call and callable(value):
        return
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        extra = " or a function" if call else ""
        raise (ValueError if isinstance(value, str) else TypeError)(
            f"{name} must be one of {listed}{extra}, got {_got(value)}")
