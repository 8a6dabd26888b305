"""Checks of the arguments of the public entry points (``ReActAgent``, its
calls, ``OutputConfig``, ``extract_many``, ``Toolkit`` and ``Tool``), each
naming the argument, what it must be and what it got: the one way a public
argument is checked. Without them a wrong kind of value met Python's own
error deep inside (``'<' not supported between instances of 'str' and
'int'``, ``'dict' object has no attribute 'memory'``, an anyio
``ExceptionGroup``), or was taken silently (``on_invalid="raize"`` retried,
``concurrency=True`` ran one at a time).

Every message reads ``<name> must be <what>, got <value> (<type>)``; with
``secret=True`` (a key, a header) only the type is shown (``got a bytes``),
never the value; likewise for an object whose repr is Python's default.

Raises, for every function: ``ArgumentTypeError`` (a ``TypeError``) for a
value of the wrong type, ``ArgumentValueError`` (a ``ValueError``) for one
out of range, the kinds Python's own functions raise. ``error`` swaps in a
subclass where a public error class was raised before (``ToolTypeError``, a
``ToolDefinitionError`` too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from typing import Any

from agentflow.errors import ArgumentTypeError, ArgumentValueError

__all__ = [
    "check_choice",
    "check_finite",
    "check_flag",
    "check_function",
    "check_instance",
    "check_int",
    "check_list",
    "check_number",
    "check_optional",
    "wrong_type",
    "wrong_value",
]


def _got(value: Any, secret: bool = False) -> str:
    shown = repr(value)
    if secret or " object at 0x" in shown:  # a secret, or a repr that says nothing more
        return f"a {type(value).__name__}"
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{shown} ({type(value).__name__})"


def wrong_type(name: str, what: str, value: Any, *, secret: bool = False,
               hint: str = "", error: type[ArgumentTypeError] = ArgumentTypeError,
               ) -> ArgumentTypeError:
    """The error for ``value`` of the wrong type: ``name must be what, got
    value (type)``, then ``; hint`` (how to fix it) when given."""
    return error(f"{name} must be {what}, got {_got(value, secret)}"
                 + (f"; {hint}" if hint else ""))


def wrong_value(name: str, what: str, value: Any, *, secret: bool = False,
                error: type[ArgumentValueError] = ArgumentValueError) -> ArgumentValueError:
    """The error for ``value`` of the right type but a wrong value (``error``:
    a subclass, as for ``wrong_type``)."""
    return error(f"{name} must be {what}, got {_got(value, secret)}")


def check_int(name: str, value: Any, minimum: int, *, optional: bool = False) -> None:
    """``value`` is an ``int`` (not a bool) at least ``minimum`` (``None`` too when
    ``optional``)."""
    if optional and value is None:
        return
    kind = f"an int >= {minimum}" + (" or None" if optional else "")
    if not isinstance(value, int) or isinstance(value, bool):
        raise wrong_type(name, kind, value)
    if value < minimum:
        raise wrong_value(name, kind, value)


def check_number(name: str, value: Any, what: str, fits: Callable[[float], bool], *,
                 optional: bool = False) -> None:
    """``value`` is a finite ``int`` or ``float`` (not a bool; ``None`` too when
    ``optional``) for which ``fits`` holds; ``what`` says which
    (``"a number of seconds > 0"``). NaN and infinity never fit."""
    if optional and value is None:
        return
    what += " or None" if optional else ""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise wrong_type(name, what, value)
    if not math.isfinite(value) or not fits(value):
        raise wrong_value(name, what, value)


def check_finite(name: str, value: Any, *, optional: bool = False) -> None:
    """``value`` is a finite real number, an ``int`` or a ``float`` (not a bool;
    ``None`` too when ``optional``): NaN and infinity are no JSON numbers, so
    a frontend would get ``null`` or text where it reads a number."""
    check_number(name, value, "a finite number", lambda _: True, optional=optional)


def check_flag(name: str, value: Any) -> None:
    """``value`` is a ``bool``."""
    if not isinstance(value, bool):
        raise wrong_type(name, "True or False", value)


def check_instance(name: str, value: Any, kind: type | tuple[type, ...], what: str, *,
                   secret: bool = False) -> None:
    """``value`` is a ``kind`` (``what`` says so in the message)."""
    if not isinstance(value, kind):
        raise wrong_type(name, what, value, secret=secret)


def check_optional(name: str, value: Any, kind: type | tuple[type, ...], what: str, *,
                   secret: bool = False) -> None:
    """``value`` is ``None`` or a ``kind``."""
    if value is not None:
        check_instance(name, value, kind, f"{what} or None", secret=secret)


def check_function(name: str, value: Any, what: str = "a function", *,
                   optional: bool = False,
                   error: type[ArgumentTypeError] = ArgumentTypeError) -> None:
    """``value`` is callable (``None`` too when ``optional``); ``what`` names
    its shape (``"a function (output -> output)"``)."""
    if optional and value is None:
        return
    if not callable(value):
        raise wrong_type(name, what + (" or None" if optional else ""), value, error=error)


def check_list(name: str, value: Any, items: str, *, single: type | tuple[type, ...] = (),
               kind: type = Iterable, error: type[ArgumentTypeError] = ArgumentTypeError,
               ) -> None:
    """``value`` is a ``kind`` of several things (an ``Iterable``: a list, a
    tuple...; a ``Sequence`` where it is read more than once), not one ``str``,
    bytes, function or ``single`` (one item given bare); ``items`` names what
    it holds (``"Middleware"``)."""
    bare = (isinstance(value, str | bytes | bytearray) or callable(value)
            or (bool(single) and isinstance(value, single)) or not isinstance(value, kind))
    if bare:
        raise wrong_type(name, f"a list of {items}", value, error=error,
                         hint="wrap a single one in a list")


def check_choice(name: str, value: Any, choices: Collection[str], *,
                 call: bool = False) -> None:
    """``value`` is one of ``choices`` (or, with ``call``, a callable)."""
    if call and callable(value):
        return
    listed = ", ".join(repr(c) for c in choices)
    what = f"one of {listed}" + (" or a function" if call else "")
    if not isinstance(value, str):
        raise wrong_type(name, what, value)
    if value not in choices:
        raise wrong_value(name, what, value)
