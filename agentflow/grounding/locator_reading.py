"""How a learned locator reads a document (``LocatorReading``, the base of
``agentflow.grounding.locator_rule.Locator``): its values on the lines it
reads (after its label or numbered item marker, up to its ``right``, a
folded header's continuation lines included), its blocks over continuation
lines, the arguments of a line, inside the document's groups of the
rule's ``group`` only (``agentflow.grounding.groups``: ``[Desktop Entry]``)
and its fenced blocks of the rule's ``fence`` only (``agentflow.grounding.
fences``: a front matter), its label at the rule's ``depth`` where the
document writes it there (``agentflow.grounding.depths``). Whether the
document writes its label (empty or not) or its key elsewhere is
``agentflow.grounding.locator_signs``.
``agentflow.grounding.locators`` documents the rules.
"""

from __future__ import annotations

import re

from agentflow.grounding.depths import line_depths
from agentflow.grounding.escapes import read_escaped, unwrap_cdata
from agentflow.grounding.fences import in_fence
from agentflow.grounding.groups import in_group
from agentflow.grounding.items import own_items
from agentflow.grounding.key_paths import in_document, marked_document, parent_chains
from agentflow.grounding.label_forms import bare_label, label_at, right_for
from agentflow.grounding.lines import (
    arguments_after,
    continuation,
    continuation_to_key,
    paragraph_continuation,
    unfolded_to,
)
from agentflow.grounding.list_heading import sections
from agentflow.grounding.list_markers import item_lines, marker_length
from agentflow.grounding.list_separators import loose
from agentflow.grounding.locator_places import right_end
from agentflow.grounding.markup import tag_attributes, uncommented
from agentflow.grounding.member_lines import laid_out
from agentflow.grounding.quotes import past_quote, quoted_content, read_items
from agentflow.grounding.value_clauses import block_indicator, comment_arguments, comment_start
from agentflow.grounding.void_blocks import live_text

__all__ = ["LocatorReading"]


def _has_text(item: str) -> bool:
    """Whether a line of a block holds an item: a letter or a digit (a line
    of punctuation alone, such as deb822's `` .`` for an empty line inside a
    value, holds none)."""
    return any(c.isalnum() for c in item)


