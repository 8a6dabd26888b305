"""What a document shows around a learned locator's reading
(``LocatorSigns``, a base of ``agentflow.grounding.locator_rule.Locator``):
whether it writes the rule's label (empty or not, alone over continuation
lines, only at other depths, parent keys or ``---`` documents than the
examples'), its key elsewhere, and values read there that run across lines
or on past the line: the signs the grammar (``agentflow.grounding.
locator_absence``, ``locator_offer``) and the confidence of a value
(``agentflow.extraction.confidence``) ask. ``agentflow.grounding.locators``
documents the rules.
"""

from __future__ import annotations

import re

from agentflow.grounding.lines import arguments_after
from agentflow.grounding.list_heading import key_mentioned, key_written
from agentflow.grounding.locator_reading import LocatorReading
from agentflow.grounding.value_clauses import runs_on, value_below
from agentflow.grounding.void_blocks import live_text

__all__ = ["LocatorSigns"]

_KEYWORD_LABEL = re.compile(r"[^\W\d][\w.-]*(?:[ \t]+[^\s:=]+)*[ \t]+\Z")
"""A keyword label: words and blanks after them, no separator (``PermitRootLogin ``,
``Subsystem sftp ``; not ``Port: ``, ``name = ``)."""


class LocatorSigns(LocatorReading):
    """The signs of a document about a locator's label: a base of ``Locator``
    (which holds the fields, documented there), reading only
    ``LocatorReading``'s fields."""

    __slots__ = ()

    spaced: bool
    quiet: tuple[str, ...]

    def off_depth(self, source: str) -> bool:
        """Whether ``source`` writes the rule's label only at depths no example
        writes it at (``depth``; ``agentflow.grounding.depths``), only under
        other parent keys than every example's (``parents``: ``bugs.url`` for
        ``repository.url``), or, in a stream of several ``---`` documents,
        only outside the document the examples write it in (``document``: a
        later Service's ``namespace:``; ``agentflow.grounding.key_paths``):
        the values read there may be another thing's, so the rule offers
        them but pins none (``agentflow.extraction.confidence``)."""
        live = live_text(source)
        span = self._document_span(self._grouped(live))
        return (span is not None and not span[1]) or self._depth_rows(
            self.region(live).splitlines())[1]

    def writes_label(self, source: str) -> bool:
        """Whether ``source`` has a line the rule reads from (its label, with
        or without a value after it); ``False`` for a rule without a label
        (``labelled``). Under a ``group``, in any group: a label written in
        another group writes a value there, just not one the rule reads."""
        if not self.labelled:
            return False
        if self.heading:
            return key_written(source, self.heading)
        if self.arg is not None:
            return any(arguments_after(line, self.left) is not None for line in source.splitlines())
        return any(self._in_line(line, empty=True) for line in source.splitlines())

    def writes_empty(self, source: str) -> bool:
        """Whether ``source`` writes the rule's label with nothing after it
        (``Location:`` alone, and no continuation line under it): the
        document says the field is empty. Not where the next line that is
        not blank may hold the value (``agentflow.grounding.value_clauses.
        value_below``: a form or a PDF's text layer writes ``Carrier:`` above
        ``DPD``). Never under a
        ``heading``: the lines after a heading without items may be the
        list written another way (unmarked lines, prose). Under a ``group``,
        inside its groups only."""
        if not self.labelled or self.arg is not None or self.heading:
            return False
        lines = self.region(live_text(source)).splitlines()
        follows = self.follows
        return any(any(not r.strip() for r in self._in_line(line, empty=True))
                   and not (self.continued and follows(lines, i))
                   and not value_below(lines, i, self.lines) for i, line in self._read(lines))

    def writes_quoted_empty(self, source: str) -> bool:
        """Whether ``source`` writes the rule's label with an empty quoted
        string and nothing else after it (``MAILTO=""``, ``name = ''``): the
        value closed empty on its line, whatever the next line holds. Never
        under a ``heading`` or for an argument rule. Under a ``group``, inside
        its groups only."""
        if not self.labelled or self.arg is not None or self.heading:
            return False
        lines = self.region(live_text(source)).splitlines()
        return any(any(raw.strip() in ('""', "''") for raw in self._in_line(line, empty=True))
                   for _, line in self._read(lines))

    def begins_below(self, source: str) -> bool:
        """Whether ``source`` writes this continued rule's label alone on a
        line with continuation lines under it: a value read there begins
        below its label (``Copyright:`` over indented lines; ``Locator.
        shown_below``). ``False`` for a rule not ``continued`` or without a
        label. Under a ``group``, inside its groups only."""
        if not self.continued or not self.labelled or self.arg is not None or self.heading:
            return False
        lines = self.region(live_text(source)).splitlines()
        follows = self.follows
        return any(any(not raw.strip() for raw in self._in_line(line, empty=True))
                   and follows(lines, i) for i, line in self._read(lines))

    def reads_across(self, source: str) -> bool:
        """Whether a value this continued rule reads in ``source`` runs across
        continuation lines: a label line it reads has one holding text under
        it (``Locator.shown_across``). Under a ``group``, inside its groups
        only."""
        if not self.continued:
            return False
        lines = self.region(live_text(source)).splitlines()
        follows = self.follows
        return any(self._in_line(line, empty=True) and any(
            r.strip() for r in follows(lines, i)) for i, line in self._read(lines))

    def mentioned(self, source: str) -> bool:
        """Whether ``source`` writes this locator's key (``key``) somewhere
        the locator does not read a value from (``agentflow.grounding.
        list_heading.key_mentioned``): a null is only sure where the document
        does not write the field's key with a value the locator missed.
        Under a ``group``, in any group: the key written in another group may
        be the value the document means. Not on a line an example that leaves
        the field empty writes as it is (``quiet``: ``license_file = LICENSE``
        for ``license``)."""
        if self.quiet:
            source = "\n".join(line for line in source.splitlines()
                                if " ".join(line.split()).casefold() not in self.quiet)
        return bool(self.key) and not (self.marker and not self.heading) and (
            key_mentioned(source, self.key, self.heading))

    def label_written(self, source: str) -> bool:
        """Whether ``source`` writes the rule's label, whatever follows it: a
        line the rule reads from (``writes_label``), or, for a rule at a line's
        start, its key anywhere with something after it (``mentioned``:
        ``journal = {...}`` as an entry's last field, without the ``},`` the
        examples end the value with; ``title={`` for ``title = {``). The one
        test of "the label is written here" that both the grammar (``agentflow.
        grounding.locator_absence.absence_shown``: never null alone) and the
        confidence of a null (``agentflow.extraction.confidence``: never sure)
        ask."""
        return (self.labelled and self.writes_label(source)) or (
            self.anchored and self.mentioned(source))

    def runs_on(self, source: str, *, keys: bool = True) -> bool:
        """Whether a line this single-value rule reads a value from, to the
        line's end, goes on onto a plain next line it does not read
        (``agentflow.grounding.value_clauses.runs_on``): the value read there
        may be a cut one. Not onto a line an example writes (``lines``:
        ``compress`` under ``rotate 12``), nor onto any plain line where an
        example's value stops above one (``stops_short``), nor (``keys``),
        after a keyword label (``PermitRootLogin ``: no separator) whose
        examples' values are one word each (not ``spaced``), from a one-word
        value onto a line of the same shape (``usepam yes``). ``False`` for a
        ``paragraph`` rule (it reads such lines), lists, and values that end
        at a ``right`` text."""
        if self.many or self.right or self.paragraph or self.items or self.arg is not None:
            return False
        keyword = keys and not self.spaced and self.labelled and _KEYWORD_LABEL.match(
            self.left.lstrip()) is not None
        lines = self.region(live_text(source)).splitlines()
        for i, line in enumerate(lines):
            raws = [raw for raw in self._in_line(line) if raw.strip()]
            if raws and runs_on(lines, i, self.continued, self.follows, self.lines,
                                plain=not self.stops_short, keyword=keyword and all(
                                    len(raw.split()) == 1 for raw in raws)):
                return True
        return False
