"""``slot_init``: a faster ``__init__`` for frozen, slotted dataclasses.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, "name", value)``, which looks the slot up by name
on every call: about twice the cost of calling the slot's own setter
(``Cls.name.__set__``, bound once). The events, chunks, content blocks and
usage records made on every call of an agent are such classes, so
``slot_init`` swaps the generated ``__init__`` for one with the same
signature (names, order, defaults, default factories, keyword-only fields)
that sets the slots through their setters; ``__post_init__`` still runs.
Nothing else of the dataclass changes: ``repr``, equality, hashing,
``dataclasses.replace``, pickling and the frozen ``__setattr__`` are the
dataclass's own.

Checked fields (``slot_init(checks={"text": (str, check)})``): the generated
``__init__`` tests ``text.__class__ is str`` inline -- no call when the value
has exactly that type, the common path -- and only otherwise calls
``check(text)``, which returns the value to store (e.g. a ``str`` subclass,
accepted) or raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

__all__ = ["Check", "slot_init"]

_T = TypeVar("_T", bound=type)


class _Factory:
    """The default of a field with a ``default_factory`` (shown like
    dataclasses shows it in a signature)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


_LITERALS: dict[Any, str] = {list: "[]", dict: "{}"}
"""A field whose ``default_factory`` is ``list`` or ``dict`` gets its new empty
one from a literal (one opcode) instead of a call of the type: the same new
object, made at a fraction of the cost (a frozen result made per call holds
up to a dozen such fields)."""


Check = tuple[type, Callable[[Any], Any]]
"""``(exact type, check)`` of a checked field: ``check`` runs only when the
value's type is not exactly that type, and returns the value to store or raises."""


@overload
def slot_init(cls: _T, /) -> _T: ...


@overload
def slot_init(*, checks: Mapping[str, Check]) -> Callable[[_T], _T]: ...


def slot_init(cls: _T | None = None, /, *,
              checks: Mapping[str, Check] | None = None) -> _T | Callable[[_T], _T]:
    """Give the frozen, slotted dataclass ``cls`` an ``__init__`` that sets its
    slots through their own setters (see the module docstring).

    Use it above ``@dataclass(frozen=True, slots=True)``::

        @slot_init
        @dataclass(frozen=True, slots=True)
        class Usage: ...

        @slot_init(checks={"text": (str, must_be_text)})   # inline type test first
        @dataclass(frozen=True, slots=True)
        class TextBlock: ...

    Raises:
        TypeError: ``cls`` is not a frozen dataclass with slots, has an
            ``InitVar`` (its ``__post_init__`` takes arguments), or ``checks``
            names a field it has not.
    """
    if cls is None:
        given = dict(checks or {})
        return lambda target: _slot_init(target, given)
    return _slot_init(cls, dict(checks or {}))


def _slot_init(cls: _T, checks: dict[str, Check]) -> _T:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"slot_init needs a frozen dataclass with slots, got {cls!r}")
    fields: dict[str, dataclasses.Field[Any]] = cls.__dict__["__dataclass_fields__"]
    if any(f._field_type is dataclasses._FIELD_INITVAR  # type: ignore[attr-defined]
           for f in fields.values()):
        raise TypeError(f"slot_init does not support InitVar fields ({cls.__qualname__})")
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    unknown = set(checks) - {f.name for f in dataclasses.fields(cls) if f.init}
    if unknown:
        raise TypeError(f"slot_init checks name no init field of {cls.__qualname__}: "
                        f"{sorted(unknown)}")
    for n, f in enumerate(dataclasses.fields(cls)):
        setter = f"_set{n}"
        if f.name in checks:
            scope[f"_type{n}"], scope[f"_check{n}"] = checks[f.name]
            # ``__class__``, not ``type()``: no call at all, and a field may be named ``type``
            body.append(f"if {f.name}.__class__ is not _type{n}: {f.name} = _check{n}({f.name})")
        scope[setter] = getattr(cls, f.name).__set__  # the slot's member descriptor
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            scope[f"_factory{n}"] = f.default_factory
        if not f.init:  # set from its default (or factory) every time, as dataclasses does
            if has_factory:
                made = _LITERALS.get(f.default_factory, f"_factory{n}()")
                body.append(f"{setter}(self, {made})")
            elif f.default is not dataclasses.MISSING:
                scope[f"_default{n}"] = f.default
                body.append(f"{setter}(self, _default{n})")
            continue
        if has_factory:
            param = f"{f.name}=_FACTORY"
            made = _LITERALS.get(f.default_factory, f"_factory{n}()")
            body.append(f"{setter}(self, {made} if {f.name} is _FACTORY else {f.name})")
        else:
            if f.default is dataclasses.MISSING:
                param = f.name
            else:
                scope[f"_default{n}"] = f.default
                param = f"{f.name}=_default{n}"
            body.append(f"{setter}(self, {f.name})")
        (keyword if f.kw_only else positional).append(param)
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}) -> None:\n    " + "\n    ".join(body or ["pass"])
    exec(source, scope)  # generated from the dataclass's own fields only
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__slot_init__ = True  # what ``slot_init`` made (tests look)
    setattr(cls, "__init__", init)  # noqa: B010 -- mypy refuses assigning __init__
    return cls
