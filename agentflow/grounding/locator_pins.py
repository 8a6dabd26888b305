"""Which values a learned locator may pin (``LocatorPins.pins``, a base of
``agentflow.grounding.locator_rule.Locator``): a value it finds is offered
either way, but pinned only where it shows nothing the examples' values never
show (an inline comment, a clause break, more words, quotes, a block marker,
another quantity, another head): there the rule may have read past the value
or into the document's syntax. ``agentflow.grounding.locators`` documents the
rules.
"""

from __future__ import annotations

import re

from agentflow.grounding.label_forms import quoted_unit
from agentflow.grounding.list_separators import unsplit
from agentflow.grounding.locator_places import is_gap
from agentflow.grounding.locator_reading import LocatorReading
from agentflow.grounding.quotes import in_quotes
from agentflow.grounding.token_shapes import same_kinds, token_shape
from agentflow.grounding.value_clauses import block_marker, clause_break, comment_tail
from agentflow.grounding.value_kinds import bare_number, whole_numbers

__all__ = ["GLUED_KEY", "LocatorPins"]

GLUED_KEY = re.compile(r"[^\W\d][\w.-]*(?:\[[^\]\s]*\])?=\Z")
"""A key glued to its ``=`` (``Name=``, ``Comment[de]=``, ``ExecStart=``): a
``key=value`` line of a configuration file (INI, ``.desktop``, systemd,
``.env``), whose value is the line's whole rest by the format's syntax."""

_KEY_INSIDE = re.compile(r"(?<![\w.-])[^\W\d][\w.-]*[ \t]*:[ \t]*\Z")
"""A key (one word) and its ``:`` that a rule's unanchored left context ends
with: a label written inside its line, after a comment's marker."""


class LocatorPins(LocatorReading):
    """The base of ``Locator`` that tells which values it may pin (``pins``),
    reading only the fields below and ``LocatorReading``'s (``Locator``
    holds them all, documented there)."""

    __slots__ = ()

    shapes: tuple[str, ...]
    clauses: bool
    spaced: bool
    head: str
    decimal: bool
    unit: bool

    def pins(self, value: str) -> bool:
        """Whether the rule may pin ``value`` (a single value it finds, or a
        list's item): not where the value holds an inline comment no example's
        value (item) shows (``comments``; ``agentflow.grounding.value_clauses``:
        ``https://x.org/a.git ; mirror``), nor, for a single value, a clause
        break no example's value shows (``clauses``; a list's items, copyright
        holders, write ``(C)`` and ``Inc.`` freely; a value read after a key
        glued to its ``=`` to the line's end, ``GLUED_KEY``, is the line's rest
        by its format's syntax: ``Name=Python (v3.11)``), nor several
        words where every example's value is one (``spaced``): the rule may
        have read past the value; nor one wrapped in quotes where no example's
        value begins with a quoted string (``quoted``): its quotes may be the
        document's syntax; nor one that begins with a marker line no example's
        value begins with (``marked``, ``block_marker``); nor a list's item
        that holds a separator-like character no example's item holds
        (``marks``: ``E203;W503`` may be two items); nor one of another
        quantity than every example's (``decimal``, ``unit``: ``agentflow.
        grounding.value_kinds``: a count ``3 items`` where each example's is
        an amount ``£117.60``, a bare ``2,400.00`` where each writes its
        currency); nor one without the head every example's value begins
        with (``head``)."""
        unit = self.anchored and quoted_unit(self.left, self.right)  # its quotes end it
        if self.many:
            return (self.comments or unit or not comment_tail(value)) and (
                self.marks is None or self.items or self.marker or unit
                or not unsplit(value, self.marks))
        if (self.decimal and whole_numbers(value)) or (self.unit and bare_number(value)):
            return False
        whole = self.labelled and not self.right and GLUED_KEY.match(self.left) is not None
        return (self.marked or not block_marker(value)) and (
            self.clauses or unit or whole or not clause_break(value)) and (
            self.comments or unit or not comment_tail(value)) and (
            self.spaced or unit or len(value.split()) <= 1 or self._more_words(value)) and (
            self.quoted or not in_quotes(value)) and (
            value.strip().casefold().startswith(self.head))

    def _more_words(self, value: str) -> bool:
        """Whether ``value``, of several words where every example's value is
        one, is still the value a labelled line's rest holds: the rule reads
        after a label to the line's end (the format's value is the line's
        rest; also a key written inside its line, after a comment's marker:
        ``SPDX-License-Identifier: `` of ``# ...`` and ``// ...``, ``Apache-2.0
        OR MIT``), or to a column gap (``locator_places.is_gap``: the rest of
        its column), and each word holds the kinds of characters the examples'
        values hold (``token_shapes.same_kinds``: ``GPL-2.0-or-later AND
        GPL-3.0-only`` for ``GPLv2+``, ``MIT``; never ``builtin 0.006`` for
        ``Dpkg::Exit``, nor a value up to another ``right`` the examples end
        it at, ``;``, nor a shell array ``('a' 'a-docs')`` where each
        example's ``pkgname=`` is a bare word, nor one that ends with a word of
        punctuation alone: a comment's border or closer, ``Apache-2.0 WITH
        LLVM-exception *|``)."""
        return (self.labelled or _KEY_INSIDE.search(self.left) is not None) and (
            not self.right or is_gap(self.right)) and same_kinds(value, self.shapes) and (
            token_shape(value.split()[-1]) is not None)
