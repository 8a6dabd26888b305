"""Locators learned from worked examples: where each field's value lives.

From a schema's worked examples (``agentflow.output.examples``), for each
top-level field that holds one string or a list of strings, a ``Locator``
says where its value is written, as literal text on the value's line:

* ``left``: the text just before the value on its line (a label such as
  ``Version: `` or ``ExecStart=``, letter case ignored, or a delimiter such
  as `` (``), and whether the line's content begins with it (``anchored``:
  a label);
* ``right``: the text just after it (``) `` or ``;``), or ``""``: the value
  runs to the end of its line; punctuation after which every example writes
  the same word (``, `` of ``, see LICENSE for details.``) ends a value only
  where that word follows it (``Locator.right_word``: ``Apache License,
  Version 2.0`` of ``Apache License, Version 2.0, see LICENSE``; a line
  where no ``right`` has it gives no value: the rule cannot tell the
  value's own ``, `` from the examples');
* ``split``: for a list written on one line (``Depends: a, b, c``), the
  separator between its items, read in any of its forms (``agentflow.
  grounding.list_separators``: ``a,b`` too); a single number field learns
  its rule after a key as well (``agentflow.grounding.locator_numbers``);
* ``continued``: the value runs on over the **continuation lines** after its
  line (``agentflow.grounding.lines.continuation``: the lines right after it
  that are indented deeper than it, as RFC 822 / deb822 headers, DEP-5
  fields, e-mail headers and YAML block scalars write a long value). A
  single value is then the whole block, from after ``left`` to the end of
  its last continuation line (never cut in the middle), up to a line that
  begins with a key at its own key's column (a sibling key and its block:
  ``  with:`` under ``- uses: x``; ``Locator.keyed``: unless an example's
  value runs over one); a list's items are the block's lines (each split
  by ``split`` when set). Learned when an
  example's value spans such lines (a string across them, or a list whose
  items are the label line's rest and its continuation lines); for a single
  string that runs to the end of its line, also when no example shows
  otherwise (a field's value is the whole of its lines, as RFC 822, deb822,
  INI and YAML read a key's value), and for a labelled list likewise
  (``Tags: x, y,`` wrapped onto an indented ``z``: its items are the
  block's). A single value read below its label written alone (``Requires:``
  over an indented ``zlib``) is pinned only where an example's value is
  written so (``Locator.shown_below``: a format may have no continuation
  lines), and one read across continuation lines only where an example's
  value (of any field) runs across them (``Locator.shown_across``: an RFC
  5545 / 6350 fold, CRLF and one space mid-word, is no part of the value).
  A value read to its line's end over a plain line in lower case is taken to
  run on (a wrapped ``Subject:``) unless an example writes that line, or an
  example's value stops above such a line (``Locator.stops_short``: ``rotate
  7`` over ``compress``), or the label is a keyword (no separator), every
  example's value and the value read are one word, and the line is a word,
  blanks and a value (``usepam yes`` under ``PermitRootLogin no``).
  Never applied to a field an example stops at the end of a line that has
  continuation lines (``Description: short`` followed by a long
  description). A value an example shows wrapping onto plain next lines
  that are not indented (``name \\- a summary that`` / ``wraps``) runs on
  over its paragraph instead
  (``paragraph``: up to a blank line, markup or a key line,
  ``agentflow.grounding.lines.paragraph_continuation``);
* ``arg``: where no text around the value is common to the examples (a
  title quoted in one, bare in another), the value as the same argument of
  a line that begins with the same first argument in every example that
  fills the field (``.TH NAME "1" "May 2023"``: the section is argument 2
  of a ``.TH`` line; ``locator_rule.line_arguments`` splits a line at
  whitespace, a double-quoted argument kept whole; a single-quoted one is
  read out of its quotes where no example's value is quoted; a product or
  protocol version in the head is any version, ``HTTP/1.1`` reading
  ``HTTP/2 200``: ``agentflow.grounding.lines.arguments_after``). Two
  examples must agree; the words they all write before the value are the line's key,
  those they all write after it must end it (``Locator.tail``), and
  sentences sharing their first word alone make no rule;
* ``items``: where no text around a list's values is common to the
  examples, the list as every list item of the document, in order
  (``agentflow.grounding.items``: a bulleted or numbered item with its
  continuation lines; an item that holds a nested list up to it, each
  nested item an item of its own), whatever stands between them (group
  headings such as ``[ Jane ]``, blank lines): when each example's list is
  exactly its text's items. A model that copies items one by one closes
  such a list early; the rule leaves it every item (up to the schema's
  ``max_length``, the first ones);
* ``group``: where every example that fills the field writes its value
  under the same INI-style group line (``[Desktop Entry]``, ``[Service]``,
  ``[tool.poetry]``: ``agentflow.grounding.groups``), and the rule holds
  read inside such groups only, it reads only there: a document whose
  group lacks the key gives it nothing, never the same key of another group
  (``Exec=`` of ``[Desktop Action new]``); the key written elsewhere keeps
  the field from a sure null (``Locator.mentioned``), and its value is
  scored as if the field had no rule. Values in different groups, or in
  none: no ``group``; groups of one kind (``[submodule "a"]``, ``[submodule
  "b"]``: ``groups.group_kind``): every group of that kind, never another
  kind's (``[lfs]``). Likewise ``fence``: the fenced block every example
  writes the value in (``agentflow.grounding.fences``: a Markdown page's
  ``---`` front matter, never a code block of its body); and ``depth``: for
  a labelled rule, the nesting depth every example writes its label at
  (``agentflow.grounding.depths``: a YAML top-level key, never one nested
  under another; in XML or HTML, the elements open around it, not its
  indentation: an attribute line of a tag written over lines is inside its
  element, and the rule reads the same attribute on the line its element's
  start tag begins on too, ``<activity android:name=".Splash" />``); a
  document writing the label only at other depths has its
  values offered by no grammar and pinned by no score
  (``Locator.off_depth``); with it the keys of the lines above the label
  every example writes it under (``Locator.parents``: ``repository`` of a
  package.json's ``"url"``, never ``bugs.url``) and, in a stream of several
  ``---`` documents, the keys that mark the document they write it in
  (``Locator.document``: a Deployment's ``replicas:``, never a Service's
  ``namespace:``; ``agentflow.grounding.key_paths``): the label read only
  there, a value found only elsewhere offered, never pinned. All learned in
  ``agentflow.grounding.locator_parts``.

**Learning.** Each example's value (or each item) is found in the example's
text (its first occurrence, verbatim); its line gives the contexts. Where an
example writes a value in several places (inside another value first:
``PRETTY_NAME="Debian 12"`` before ``NAME="Debian"``; twice by the format's
habit: ``[submodule "cub"]`` over ``path = cub``), a rule is also learned
from each other place (``agentflow.grounding.locator_twins``): when the
first places teach none, one that holds from another place is the field's;
when rules of several places hold, the examples cannot tell which is meant,
and on a document where they read other values the field is not pinned
(``Locator.twins``); another key every example writes the value after, whose
rule does not hold, likewise (``Locator.echoes``: ``app: shop`` beside
``name: shop``); and a rule whose place names no word (``# `` of a title),
where every example writes the value elsewhere too, pins only where the
document does as well (``Locator.beside``: ``agentflow.grounding.
chance_places``). Across
the examples that fill the field, ``left`` is the longest common ending of
the texts before the values (anchored when those texts are all the same
label), whole from its first word where the lines differ only in punctuation
before it (``SPDX-License-Identifier: `` of ``# SPDX-...`` and ``// SPDX-...``;
``locator_places.shared_label``), else its punctuation (`` (`` of ``barbaz (``
and ``quux (``; never a key's separator alone: ``: `` of ``License: `` and
``Licence: `` is no rule), ``right`` the run of punctuation and spaces the texts after them
all begin with (``right_word``: the whole token all of them write next, if
any, ``bookworm`` never read as ``bookworm-backports``; leave-one-out, the
one all the examples show). Where a rule's context holds a value another
field takes in every example (a table row they all pick: ``12,`` before
``Bookworm``), it keeps the cells they share around the value
(``Locator.row``, ``agentflow.grounding.row_cells``).
A rule is **kept** only if it holds on every example: its values there are
exactly the example's (a single field: its first value; a null field: no
value at all; a list: its items, in order), and, leave-one-out, if a rule
learned from the other examples alone also holds on each held-out one whose
own label it could not see (a label learned from one example must hold on
the other). A rule generalised from several examples (a context common to
them, not the same label) needs at least two that fill the field, and a
line start seen in one example only is a label only when it reads as a key
(``Version: ``, ``ExecStart=``, a JSON member's ``"main": "``, an element's
``<OutputType>`` or attribute ``<PackageReference Include="``: ``locator_twins.
key_label``). Examples and documents are read one member a line (``agentflow.
grounding.member_lines``: a minified JSON document, markup on one line). A
rule that reads after punctuation alone to the line's end (``, ``: no label,
no word) is kept only where the examples write that context nowhere but
before their value (``is_loose``): any line with a comma holds ``, ``. A
single field's rule also keeps the kind of value every example shows
(``Locator.letter`` / ``Locator.digit``: a letter, a ``figure``), and finds no
other (``19.80`` is no currency code
where the examples wrote ``GBP``, ``EUR``; nor, where its label holds one, a
later label's: ``Host *`` before ``Host prod``). Every rule
keeps the keys the examples' lines begin with (``Locator.layout``) and
whether an example leaves the field empty (``Locator.shown_empty``): where
it finds nothing, they say whether the document shows the field empty
(``agentflow.grounding.locator_absence``). Rules never name a document
kind: they are read off the examples. A context rule is learned in
``agentflow.grounding.locator_contexts`` (``learn_locator``); the ``arg``
and ``items`` rules, tried when no context rule holds, in
``agentflow.grounding.locator_contextless``.

**Use.** ``values(source)`` lists the values a locator finds in a document
(a continued list: the items of its first block; ``blocks(source)`` lists
every block's items). A labelled line whose ``right`` is on its
continuation lines is read with them (a folded header, ``lines.
unfolded_to``); a quoted value, where no example's value is quoted, is read
out of its quotes (``Locator.quoted``). A rule is kept only where every
example's value is the
first place it finds (``holds``), so the first place is the value it reads:
the grammar offers only it (a single value, or a continued list's first
block: ``Files: *`` before ``Files: debian/*``), and a list's every item.
On a model whose grammar takes them (the embedded model), those values are
the only ones the grammar offers for the field (``VALUES_KEY``; none found:
null, or an empty list, where the document shows the field empty, else the
field's ordinary grounding); on other models they verify: a value the
locator does not find lowers the field's confidence (``agentflow.
extraction.confidence``), it is never refused for it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from agentflow.grounding.element_absence import element_names
from agentflow.grounding.locator_absence import layout_keys, layout_lines
from agentflow.grounding.locator_contextless import learn_argument, learn_items
from agentflow.grounding.locator_contexts import learn_locator
from agentflow.grounding.locator_fields import locator_fields
from agentflow.grounding.locator_held_out import held_out
from agentflow.grounding.locator_kinds import example_shapes, with_kind
from agentflow.grounding.locator_numbers import number_fields, numbers_as_written
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_parts import grouped, headed
from agentflow.grounding.locator_places import Seen, example_value
from agentflow.grounding.locator_records import learn_records
from agentflow.grounding.locator_rule import VALUES_KEY, Locator
from agentflow.grounding.locator_twins import anchors, beside_context, echoed, key_label, twinned
from agentflow.grounding.member_lines import laid_out
from agentflow.grounding.row_cells import shared_row
from agentflow.output.examples import CheckedExample

__all__ = ["VALUES_KEY", "Locator", "apply_locators", "is_loose", "learn_locator", "learn_locators",
           "locator_fields"]


def learn_locators(examples: Sequence[CheckedExample], output_type: Any) -> dict[str, Locator]:
    """The locators that hold on ``examples`` (field name -> ``Locator``),
    leave-one-out checked (see the module docstring); ``{}`` without examples."""
    if not examples:
        return {}
    key = (_type_key(output_type), tuple((e.text, _dump(e.value)) for e in examples))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    # each example as the rules read a document: one member a line (``Locator.region``)
    examples = [dataclasses.replace(e, text=laid_out(e.text)) for e in examples]
    kept: dict[str, Locator] = {}
    for name, many in locator_fields(output_type):
        if (rule := _field_rule(name, many, examples)) is not None:
            kept[name] = rule
    layout = tuple(sorted(set().union(*(layout_keys(e.text) for e in examples))))
    skeleton = tuple(sorted(frozenset.intersection(*(layout_keys(e.text) for e in examples))))
    lines = tuple(sorted(set().union(*(layout_lines(e.text) for e in examples))))
    across = any(rule.reads_across(e.text) for rule in kept.values() for e in examples
                 if example_value(e, rule.field))  # the format's continuation lines carry values
    kept = {n: _finished(r, examples, (layout, skeleton), lines, across) for n, r in kept.items()}
    names = [n for n, _ in locator_fields(output_type)]
    kept = {n: r if r.many or r.arg is not None or r.items else dataclasses.replace(
        r, row=shared_row(n, f"{r.left} {r.right_word}", names, examples)) for n, r in kept.items()}
    for name in number_fields(output_type):  # a number after a key: its written text's rule
        texts = numbers_as_written(examples, name)
        rule = None if texts is None else _field_rule(name, False, texts)
        if texts is not None and rule is not None and rule.labelled and rule.arg is None:
            # compared by value (``locator_numbers.number_text``): ``2`` is 2.0 where the
            # examples wrote ``0.75``, no other quantity (``decimal``)
            kept[name] = dataclasses.replace(_finished(
                rule, texts, (layout, skeleton), lines, across), number=True, decimal=False)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = kept
    return kept


def _field_rule(name: str, many: bool, examples: Sequence[CheckedExample]) -> Locator | None:
    """The rule of field ``name`` (a list: ``many``) that holds on ``examples``
    (see the module docstring): its context rule (with its twins), else its
    ``items`` or ``arg`` rule, else ``None``."""
    rule, held = _context_rule(name, many, examples, None)
    if rule is None:
        if held:
            return None  # its first places' rule held, but leave-one-out it did not
        contextless = _contextless(name, many, examples)
        if contextless is not None:
            return contextless
    rules = [] if rule is None else [rule]
    for like in anchors(name, examples):  # the value written in several places: a
        # rule from each other place too (``locator_twins``)
        other, _ = _context_rule(name, many, examples, like)
        if other is not None and other not in rules:
            rules.append(other)
    if not rules:
        return None
    rule = echoed(twinned(rules), examples)
    beside = beside_context(rule, examples)  # the value written elsewhere too
    return rule if beside is None else dataclasses.replace(rule, beside=beside)


def _contextless(name: str, many: bool, examples: Sequence[CheckedExample]) -> Locator | None:
    """The ``items`` (a list) or ``arg`` (a single value) rule of field
    ``name`` when it holds on every example (``agentflow.grounding.
    locator_contextless``), else ``None``."""
    rule = learn_items(name, examples) if many else learn_argument(name, examples)
    if rule is not None:
        rule = grouped(rule, examples)
    if rule is None or not all(rule.holds(example_value(e, name), e.text) for e in examples):
        return None
    return headed(with_kind(rule, examples), examples)  # each example shows the same place


def _finished(rule: Locator, examples: Sequence[CheckedExample],
              layout: tuple[tuple[str, ...], tuple[str, ...]], lines: tuple[str, ...],
              across: bool) -> Locator:
    """``rule`` (and its twins) with what every rule keeps of the examples: their
    ``layout`` (every example's keys, and the ``skeleton`` all of them write)
    and ``lines``, ``shown_empty`` (``bare``, ``quiet``), ``shapes``, ``shown_below``,
    ``shown_across`` (``across``: an example's value of some field runs across
    continuation lines), the ``elements`` beside its element, and
    the records they write it in (``agentflow.grounding.locator_records``)."""
    name = rule.field
    empty = [e.text for e in examples if not example_value(e, name)]
    return dataclasses.replace(
        learn_records(rule, examples), layout=layout[0], skeleton=layout[1], lines=lines,
        bare=any(not layout_keys(text) for text in empty), quiet=tuple(sorted({
            " ".join(line.split()).casefold() for text in empty for line in text.splitlines()
            if rule.mentioned(line)})),
        elements=element_names(rule, [e.text for e in examples]),
        shown_empty=any(
            not example_value(e, name) for e in examples), shapes=example_shapes(name, examples),
        shown_below=any(rule.begins_below(e.text) for e in examples) or not rule.continued,
        shown_across=across or rule.many or not rule.continued,
        stops_short=any(dataclasses.replace(rule, lines=()).runs_on(e.text, keys=False)
                        for e in examples if example_value(e, name)),
        twins=tuple(_finished(t, examples, layout, lines, across) for t in rule.twins))


def _context_rule(name: str, many: bool, examples: Sequence[CheckedExample],
                  like: Seen | None) -> tuple[Locator | None, bool]:
    """The context rule of field ``name`` (``learn_locator``, each value at
    its first place, or with ``like`` at the place most like it) when it is
    kept (see the module docstring), and whether it held on every example
    (a rule that held but was not kept: ``None, True``)."""
    rule = learn_locator(name, many, examples, like)
    filled = len([e for e in examples if example_value(e, name)])
    if rule is not None and is_loose(rule) and (filled < 2 or any(
            len(rule.values(e.text)) > 1 for e in examples if example_value(e, name))):
        # punctuation alone around the value (``, `` to the line's end, `` "``
        # up to ``"``): only a context the examples write nowhere but around the
        # value (`` \- `` of a man page's NAME line), not one any line may hold
        # (``The Old Mill, Bath``, every quoted string); the line's own key may
        # still place it (``"name": "x"``: argument 2 of the line that begins
        # with ``name``)
        rule = None
    if rule is not None:
        rule = grouped(rule, examples, like)
    if rule is None or not all(rule.holds(example_value(e, name), e.text) for e in examples):
        return None, False
    if not rule.anchored or not rule.left.strip():
        # a context common to several examples (or a value that begins its
        # line): generalised, so it needs two examples that fill the field
        if filled < 2:
            return None, True
    elif filled < 2 and not key_label(rule.left, rule.right, rule.right_word):
        return None, True  # one example's line start: a label only if it reads as a key
        # (after a list marker, before a quote the value's end closes: ``- cron: '``)
    elif len(examples) > 1 and not all(held_out(rule, examples, i, like)
                                       for i in range(len(examples))):
        return None, True
    return headed(with_kind(rule, examples), examples, like), True


def is_loose(rule: Locator) -> bool:
    """Whether ``rule`` reads between punctuation alone anywhere on a line (no
    label, no word on either side): ``, `` to the line's end of ``Friday 12
    July, 8:00 pm`` finds the rest of any line with a comma (``standard SEK
    3,900``); `` "`` up to ``"`` finds any quoted string, the first of the
    document's for a single value. Kept only where every example that fills
    the field writes that context nowhere else (its only value there is the
    example's): the first of several only happens to be the value."""
    return (not rule.anchored and rule.arg is None and not rule.items
            and not any(c.isalnum() for c in rule.left + rule.right))


_CACHE: dict[Any, dict[str, Locator]] = {}


def _type_key(output_type: Any) -> Any:
    try:
        hash(output_type)
        return output_type
    except TypeError:
        return id(output_type)


def _dump(value: Any) -> str:
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return json.dumps(data, sort_keys=True, default=str)
