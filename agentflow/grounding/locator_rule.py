"""A learned locator: where one field's value lives in a document, and the
values it finds there (``agentflow.grounding.locators`` learns them from
worked examples and documents the rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentflow.grounding.edges import clean_edges
from agentflow.grounding.folding import same_text
from agentflow.grounding.items import own_items
from agentflow.grounding.lines import (
    continuation,
    line_arguments,
    paragraph_continuation,
    unfolded_to,
)
from agentflow.grounding.list_heading import key_mentioned, key_written, sections
from agentflow.grounding.list_markers import item_lines, marker_length
from agentflow.grounding.locator_places import right_end
from agentflow.grounding.quotes import in_quotes, past_quote, read_items
from agentflow.grounding.value_clauses import clause_break, runs_on, value_below
from agentflow.grounding.void_blocks import live_text

__all__ = ["VALUES_KEY", "Locator", "clean_edges", "line_arguments", "same_text"]
# clean_edges (grounding.edges), line_arguments (grounding.lines) and same_text
# (grounding.folding) are re-exported: their import path from here keeps working

VALUES_KEY = "x-grounded-values"
"""JSON Schema keyword on a grounded string node: the only values the grammar
offers (a locator's values in this document); on a list node, its items, or
lists of items (a continued locator's blocks): exactly one of them. Kept by
the ``local`` dialect, dropped by every other."""


def _has_text(item: str) -> bool:
    """Whether a line of a block holds an item: a letter or a digit (a line
    of punctuation alone, such as deb822's `` .`` for an empty line inside a
    value, holds none)."""
    return any(c.isalnum() for c in item)


@dataclass(frozen=True, slots=True)
class Locator:
    """Where one field's value lives (``agentflow.grounding.locators`` documents the rules).

    Attributes:
        field: the field's name (top level of the output type).
        left: the text just before the value on its line (never empty).
        anchored: the line's content begins with ``left`` (a label).
        right: the text just after the value; ``""``: the line's end.
        right_word: the word every example writes next after ``right``
            (``see`` of ``, see LICENSE for details.``), or ``""``: the
            value ends at the first ``right`` it follows (``Apache License,
            Version 2.0`` of ``Apache License, Version 2.0, see LICENSE``);
            a line where none does gives no value (the rule cannot tell the
            value's own ``, `` from the examples').
        split: the separator between list items written on one line, or
            ``None`` (one value per line).
        many: the field is a list.
        continued: the value runs on over its line's continuation lines
            (``agentflow.grounding.locators``).
        arg: the value is this argument (0: the first after ``left``) of a
            line whose first argument is ``left`` (``line_arguments``:
            ``.TH NAME "1" "May 2023"``), or ``None`` (``left`` and
            ``right`` are the text around it).
        paragraph: under ``continued``, the value goes on over the next
            lines of its paragraph (``agentflow.grounding.lines.
            paragraph_continuation``) rather than over deeper-indented ones.
        items: a list that is every list item of the document, each as
            its own text (``agentflow.grounding.items.own_items``: its
            marker line and continuation lines, up to a nested item, which
            is an item of its own), in document order, whatever lines
            (group headings such as ``[ Jane ]``, blank lines) lie between
            them; ``left`` is then ``""``.
        letter: a single value must hold a letter (every example's value
            does: a currency code ``GBP`` / ``EUR``, never ``19.80``).
        digit: a single value must hold a digit (every example's value
            does: a time ``8:00 pm`` / ``10:00``, never ``Leamington Spa``).
            A place's text without them is not the kind of value the
            examples show there: ``values`` does not find it.
        lines: the examples' lines that begin with no key (``agentflow.
            grounding.locator_absence.layout_lines``: headings, list items,
            prose): with ``layout``, what a document written only the
            examples' way writes.
        shapes: the shapes of the tokens of the field's example values
            (``agentflow.grounding.token_shapes.token_shape``): what
            text outside the examples' layout could hold the field.
        clauses: a single value may hold a clause break (``agentflow.
            grounding.value_clauses``: a bracketed note, a second sentence);
            learned ``False`` where no example's value does: a value with
            one (``Date: 20 May 2024 (rescheduled from 13 May)``) is then
            offered, but never pinned (``pins``).
        spaced: a single value may hold a space; learned ``False`` where
            every example's value is one word: a value of several words
            (``builtin 0.006`` where the examples wrote ``Dpkg::Exit``) is
            then offered, but never pinned (``pins``): one-word examples
            show neither that the value is one word nor that the rule's end
            is the value's.
        layout: the keys the examples' lines begin with (``agentflow.
            grounding.locator_absence.layout_keys``): whether a document
            where the rule finds nothing is written the examples' way.
        shown_empty: an example leaves the field empty (null, an empty
            list): the examples show how its absence looks.
        heading: for a list rule without a label (``- `` items, every list
            item), the key of the heading every example writes its list
            under (``agentflow.grounding.list_heading``: ``notes`` of
            ``Notes:``), or ``""``: the rule reads only the lists under
            such a heading, and the heading is its label.
        marker: ``left`` is a numbered item marker kind (``"1. "``,
            ``"(a) "``: ``agentflow.grounding.list_markers``), the line
            start of every value: a numbered list's items, read as a
            bullet's (``anchored``; never a label); a letter or roman one
            only in a list in sequence (``item_lines``: no ``J. Smith``).
        last: under ``arg``, the argument was the last of its line in every
            example: they cannot show whether the value stops at it, so a
            line that goes on after it gives no value (the field is then
            scored as if it had no rule: ``agentflow.extraction.confidence``).
        quoted: a value may begin with a quoted string; learned ``False``
            where no example's value (nor item) does: a rule reading after
            a label or inside a line then reads a value (an item) that is
            one quoted string as its content (``agentflow.grounding.quotes``:
            ``John Q. Public`` of ``From: "John Q. Public" <jqp@x.org>``),
            and never pins one still wrapped in quotes (``"a \\"b\\""``).

    Every value is read from the document's live text (``agentflow.
    grounding.void_blocks.live_text``): never from a block or line the
    document marks cancelled, superseded or struck out.
    """

    field: str
    left: str
    anchored: bool
    right: str
    split: str | None = None
    many: bool = False
    continued: bool = False
    arg: int | None = None
    paragraph: bool = False
    items: bool = False
    letter: bool = False
    digit: bool = False
    layout: tuple[str, ...] = ()
    shown_empty: bool = False
    heading: str = ""
    clauses: bool = True
    spaced: bool = True
    lines: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    marker: bool = False
    last: bool = False
    right_word: str = ""
    quoted: bool = True

    def fits(self, value: str) -> bool:
        """Whether ``value`` is the kind of value the examples show (``letter``,
        ``digit``); a list's items are not checked."""
        if self.many:
            return True
        return (not self.letter or any(c.isalpha() for c in value)) and (
            not self.digit or any(c.isdigit() for c in value))

    def pins(self, value: str) -> bool:
        """Whether the rule may pin ``value`` (a single value it finds): not
        where the value holds a clause break no example's value shows
        (``clauses``; ``agentflow.grounding.value_clauses``), nor several
        words where every example's value is one (``spaced``): the rule may
        have read past the value; nor one wrapped in quotes where no example's
        value begins with a quoted string (``quoted``): its quotes may be the
        document's syntax."""
        if self.many:
            return True
        return (self.clauses or not clause_break(value)) and (
            self.spaced or len(value.split()) <= 1) and (self.quoted or not in_quotes(value))

    @property
    def labelled(self) -> bool:
        """Whether the rule reads after a label: a line start with a word in it
        (``Location: ``, ``.TH``), not punctuation alone (``- ``, `` (``), nor
        a numbered item marker (``marker``), or under a list's ``heading``."""
        return bool(self.heading) or (self.anchored and not self.items and not self.marker
                                      and any(c.isalnum() for c in self.left))

    @property
    def key(self) -> str:
        """The field's key as a document writes it: the ``heading``, else
        ``left`` less separators and spaces (``Requires`` of ``Requires: ``)."""
        return self.heading or self.left.strip(" \t:=;,([{<>}]).-")

    def writes_label(self, source: str) -> bool:
        """Whether ``source`` has a line the rule reads from (its label, with
        or without a value after it); ``False`` for a rule without a label
        (``labelled``)."""
        if not self.labelled:
            return False
        if self.heading:
            return key_written(source, self.heading)
        if self.arg is not None:
            return any(args and line[slice(*args[0])] == self.left
                       for line in source.splitlines() for args in [line_arguments(line)])
        return any(self._in_line(line, empty=True) for line in source.splitlines())

    def writes_empty(self, source: str) -> bool:
        """Whether ``source`` writes the rule's label with nothing after it
        (``Location:`` alone, and no continuation line under it): the
        document says the field is empty. Not where the next line that is
        not blank may hold the value (``agentflow.grounding.value_clauses.
        value_below``: a form or a PDF's text layer writes ``Carrier:`` above
        ``DPD``). Never under a
        ``heading``: the lines after a heading without items may be the
        list written another way (unmarked lines, prose)."""
        if not self.labelled or self.arg is not None or self.heading:
            return False
        lines = live_text(source).splitlines()
        follows = paragraph_continuation if self.paragraph else continuation
        return any(any(not r.strip() for r in self._in_line(line, empty=True))
                   and not (self.continued and follows(lines, i))
                   and not value_below(lines, i, self.lines) for i, line in enumerate(lines))

    def values(self, source: str, *, live: bool = True) -> list[str]:
        """The values this locator finds in ``source`` that fit the examples'
        kind of value (``fits``), in document order (see ``_values``)."""
        return [v for v in self._values(source, live) if self.fits(v)]

    def _values(self, source: str, live: bool = True) -> list[str]:
        """The values this locator finds in ``source``, in document order
        (list items each; each value stripped, never empty). A continued
        list: the items of its first block only (the value the examples
        show: one field's lines), ``blocks`` has them all. An ``items``
        rule: the own text of each of the document's list items. Under a
        ``heading``: only the lists under it. Read from the live text
        (``agentflow.grounding.void_blocks``); ``live=False``: the whole text."""
        source = live_text(source) if live else source
        if self.heading:
            source = "\n\n".join(sections(source, self.heading))
        if self.items:
            return own_items(source)
        if self.arg is not None:
            return self._arguments(source)
        if self.continued:
            blocks = self.blocks(source, live=False)  # (live already where it should be)
            if self.many:
                return blocks[0] if blocks else []
            return [b[0] for b in blocks]
        found: list[str] = []
        lines = source.splitlines()
        for i, line in self._read(lines):
            for raw in self._in_line(line, lines=lines, at=i):
                found += read_items(raw, self.split, unquote=self._unquotes)
        return found

    @property
    def _unquotes(self) -> bool:
        """Whether the rule reads its values out of their quotes (``agentflow.
        grounding.quotes``): no example's value is quoted (``quoted``), and it
        reads after a label or inside a line (never a list item's or a line's
        whole content)."""
        return not self.quoted and (not self.anchored or (
            not self.marker and any(c.isalnum() for c in self.left)))

    def _arguments(self, source: str) -> list[str]:
        """Argument ``arg`` of each line whose first argument is ``left``."""
        out = []
        for line in source.splitlines():
            args = line_arguments(line)
            if self.arg is not None and len(args) > self.arg + 1 and (
                    line[slice(*args[0])] == self.left) and not (
                    self.last and len(args) > self.arg + 2):
                value = line[slice(*args[self.arg + 1])].strip()
                if value:
                    out.append(value)
        return out

    def blocks(self, source: str, *, live: bool = True) -> list[list[str]]:
        """Under ``continued``, each place the locator finds, in document
        order: a list's items (the rest of the label line, then each
        continuation line's content, split by ``split``; a line of
        punctuation alone, deb822's `` .``, is no item), or a single
        value's whole text (one string: the source's own text from after
        ``left`` to the end of the block, stripped); ``[]`` otherwise (``live``: ``_values``)."""
        if not self.continued:
            return []
        lines = (live_text(source) if live else source).splitlines()
        out: list[list[str]] = []
        for i, line in self._read(lines):
            for raw in self._in_line(line, empty=True):  # the value may begin on the next line
                rest = (paragraph_continuation if self.paragraph else continuation)(lines, i)
                if not self.many:
                    text = "\n".join([raw, *lines[i + 1:i + 1 + len(rest)]])
                    if whole := read_items(text, None, unquote=self._unquotes):
                        out.append(whole)
                    continue
                items = []
                for part in [raw, *rest]:
                    items += [v for v in read_items(part, self.split, unquote=self._unquotes)
                              if _has_text(v)]
                if items:
                    out.append(items)
        return out

    def _read(self, lines: list[str]) -> list[tuple[int, str]]:
        """``lines`` the rule reads, with their indexes: under a ``marker``
        only items of a list of its kind (``list_markers.item_lines``: no
        initial, ``J. Smith``)."""
        items = item_lines(lines, self.left) if self.marker else None
        return [(i, line) for i, line in enumerate(lines) if items is None or i in items]

    def _in_line(self, line: str, empty: bool = False, lines: list[str] | None = None,
                 at: int = 0) -> list[str]:
        """The raw values after ``left`` (up to ``right``) on ``line``;
        ``empty``: also where nothing follows ``left`` there; ``lines``: the
        document's, ``line`` being ``lines[at]``: a labelled line's ``right``
        may be on its continuation lines (``agentflow.grounding.lines.
        unfolded_to``: a folded header, ``From: A Long Name`` / `` <a@x.org>``)."""
        if self.marker:  # a numbered item marker of one kind (``1. ``, ``(a) ``)
            body = line.lstrip()
            n = marker_length(body, self.left)
            if n is None:
                return []
            starts = [len(line) - len(body) + n]
        elif self.anchored:
            body = line.lstrip()
            label = self.left.lstrip()
            alone = body.rstrip().casefold() == label.rstrip().casefold()
            if body[: len(label)].casefold() == label.casefold():
                starts = [len(line) - len(body) + len(label)]
            elif alone and empty:
                return [""]  # the label alone (``Copyright:``): the value is on the next lines
            elif alone and self.right and lines:
                starts = [len(line)]  # a header folded after its label, up to ``right``
            else:
                return []  # (a key's letter case varies: Author-email, Author-Email)
        else:
            starts = [m.end() for m in re.finditer(re.escape(self.left), line)]
        out = []
        for start in starts:
            if self.right:
                end = right_end(line, past_quote(line, start) if self._unquotes else start,
                                self.right, self.right_word)
                if end < 0:
                    folded = unfolded_to(lines, at, start, self.right, word=self.right_word,
                                         quoted=self._unquotes) if lines and self.labelled else None
                    if folded is not None and folded.strip():
                        out.append(folded)
                    continue
            else:
                end = len(line)
            if empty or line[start:end].strip():
                out.append(line[start:end])
        return out

    def mentioned(self, source: str) -> bool:
        """Whether ``source`` writes this locator's key (``key``) somewhere
        the locator does not read a value from (``agentflow.grounding.
        list_heading.key_mentioned``): a null is only sure where the document
        does not write the field's key with a value the locator missed."""
        return bool(self.key) and not (self.marker and not self.heading) and (
            key_mentioned(source, self.key, self.heading))

    def runs_on(self, source: str) -> bool:
        """Whether a line this single-value rule reads a value from, to the
        line's end, goes on onto a plain next line it does not read
        (``agentflow.grounding.value_clauses.runs_on``): the value read there
        may be a cut one. ``False`` for a ``paragraph`` rule (it reads such
        lines), lists, and values that end at a ``right`` text."""
        if self.many or self.right or self.paragraph or self.items or self.arg is not None:
            return False
        lines = live_text(source).splitlines()
        return any(runs_on(lines, i, self.continued) for i, line in enumerate(lines)
                   if any(raw.strip() for raw in self._in_line(line)))

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

    def describe(self) -> str:
        """The rule in words (for reports): ``after 'Version: ' to the line's end``."""
        where = "at the start of a line after" if self.anchored else "after"
        until = f"up to {self.right!r}" if self.right else "to the end of the line"
        if self.right_word:
            until += f" before {self.right_word!r}"
        split = f", items split by {self.split!r}" if self.split else ""
        under = f" under a heading {self.heading!r}" if self.heading else ""
        if self.items:
            return f"{self.field}: every list item (its own lines){under}, in order"
        if self.arg is not None:
            only = ", the last on its line" if self.last else ""
            return (f"{self.field}: argument {self.arg + 1} (one word, or one quoted string"
                    f"{only}) of a line that begins with {self.left!r}")
        if self.marker:
            where = "at the start of a line after a numbered item marker like"

        more = (", and on over its paragraph's next lines" if self.paragraph else
                ", and on over its continuation lines" if self.continued else "")
        return f"{self.field}: {where} {self.left!r}, {until}{split}{more}{under}"
