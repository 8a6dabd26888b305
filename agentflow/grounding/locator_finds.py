"""The values a learned locator finds in a document and the checks on them
(``LocatorFinds``, a base of ``agentflow.grounding.locator_rule.Locator``):
the examples' kind of value (``fits``), the values in document order
(``values``), whether its twins, echoes, row and ``beside`` agree with them
(``twins_agree``) and whether they are a given value (``holds``).
``agentflow.grounding.locators`` documents the rules.
"""

from __future__ import annotations

from typing import Any

from agentflow.grounding.chance_places import written_beside
from agentflow.grounding.echo_keys import echo_differs
from agentflow.grounding.folding import same_text
from agentflow.grounding.locator_reading import LocatorReading
from agentflow.grounding.row_cells import row_differs
from agentflow.grounding.void_blocks import live_text

__all__ = ["LocatorFinds"]


class LocatorFinds(LocatorReading):
    """The base of ``Locator`` that gives the values it finds and checks them,
    reading only the fields below and ``LocatorReading``'s (``Locator``
    holds them all, documented there)."""

    __slots__ = ()

    letter: bool
    digit: bool
    twins: tuple[LocatorFinds, ...]
    echoes: tuple[str, ...]
    row: tuple[str, ...]
    beside: str | None

    def fits(self, value: str) -> bool:
        """Whether ``value`` is the kind of value the examples show (``letter``,
        ``digit``); a list's items are not checked."""
        if self.many:
            return True
        return (not self.letter or any(c.isalpha() for c in value)) and (
            not self.digit or any(c.isdigit() for c in value))

    def label_lines(self, source: str) -> int:
        """How many lines of ``source`` (inside the rule's ``group`` and
        ``fence``: ``region``) the rule reads after its label, a value after it
        or none."""
        lines = self.region(live_text(source)).splitlines()
        return sum(1 for _, line in self._read(lines) if self._in_line(line, empty=True))

    def values(self, source: str, *, live: bool = True) -> list[str]:
        """The values this locator finds in ``source`` that fit the examples'
        kind of value (``fits``), in document order (see ``_values``); none
        where a single value's label holds one of another kind at the first
        place the rule reads (``Host *`` where the examples' hosts are words):
        that place is the one the examples show, a later label's value
        (``Host prod``) is not the field's."""
        found = self._values(source, live)
        if found and self.labelled and not self.many and not self.fits(found[0]):
            return []
        return [v for v in found if self.fits(v)]

    def twins_agree(self, source: str) -> bool:
        """Whether none of ``twins`` finds other values in ``source`` than this
        rule finds (whitespace folded; a value written again, the same
        uploader of each of a release's assets, is no other value): a twin
        that finds nothing says nothing (the document writes only one of the
        places); true without twins.
        Likewise false where the document writes a key of ``echoes``, never
        with the value this rule finds first (``agentflow.grounding.
        echo_keys.echo_differs``), where the document's line does not write
        the ``row`` around the value this rule finds first (``agentflow.
        grounding.row_cells.row_differs``), and where it does not write that
        value after ``beside`` elsewhere (``agentflow.grounding.
        chance_places.written_beside``)."""
        if not self.twins and not self.echoes and not self.row and self.beside is None:
            return True
        found = self.values(source)
        if found and echo_differs(self.echoes, found[0], live_text(source)):
            return False
        if found and row_differs(self.row, found[0], live_text(source)):
            return False
        if found and self.beside is not None and not written_beside(
                found[0], self.beside, live_text(source), self.left, self.anchored):
            return False
        own = {" ".join(v.split()) for v in found}
        return all(not other or {" ".join(v.split()) for v in other} == own
                   for other in (twin.values(source) for twin in self.twins))

    def holds(self, value: Any, source: str, *, clean: bool = False,
              max_items: int | None = None, found: list[str] | None = None) -> bool:
        """Whether the locator finds exactly ``value`` in ``source``: a single
        value as its first value (``None``: no value), a list as its values,
        in order (a list of ``max_items`` items, the list's bound: the first
        ones); each compared with whitespace folded (``same_text``:
        a value the document wraps over continuation lines, written on one
        line), and with ``clean`` also in its clean form. ``found``: what
        ``values(source)`` gave, when the caller has it already (not read
        again)."""
        if found is None:
            found = self.values(source)
        if self.many:
            items = [str(v) for v in (value or [])]
            if max_items is not None and len(items) == max_items:
                found = found[:max_items]
            return len(items) == len(found) and all(
                same_text(f, v, clean=clean) for f, v in zip(found, items, strict=True))
        if value is None:
            return not found
        return bool(found) and same_text(found[0], str(value), clean=clean)

