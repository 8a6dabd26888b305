"""The shapes of a field's values, and the text that could hold one.

A sure null (``agentflow.grounding.locator_absence.only_layout``) lets a
line outside the examples' layout pass only where it holds nothing that
could be the field's value. What could be is judged by shape, and loosely:
a value is not always written the way the examples write it.

**Shape.** A token's shape (``token_shape``) is what kinds of characters it
holds (``a``: a letter, ``0``: a digit) and which other characters
(punctuation), its edge punctuation aside and typographic punctuation read
as ASCII (``agentflow.grounding.folding``), and the punctuation it begins
with, if any: ``https://x.example/`` is ``a./:``, ``2024-05-20`` is
``0-``, ``v1.2.3`` is ``a0.``, ``FedEx`` is ``a``, ``/etc/xml`` is
``a/ /``.

**Near shapes** (``near_shape``): a token may hold a value token when both
hold a kind of character in common and

- their punctuation is the same, or both have some and one's is part of
  the other's: a URL written without its scheme (``www.frob.example.org``,
  ``frob.example.org/docs`` for ``https://x.example/``), an e-mail address
  without ``mailto:``, a version without its ``v`` (``1.2.3`` for
  ``v1.2.3``), a URL with a query;
- between digits (tokens of digits and separators), any separator stands
  for any other (``-`` ``/`` ``.`` ``,`` ``:``): a date in another
  notation (``20/05/2024``, ``20.05.2024`` for ``2024-05-20``), a time
  ``8.00`` for ``8:00``;
- one has no punctuation, the other only what whitespace may stand in for
  (they then hold the same kinds): separators between digits (``20`` of
  ``20 May 2024`` for ``2024-05-20``), a hyphen or apostrophe inside a word
  (``Stratford-upon-Avon`` for ``Glasgow``).

A word is no URL (``Frobs`` for ``https://x.example/``: a URL has
punctuation whitespace cannot stand in for), a number no word, and a token
that begins with punctuation the value writes only inside it is another
thing (a path ``/etc/adduser.conf`` is no URL ``https://x.example/``).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentflow.grounding.folding import fold_text
from agentflow.grounding.quotes import QUOTES

__all__ = ["could_hold", "near_shape", "same_kinds", "token_shape", "value_shapes"]

_EDGE = "()[]{}<>,.;:!?\"'`*_"
_KINDS = frozenset("a0")
_SEPARATORS = frozenset("-/.,:")
"""Between digits, one separator stands for another (and whitespace for any)."""
_SYNTAX = frozenset("()[]{}\"'`") | QUOTES
"""Quotes and brackets: words holding one are written in another syntax (``same_kinds``)."""
_JOINERS = frozenset("-'")
"""Inside a word, whitespace may stand for these (``Stratford-upon-Avon``)."""


def token_shape(token: str) -> str | None:
    """The shape of one whitespace-delimited token, its edge punctuation
    aside (see the module docstring): ``a`` when it holds a letter, ``0``
    when it holds a digit, then the other characters it holds, sorted
    (``https://x.example/`` is ``a./:``; ``FedEx`` is ``a``;
    ``05212345678901`` is ``0``; ``A-100`` is ``a0-``), and after a space
    the punctuation it begins with (``/etc/xml`` is ``a/ /``); ``None`` for
    a token of punctuation alone."""
    core = fold_text(token).strip(_EDGE)
    if not core:
        return None
    marks = "".join(sorted({c for c in core if not c.isalnum()}))
    letter = any(c.isalpha() for c in core)
    digit = any(c.isalnum() and not c.isalpha() for c in core)
    if not (letter or digit):
        return None
    lead = "" if core[0].isalnum() else " " + core[0]
    return ("a" if letter else "") + ("0" if digit else "") + marks + lead


def value_shapes(values: list[str]) -> frozenset[str]:
    """The shapes (``token_shape``) of the tokens of ``values``."""
    return frozenset(shape for v in values for t in v.split()
                     if (shape := token_shape(t)) is not None)


def same_kinds(value: str, shapes: Iterable[str]) -> bool:
    """Whether every token of ``value`` (that holds a letter or a digit) holds
    the kinds of characters some token of ``shapes`` holds (letters, digits,
    or both: ``GPL-3.0-only`` and ``AND`` like ``GPLv2+`` and ``MIT``; never
    ``0.006`` like ``Dpkg::Exit``), and ``value`` holds no quote or bracket
    (another syntax: a shell array ``('a' 'a-docs')``): the same kind of
    words as the examples' values, more of them; ``False`` without ``shapes``."""
    seen = {_parts(s)[0] for s in shapes}
    return bool(seen) and not any(c in _SYNTAX for c in value) and all(
        _parts(shape)[0] in seen for t in value.split() if (shape := token_shape(t)) is not None)


def _parts(shape: str) -> tuple[frozenset[str], frozenset[str], str]:
    """Kinds, punctuation and the punctuation it begins with of ``shape``."""
    head, _, lead = shape.partition(" ")
    return frozenset(head) & _KINDS, frozenset(head) - _KINDS, lead


def near_shape(shape: str, value: str) -> bool:
    """Whether a token of ``shape`` may hold a value token of shape
    ``value`` (both ``token_shape``), written the same way or nearly (see
    the module docstring)."""
    kinds, marks, lead = _parts(shape)
    value_kinds, value_marks, value_lead = _parts(value)
    shared = kinds & value_kinds
    if not shared or (lead and lead != value_lead and lead in value_marks):
        return False  # no kind in common; a path (``/etc/xml``) for a URL
    if kinds == value_kinds == {"0"}:  # between digits one separator stands for another
        marks = frozenset("-" if c in _SEPARATORS else c for c in marks)
        value_marks = frozenset("-" if c in _SEPARATORS else c for c in value_marks)
    if marks == value_marks:
        return True
    if marks and value_marks:
        return marks <= value_marks or value_marks <= marks
    if kinds != value_kinds:
        return False
    spaced = (_JOINERS if "a" in shared else frozenset()) | (
        _SEPARATORS if "0" in shared else frozenset())
    return (marks or value_marks) <= spaced


def could_hold(shapes: Iterable[str], text: str) -> bool:
    """Whether ``text`` holds a token shaped like one of ``shapes`` (a field's
    example values' tokens), or nearly (``near_shape``); with no ``shapes``
    learned, any text that is not blank could."""
    wanted = tuple(shapes)
    if not wanted:
        return bool(text.strip())
    found = {s for t in text.split() if (s := token_shape(t)) is not None}
    return any(near_shape(s, v) for s in found for v in wanted)
