"""The separator between a list's items written on one line, as a class of
forms: a locator learns the one its examples write (``Locator.split``:
``, `` of ``ignore = E203, W503``), and a document may write the same
punctuation with other blanks around it (``ignore = E261,E731,W503``,
``a ; b``, ``x|y``). Read exactly, such a list came back one item,
``E261,E731,W503``, and was pinned as the list.

* ``separator_form``: the forms a learned separator matches. A list mark
  (``,``, ``;`` or ``|``, alone but for blanks) with any blanks (spaces,
  tabs) around it, none included; any other separator with each run of
  blanks in it as any run of blanks, at least one (`` - `` never splits
  ``GPL-2.0``, `` / `` never ``a/b``, `` and `` never ``sandbox``); one of
  blanks alone as written (a tab between items that hold spaces).
  Only where no example's item holds the mark itself (``loose``: ``1,200,
  3,400`` or ``Smith,J., Doe,K.`` under ``, ``): there the mark without
  blanks is an item's own, and the separator is read as written.
* ``item_marks`` / ``unsplit``: the separator-like characters (the list
  marks and a blank) an item may hold. A list item that holds one no item of
  the examples holds may be a list the rule did not split (``E203;W503``
  under a rule split by ``, ``; ``E203,W503`` on one line of a list the
  examples write one item a line; ``E203 W503``): it is offered, never
  pinned (``agentflow.grounding.locator_pins``). Only where the examples'
  items are single tokens (none holds a blank): a phrase's punctuation is
  its own (``Free Software Foundation, Inc.``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = ["LIST_MARKS", "item_marks", "loose", "separator_form", "unsplit"]

LIST_MARKS = ",;|"
"""The punctuation lists write between their items, with any blanks around it."""

_LIKE = LIST_MARKS + " \t"
"""The characters an item that is a list the rule did not split holds: a list
mark, or a blank."""

_BLANKS = re.compile(r"[ \t]+")


@functools.lru_cache(maxsize=64)
def separator_form(sep: str) -> re.Pattern[str]:
    """The pattern of the forms of separator ``sep`` (see the module
    docstring): ``, `` -> ``[ \\t]*,[ \\t]*``; `` - `` -> ``[ \\t]+-[ \\t]+``;
    `` `` -> `` ``. No groups: ``pattern.split`` gives the items alone."""
    core = sep.strip(" \t")
    if not core:
        return re.compile(re.escape(sep))
    if len(core) == 1 and core in LIST_MARKS:
        return re.compile(r"[ \t]*" + re.escape(core) + r"[ \t]*")
    parts = _BLANKS.split(sep)
    return re.compile(r"[ \t]+".join(re.escape(p) for p in parts))


def loose(sep: str, marks: str | None) -> bool:
    """Whether a rule splitting at ``sep`` reads its other forms
    (``separator_form``): not before its examples' ``marks`` (``item_marks``)
    are learned (``None``: read as written, as the rule is learned), nor
    where they hold ``sep``'s list mark (an item's own: ``1,200``)."""
    core = sep.strip(" \t")
    return marks is not None and not (len(core) == 1 and core in LIST_MARKS and core in marks)


def item_marks(items: Iterable[str]) -> str:
    """The separator-like characters (``LIST_MARKS`` and blanks) some of
    ``items`` hold inside (each stripped), in ``LIST_MARKS`` order (``""``:
    none)."""
    inner = {c for item in items for c in item.strip()}
    return "".join(c for c in _LIKE if c in inner)


def unsplit(item: str, marks: str) -> bool:
    """Whether ``item`` (stripped) holds a separator-like character not in
    ``marks`` (``item_marks`` of the examples' items): it may be several
    items the rule read as one. Never where the examples' items are phrases
    (some holds a blank): a phrase's own punctuation is no separator
    (``Free Software Foundation, Inc.``, Debian's alternatives ``gpgv |
    gpgv2`` beside ``libc6 (>= 2.34)``). Nor where cutting ``item`` at a
    list mark it holds leaves a part holding a blank, which no example's
    item holds: the mark is then the item's own syntax, not a separator
    (``idna; extra == "web"``, a requirement and its environment marker)."""
    if " " in marks or "\t" in marks:
        return False
    text = item.strip()
    foreign = [c for c in LIST_MARKS if c in text and c not in marks]
    if foreign:
        parts = re.split("|".join(map(re.escape, foreign)), text)
        return all(part.strip() and not _BLANK.search(part.strip()) for part in parts)
    return _BLANK.search(text) is not None


_BLANK = re.compile(r"[ \t]")