class LocatorReading:
    """The reading of a document by a locator: the base of ``Locator`` (which
    holds the fields, documented there), reading only the fields below."""

    __slots__ = ()

    left: str
    anchored: bool
    right: str
    split: str | None
    many: bool
    continued: bool
    arg: int | None
    paragraph: bool
    items: bool
    heading: str
    lines: tuple[str, ...]
    stops_short: bool
    comments: bool
    marked: bool
    marker: bool
    last: bool
    tail: str
    right_word: str
    quoted: bool
    group: str
    depth: int | None
    fence: str
    keyed: bool
    parents: tuple[str, ...]
    document: tuple[str, ...]
    marks: str | None

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
        ``left`` less separators, quotes and spaces (``Requires`` of ``Requires: ``,
        ``authors`` of ``authors = ["``)."""
        return self.heading or self.left.strip(" \t:=;,([{<>}]).-\"'")

    def follows(self, lines: list[str], i: int) -> list[str]:
        """The lines after ``lines[i]`` a continued value read there runs on
        over: its paragraph's (``paragraph``), else its continuation lines
        (``agentflow.grounding.lines.continuation``) up to a sibling key
        (``continuation_to_key``: ``with:`` under ``- uses: x``), past such
        keys only where an example's value runs over them (``keyed``)."""
        if self.paragraph:
            return paragraph_continuation(lines, i)
        return continuation(lines, i) if self.keyed else continuation_to_key(lines, i)

    def region(self, source: str) -> str:
        """``source`` as the rule reads it: under a ``group``, only the lines of
        the document's groups of that key (``agentflow.grounding.groups.
        in_group``: the others blanked; a document without group lines whole);
        under a ``fence``, only the lines inside the document's blocks of that
        fence (``agentflow.grounding.fences.in_fence``: a document without
        one all blank); a markup document's comments blanked (``agentflow.
        grounding.markup.uncommented``: a commented-out ``<item>`` is no
        element of the document); a JSON or markup document that writes
        several members on a line, one member a line (``agentflow.grounding.
        member_lines.laid_out``: a minified ``package.json``)."""
        source = self._grouped(uncommented(laid_out(source)))
        span = self._document_span(source)
        return in_document(source, span[0]) if span is not None and span[1] else source

    def _grouped(self, source: str) -> str:
        """``source`` inside the rule's ``group`` and ``fence`` (``region``)."""
        source = in_group(source, self.group) if self.group else source
        return in_fence(source, self.fence) if self.fence else source

    def _document_span(self, source: str) -> tuple[tuple[int, int], bool] | None:
        """Under ``document``, the lines of ``source``'s own document of a
        stream of several (``agentflow.grounding.key_paths.marked_document``)
        and whether it writes the rule's label; ``None`` where the rule has no
        ``document``, the text is one document, none is marked, or the
        text writes the label nowhere."""
        if not self.document or "---" not in source:
            return None
        lines = source.split("\n")
        span = marked_document(lines, self.document)
        if span is None:
            return None
        rows = self.label_rows(lines)
        if not rows:
            return None
        return span, any(span[0] <= i < span[1] for i in rows)

    def label_rows(self, lines: list[str]) -> list[int]:
        """The indexes of ``lines`` that write the rule's label (an ``arg``
        rule's: a line whose first arguments are ``left``)."""
        if self.arg is not None:
            return [i for i, line in enumerate(lines)
                    if arguments_after(line, self.left) is not None]
        return [i for i, line in enumerate(lines) if self._in_line(line, empty=True)]

    def _depth_rows(self, lines: list[str]) -> tuple[set[int] | None, bool]:
        """The indexes of ``lines`` the rule reads labels on under its
        ``depth`` (``None``: all), and whether the document writes the
        label, but never at that depth (``off_depth``)."""
        if self.depth is None or not (self.labelled or self.arg is not None) or self.heading:
            return None, False
        rows = self.label_rows(lines)
        if not rows:
            return None, False
        depths = line_depths(lines)
        tagged = {i for i in rows if self._tag_starts(lines[i])}  # one level in: the tag's
        at = {i for i in rows if depths[i] + (i in tagged) == self.depth}
        if at and self.parents:  # (under the parent keys every example writes it under)
            n = len(self.parents)
            chains = parent_chains(lines, at)
            at = {i for i in at if ((self.parents[0], *chains[i]) if i in tagged else chains[i])[
                :n] == self.parents}
        return (at, False) if at else (None, True)

    def _tag_starts(self, line: str) -> list[int]:
        """Where ``line`` writes the rule's label as an attribute of a start
        tag it begins with (``<activity android:name=".Splash" />``), of the
        element the rule reads inside (its nearest parent, ``<activity>``:
        ``agentflow.grounding.markup.tag_attributes``), for a label the
        examples write at the start of an attribute line of that element's
        tag written over lines (``android:name="``): the offsets after the
        label; else ``[]``."""
        if not self.anchored or not self.parents:
            return []
        parent = self.parents[0]
        if not (parent.startswith("<") and parent.endswith(">")) or line.lstrip()[:1] != "<":
            return []
        return tag_attributes(line, parent[1:-1], self.left.lstrip())

    def _values(self, source: str, live: bool = True) -> list[str]:
        """The values this locator finds in ``source``, in document order
        (list items each; each value stripped, never empty). A continued
        list: the items of its first block only (the value the examples
        show: one field's lines), ``blocks`` has them all; a value a
        CDATA section wraps, out of it, and a markup or JSON document's
        escapes read (``agentflow.grounding.escapes``: ``Salt &amp; Pepper``
        is ``Salt & Pepper``). An ``items``
        rule: the own text of each of the document's list items. Under a
        ``heading``: only the lists under it; under a ``group``: only inside
        its groups. Read from the live text (``agentflow.grounding.
        void_blocks``); ``live=False``: the whole text."""
        document = source
        source = self.region(live_text(source) if live else source)
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
            for raw in self._in_line(line, lines=lines, row=i):  # (out of a CDATA wrapper)
                if (inner := unwrap_cdata(raw)) != raw:
                    found += read_items(inner, self.split, unquote=self._unquotes,
                                         exact=self._exact)
                    continue
                found += [read_escaped(v, document) for v in read_items(
                    raw, self.split, unquote=self._unquotes, exact=self._exact)]
        return found

    @property
    def _exact(self) -> bool:
        """Whether the rule splits its items at ``split`` as written alone, not
        at its other forms (``agentflow.grounding.list_separators.loose``)."""
        return self.split is not None and not loose(self.split, self.marks)

    @property
    def _unquotes(self) -> bool:
        """Whether the rule reads its values out of their quotes (``agentflow.
        grounding.quotes``): no example's value is quoted (``quoted``), and it
        reads after a label or inside a line (never a list item's or a line's
        whole content)."""
        return not self.quoted and (not self.anchored or (
            not self.marker and any(c.isalnum() for c in self.left)))

    def _arguments(self, source: str) -> list[str]:
        """Argument ``arg`` after the first arguments ``left`` of each line
        that begins with them, where the line ends with the arguments
        ``tail`` (if any)."""
        out = []
        lines = source.splitlines()
        rows = self._depth_rows(lines)[0]
        for i, line in enumerate(lines):
            if rows is not None and i not in rows:
                continue
            args = arguments_after(line, self.left) or []
            if not self.comments:
                args = comment_arguments(line, args)
            if self.arg is not None and len(args) > self.arg and not (
                    self.last and len(args) > self.arg + 1) and (not self.tail or " ".join(
                        line[slice(*a)] for a in args[self.arg + 1:]) == self.tail):
                value = line[slice(*args[self.arg])].strip()
                if not self.quoted and (span := quoted_content(value)) is not None:
                    value = value[span[0]:span[1]].strip()  # ``'v5.3.1'``: as ``"2.8.0"``
                if value:
                    out.append(value)
        return out

    def blocks(self, source: str, *, live: bool = True) -> list[list[str]]:
        """Under ``continued``, each place the locator finds, in document
        order: a list's items (the rest of the label line, then each
        continuation line's content, split by ``split``; a line of
        punctuation alone, deb822's `` .``, is no item), or a single
        value's whole text (one string: the source's own text from after
        ``left`` to the end of the block, stripped); ``[]`` otherwise (``live``,
        ``group``: ``_values``)."""
        if not self.continued:
            return []
        lines = self.region(live_text(source) if live else source).splitlines()
        out: list[list[str]] = []
        for i, line in self._read(lines):
            for raw in self._in_line(line, empty=True):  # the value may begin on the next line
                rest = self.follows(lines, i)
                if not self.many:
                    body = [raw, *lines[i + 1:i + 1 + len(rest)]]
                    if rest and not self.marked and block_indicator(raw):
                        body = body[1:]  # a YAML block scalar's ``>-``: the value is below
                    text = "\n".join(body)
                    if whole := read_items(text, None, unquote=self._unquotes):
                        out.append(whole)
                    continue
                items = []
                for part in [raw, *rest]:
                    items += [v for v in read_items(part, self.split, unquote=self._unquotes,
                                                    exact=self._exact) if _has_text(v)]
                if items:
                    out.append(items)
        return out

    def _read(self, lines: list[str]) -> list[tuple[int, str]]:
        """``lines`` the rule reads, with their indexes: under a ``marker``
        only items of a list of its kind (``list_markers.item_lines``: no
        initial, ``J. Smith``); under a ``depth``, only label lines at that
        depth where the document writes one there."""
        items = item_lines(lines, self.left) if self.marker else self._depth_rows(lines)[0]
        return [(i, line) for i, line in enumerate(lines) if items is None or i in items]

    def _in_line(self, line: str, empty: bool = False, lines: list[str] | None = None,
                 row: int = 0) -> list[str]:
        """The raw values after ``left`` (up to ``right``) on ``line``;
        ``empty``: also where nothing follows ``left`` there; ``lines``: the
        document's, ``line`` being ``lines[row]``: a labelled line's ``right``
        may be on its continuation lines (``agentflow.grounding.lines.
        unfolded_to``: a folded header, ``From: A Long Name`` / `` <a@x.org>``)."""
        opener = ""  # the opener the document writes after the label, where not the label's
        if self.marker:  # a numbered item marker of one kind (``1. ``, ``(a) ``)
            body = line.lstrip()
            n = marker_length(body, self.left)
            if n is None:
                return []
            starts = [len(line) - len(body) + n]
        elif self.anchored:
            body = line.lstrip()
            label = self.left.lstrip()
            at = label_at(body, label, self.right)  # other spacing, another opener of its family
            rest = at is not None and bool(body[at[0]:].strip())
            alone = body.rstrip().casefold() == label.rstrip().casefold() or (
                at is not None and not rest)
            longer = at is not None and rest and at[0] > len(label) and bare_label(label)
            if body[: len(label)].casefold() == label.casefold() and not longer:
                starts = [len(line) - len(body) + len(label)]  # (``Port = 2222``: ``at``'s)
            elif at is not None and rest:
                starts = [len(line) - len(body) + at[0]]
                opener = at[1]
            elif tagged := self._tag_starts(line):
                starts = tagged  # an attribute on the line of the element's start tag
            elif alone and empty:
                return [""]  # the label alone (``Copyright:``): the value is on the next lines
            elif alone and self.right and lines:
                starts = [len(line)]  # a header folded after its label, up to ``right``
            else:
                return []  # (a key's letter case varies: Author-email, Author-Email)
        else:
            bound = r"(?<!\w)" if self.left[:1].isalnum() else ""  # a label's whole first word
            starts = [m.end() for m in re.finditer(bound + re.escape(self.left), line)]
        right = right_for(self.left.lstrip(), self.right, opener)  # the opener's own closer
        out = []
        for start in starts:
            if right:
                end = right_end(line, past_quote(line, start) if self._unquotes else start,
                                right, self.right_word)
                if end < 0:
                    folded = unfolded_to(lines, row, start, right, word=self.right_word,
                                         quoted=self._unquotes) if lines and self.labelled else None
                    if folded is not None and folded.strip():
                        out.append(folded)
                    continue
            else:  # to the line's end, less an inline comment no example's value holds
                end = len(line) if self.comments else comment_start(
                    line, past_quote(line, start), len(line))
            if empty or line[start:end].strip():
                out.append(line[start:end])
        return out
