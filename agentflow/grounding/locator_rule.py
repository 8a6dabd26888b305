"""A learned locator: where one field's value lives in a document, and the
values it finds there (``agentflow.grounding.locators`` learns them from
worked examples and documents the rules; ``agentflow.grounding.
locator_reading`` reads a document the locator's way, ``locator_signs`` what
the document shows around its label, ``locator_pins`` which values it may pin,
``locator_finds`` the values it finds and whether they are a given value).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentflow.grounding.edges import clean_edges
from agentflow.grounding.folding import same_text
from agentflow.grounding.lines import line_arguments
from agentflow.grounding.locator_finds import LocatorFinds
from agentflow.grounding.locator_pins import LocatorPins
from agentflow.grounding.locator_signs import LocatorSigns
from agentflow.grounding.locator_words import LocatorWords
from agentflow.grounding.value_clauses import block_marker
from agentflow.grounding.value_kinds import figure

__all__ = ["VALUES_KEY", "Locator", "block_marker", "clean_edges", "figure", "line_arguments",
           "same_text"]
# clean_edges (grounding.edges), line_arguments (grounding.lines), same_text
# (grounding.folding), figure (grounding.value_kinds) and block_marker
# (grounding.value_clauses) are re-exported: their import path from here keeps working

VALUES_KEY = "x-grounded-values"
"""JSON Schema keyword on a grounded string node: the only values the grammar
offers (a locator's values in this document); on a list node, its items, or
lists of items (a continued locator's blocks): exactly one of them. Kept by
the ``local`` dialect, dropped by every other."""


@dataclass(frozen=True, slots=True)
class Locator(LocatorWords, LocatorSigns, LocatorPins, LocatorFinds):
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
            line whose first arguments are ``left`` (``line_arguments``:
            ``.TH NAME "1" "May 2023"``; ``We recommend that you upgrade
            your`` of a sentence), or ``None`` (``left`` and ``right`` are
            the text around it). ``tail``: the arguments every example's
            line ends with after the value (``packages.``), or ``""``: a
            line ending otherwise gives no value.
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
            writes a figure, ``figure``: a time ``8:00 pm`` / ``10:00``, never
            ``Leamington Spa``; not where the examples' digits are inside
            words, ``GPL-3.0-only``). A place's text without them is not the
            kind of value the examples show there: ``values`` does not find
            it (nor, after a label, a later place's).
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
            is the value's. Unless a label's line (or column, up to a gap)
            is read to its end and each word holds the kinds of characters
            the examples' values hold (``GPL-2.0-or-later AND GPL-3.0-only``
            for ``MIT``, ``GPLv2+``: ``_more_words``), or the value is one
            quoted string (``label_forms.quoted_unit``: its quotes bound it,
            whatever it holds; likewise for ``clauses`` and ``comments``).
        layout: the keys the examples' lines begin with (``agentflow.
            grounding.locator_absence.layout_keys``): whether a document
            where the rule finds nothing is written the examples' way.
        skeleton: the keys every example's lines begin with (of ``layout``:
            ``name``, ``version`` of two manifests, not one's dependency
            names): a document that writes them is written the examples'
            way too (``agentflow.grounding.locator_absence.shares_layout``).
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
        group: the key of the INI-style group line every example that fills
            the field writes its value under (``agentflow.grounding.groups``:
            ``[desktop entry]``; ``""``: none, or not the same in all): the
            rule then reads only inside the document's groups of that key (a
            document without group lines whole), never the same key in
            another group (``Exec=`` of ``[Desktop Action new]``).
        comments: a single value may hold an inline comment (``agentflow.
            grounding.value_clauses.comment_tail``); learned ``False`` where
            no example's value does: a value with one (``glib-2.0 # gio-2.0
            when built with --enable-gio``) is then offered, but never
            pinned (``pins``): the rule read past the value into the
            document's comment.
        shown_below: under ``continued``, an example writes the rule's label
            alone on its line, the value on the continuation lines below it
            (``begins_below``: DEP-5's ``Copyright:`` over indented lines);
            learned ``False`` where none does: a single value read below its
            label (``Requires:`` over an indented ``zlib``, where the format
            may have no continuation lines) is then offered, but never
            pinned (``agentflow.extraction.confidence``).
        shown_across: under ``continued``, an example's value of some field
            runs across its continuation lines (``reads_across``: a long
            ``Subject:`` folded over indented lines, a wrapped ``Depends:``),
            so the examples show the format's continuation lines carry
            values; learned ``False`` where none does: a single value read
            across them (a vCard's ``FN:`` folded mid-word, RFC 6350's CRLF
            and one space, which unfolding removes) is then offered, but
            never pinned (``agentflow.extraction.confidence``).
        stops_short: an example's value read to its line's end stops above a
            plain next line that begins in lower case (``rotate 7`` over
            ``compress``, ``create 644 root root`` over ``postrotate``:
            ``LocatorSigns.runs_on``, the examples' lines aside): the
            examples show such a line is the format's next line, not the
            value's rest, so only a line join (``\\``) makes a value read
            there run on; learned ``False`` where no example shows one.
        depth: for a rule reading after a label (or an ``arg`` rule), the
            nesting depth every example writes its label line at
            (``agentflow.grounding.depths``: ``0`` for a YAML top-level key,
            ``1`` for a JSON object's key), or ``None``
            (not the same in all): the rule reads only the labels at that
            depth where the document writes one there (never a nested
            ``version:`` of a CITATION.cff's ``references:``); where it writes
            the label only at another depth, the values read there are
            offered, but never pinned (``LocatorSigns.off_depth``).
        fence: the key of the fenced block every example that fills the field
            writes its value inside (``agentflow.grounding.fences``: ``^---``,
            a Markdown page's front matter), or ``""``: the rule then reads
            only inside such blocks (never a key in a code block of the body,
            nor in a page without the block).
        keyed: under ``continued``, an example's value runs on over a
            continuation line that begins with a key at its own key's column
            (``agentflow.grounding.lines.continuation_to_key``); learned
            ``False`` where none does: a value then stops before such a
            line (YAML ``- uses: x`` followed by ``  with:``, a sibling key
            and its block, is ``x``).
        head: for a single value, the head every example's value begins with
            (``agentflow.grounding.value_heads``: ``actions/checkout@``),
            learned where an example's label also holds a value without it
            (another ``- uses:``), else ``""``: a value without it is then
            offered, but never pinned (``pins``).
        marked: a single value may begin with a line of punctuation alone
            followed by more lines (a YAML block scalar's ``>-`` or ``|``
            indicator, ``block_marker``); learned ``False`` where no
            example's value does: such a value is then offered, but never
            pinned (``pins``): the rule read the document's syntax with it.
        twins: rules of other places that held on every example as well
            (``agentflow.grounding.locator_twins``: each example writes the
            value twice, ``[submodule "cub"]`` and ``path = cub``): the
            examples cannot tell which place is the field's, so on a
            document where one of them reads other values (``twins_agree``;
            one that reads nothing says nothing) the rule neither narrows
            the grammar nor pins a value.
        first_record: every example that fills the field writes it in its
            first record (``agentflow.grounding.locator_records``: lines
            between blank lines, records alike; brace blocks), before any
            blank line; where the rule finds it only in a later
            record of a document, the value is offered, never pinned.
        record: the kind of sibling block a single-value rule's examples
            show its value inside the first of (``agentflow.grounding.
            locator_siblings``: ``under 0 services`` of docker-compose, ``head
            host`` of ssh_config), or ``""``: where the rule finds the value
            only in a later such block of a document, null is offered beside
            it, and it is never pinned.
        section: the keyword of the section lines every example that writes
            one writes its single value above (``agentflow.grounding.
            locator_sections``: sshd_config's ``Match Group admins``, an
            ssh_config's ``Host``, a line an example indents lines under),
            or ``""``: on a document that writes such a line, a value the
            rule finds only below the first (a ``Match`` block written flush
            left) is offered beside null, never pinned.
        several: a continued list rule whose label an example writes twice
            with different items, its value the first block (``agentflow.
            grounding.locator_records``); learned ``False`` where none does:
            a document whose blocks differ is then offered, never pinned.
            A single-value rule with a ``record`` kind: an example writes its
            label in two records with different values, its value the first
            record's; where none does, a document whose records write
            different values is offered, never pinned.
        parents: under ``depth``, the keys of the lines enclosing the label
            line, nearest first, as far as every example writes the same
            (``agentflow.grounding.key_paths.parent_keys``: ``repository`` of
            a package.json's ``"url": "``, ``metadata`` of a manifest's
            ``namespace:``), or ``()``: the rule reads the label only under
            them where the document writes it there; where it writes it
            only under other keys (``bugs.url``), the values read there are
            offered, but never pinned (``LocatorSigns.off_depth``).
        document: the keys that tell the document of a ``---`` stream every
            example writes the value in from the others (``agentflow.
            grounding.key_paths.learn_document``: ``replicas``, ``template``
            of a Deployment beside a Service), or ``()``: on a stream of
            several documents the rule reads only the one that writes the
            most of them, where it writes the label; where it does not, the
            values read in other documents are offered, but never pinned.
        echoes: the other keys every example also writes the single value
            after (``agentflow.grounding.echo_keys``: ``name:`` where the rule
            reads ``app:``, both ``shop`` in each example), or ``()``: the
            examples cannot tell which key is meant, so on a document that
            writes such a key, never with the value the rule reads, the rule
            neither narrows the grammar nor pins a value (``twins_agree``).
        row: the text every example writes before and after the value on
            its line, where the rule's context holds a value another field
            takes in every example (``agentflow.grounding.row_cells``: a
            table's row the examples all pick, ``12,`` before ``Bookworm``),
            or ``()``: the examples cannot tell which of those cells is the
            record's key, so on a document whose line does not write them
            all around the value the rule finds, the rule neither narrows the
            grammar nor pins a value (``twins_agree``).
        beside: for a rule whose place names no word (``# `` of a title),
            the text every example writes just before its value at another
            place as well (``agentflow.grounding.chance_places``: `` install
            ``; ``""``: anywhere), or ``None``: on a document that does not
            write the rule's value there too, the rule neither narrows the
            grammar nor pins a value (``twins_agree``).
        decimal: every example's single value writes a decimal number
            (``agentflow.grounding.value_kinds``: ``£117.60``, ``37.01
            EUR``; learned from two values at least): a value of whole
            numbers (a count, ``3 items``) is then offered, but never
            pinned (``pins``).
        unit: under ``decimal``, every example's value writes something
            beside its number (a currency sign or code, a unit): a bare
            number (``2,400.00``) is then offered, but never pinned.

        marks: for a list, the separator-like characters (``,``, ``;``,
            ``|``, a blank: ``agentflow.grounding.list_separators``) some
            example's item holds, or ``None`` (not learned: any): an item
            (not a list item's own text, ``items``, nor a numbered one's)
            that holds another (``E203;W503``, ``E203,W503`` where the
            examples write one item a line) may be several items the rule
            did not split: it is offered, but never pinned (``pins``).
        number: the field is a single number (``agentflow.grounding.
            locator_numbers``): the rule reads the text the examples write
            it with, after a key; its values are compared by value where
            written plainly (``locator_numbers.number_text``), and never
            offered by the grammar.
        elements: for a rule reading an element's content after its start tag
            (``<packaging>``) under ``parents``, the names of the elements
            the examples write beside it under that parent (letter case
            folded, a namespace prefix aside: ``agentflow.grounding.
            locator_absence.element_absent``), or ``()``.
        bare: an example leaves the field empty and writes none of the
            examples' keys (a crontab of job lines alone, beside one with
            ``MAILTO=``): a document that writes none of them is written that
            example's way (``agentflow.grounding.locator_absence.
            absence_confirmed``).
        quiet: the lines (whitespace and letter case folded) that write the
            field's key otherwise than as its label, in examples that leave
            the field empty (``license_file = LICENSE`` of a setup.cfg without
            ``license =``): the examples show such a line is no value the rule
            missed, so the same line in a document is no mention (``mentioned``).

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
    skeleton: tuple[str, ...] = ()
    shown_empty: bool = False
    heading: str = ""
    clauses: bool = True
    spaced: bool = True
    lines: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    marker: bool = False
    last: bool = False
    tail: str = ""
    right_word: str = ""
    quoted: bool = True
    group: str = ""
    comments: bool = True
    shown_below: bool = True
    shown_across: bool = True
    stops_short: bool = False
    depth: int | None = None
    fence: str = ""
    keyed: bool = False
    head: str = ""
    marked: bool = False
    twins: tuple[Locator, ...] = ()
    first_record: bool = False
    several: bool = False
    record: str = ""
    section: str = ""
    decimal: bool = False
    unit: bool = False
    parents: tuple[str, ...] = ()
    document: tuple[str, ...] = ()
    echoes: tuple[str, ...] = ()
    row: tuple[str, ...] = ()
    beside: str | None = None
    elements: tuple[str, ...] = ()
    marks: str | None = None
    number: bool = False
    bare: bool = False
    quiet: tuple[str, ...] = ()
