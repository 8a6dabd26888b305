"""Which record of a document a learned locator reads, and whether a list
rule read every place the document writes its label.

Many formats write several records in one document, separated by blank
lines: an APT ``.sources`` file's stanzas, a DEP-5 file's paragraphs, a
mail box's headers. A record is a run of lines between blank lines that
holds a key line (``agentflow.grounding.lines.KEY_LINE``; a paragraph of
comments is none). Others write them back to back, each opened by the same
line: vCards (``BEGIN:VCARD``), iCalendar events (``BEGIN:VEVENT``), nginx
``server {`` blocks, blank lines or none between them; a record then also
ends where the document writes again the line that opened the first
(``first_record``: the first line the document writes twice, where the
records it opens are alike), and brace blocks each opened by a line that
names it end with their lone ``}`` (``agentflow.grounding.brace_records``:
logrotate stanzas, nginx ``location`` blocks, HCL resources). A blank line
parts records only where the record after it is alike (writes again a key
of the first, as indented): ``helm create`` writes blank lines between one
Chart.yaml's keys. Config formats write records as sibling
blocks: the services under a docker-compose file's ``services:``, an
ssh_config's ``Host`` blocks, git config's ``[remote "*"]`` groups, the
``---`` documents of a stream (``agentflow.grounding.sibling_blocks``; the
kind a rule's examples show its value in: ``agentflow.grounding.
locator_siblings``, ``Locator.record``). A learned
locator (``agentflow.grounding.locators``) keeps what the examples show of it:

* ``Locator.first_record``: every example that fills the field writes its
  value in its first record (``in_first_record``), before any blank line
  that ends a paragraph of key lines (``_in_first_paragraph``: an example
  whose value lies past one shows blank lines part no records for it); on a document of several
  records where the rule finds the field only in a later one, the value is
  another record's (``Signed-By:`` of stanza 2 where stanza 1 has none), so
  it is offered, never pinned (``agentflow.extraction.confidence``). Not
  learned for a rule read inside an INI-style ``group`` or under a list's
  ``heading``: the group or the heading, not the record's place, says where
  the value is (``[build-system]`` may come first or last).
* ``Locator.several``: an example writes the label of a list rule read over
  continuation lines twice with different items (DEP-5's ``Copyright:`` of
  ``Files: *`` and of ``Files: debian/*``): the examples show the first
  block is the field's. Where no example does, a document whose blocks
  differ (``Suites:`` of two stanzas; systemd's ``After=`` written twice,
  which adds to the list) leaves the rule unable to say which block, or
  whether all of them, is meant (``differing_blocks``). Likewise a single
  value read in sibling records (``Locator.record``, ``agentflow.grounding.
  locator_siblings``): an example writes it in two records with different
  values (``image:`` of each service), the field's the first's.
* ``unread_labels``: a list rule read after a label, on a document that
  writes the rule's key as a line's key more often than the rule reads a
  value after its label (``url = `` where the examples write ``url: ``):
  the list the rule reads misses items.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agentflow.grounding.brace_records import braced_end, open_depths
from agentflow.grounding.folding import same_text
from agentflow.grounding.lines import KEY_LINE, indent_of
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.locator_sections import below_section_only, learn_section
from agentflow.grounding.locator_siblings import (
    first_values,
    later_differs,
    later_sibling_only,
    learn_record,
)
from agentflow.grounding.void_blocks import live_text
from agentflow.output.examples import CheckedExample

_FIRST_WORD = re.compile(r"[ \t]*([^\W\d][\w-]*)")

__all__ = ["differing_blocks", "first_record", "in_first_record", "later_record_only",
           "learn_records", "record_values", "same_block", "unread_labels"]


def first_record(text: str, live: str | None = None) -> str | None:
    """``live`` (``text`` with its void spans blanked, ``agentflow.grounding.
    void_blocks.live_text``; ``text`` itself by default) up to the end of
    ``text``'s first record, or ``None`` where no later record follows it
    (one record: nothing to tell). The first record ends at the first of:

    * the blank line after the first run of lines between blank lines that
      holds a live key line (comments, or a cancelled record, before it
      kept), where a record alike follows it: a later key line writes again
      a key of the first record, as indented (``Types:`` of a second APT
      stanza, ``Content-Length:`` of a second HTTP response; never a blank
      line that only groups a Chart.yaml's keys, nor an indented
      ``version:`` of its ``dependencies:``); a blank line inside an open
      brace block is none
      (``agentflow.grounding.brace_records.open_depths``);
    * the line that opened it written again (``_reopened``: ``BEGIN:VCARD``
      of cards written back to back, ``server {`` of an nginx file);
    * the lone ``}`` closing its first brace block where another opens after
      it (``agentflow.grounding.brace_records.braced_end``: logrotate's
      stanzas, nginx ``location`` blocks, HCL resources)."""
    live = text if live is None else live
    kept = live.splitlines(keepends=True)
    ends = [end for end in (_blank_end(text.splitlines(keepends=True), kept),
                            _reopened(kept), braced_end(kept)) if end is not None]
    return "".join(kept[:min(ends)]) if ends else None


def _blank_end(lines: list[str], kept: list[str], alike: bool = True) -> int | None:
    """The index of the blank line of ``lines`` that ends the first run of
    lines holding a key line of ``kept`` (its live lines), where a key line
    follows it that writes again, as indented, a key the lines before it
    write (``alike``; else any key line); else ``None``. A blank line
    inside an open brace block ends no run."""
    keys = [_key(line) for line in kept]
    depths = open_depths(kept)
    seen: set[tuple[int, str]] = set()
    for i, line in enumerate(lines):
        if line.strip():
            if i < len(keys) and (key := keys[i]) is not None:
                seen.add(key)
        elif seen and not (i < len(depths) and depths[i]):
            later = {key for key in keys[i:] if key is not None}
            return i if later and (not alike or later & seen) else None
    return None


def _key(line: str) -> tuple[int, str] | None:
    """The key ``line`` begins with (``KEY_LINE``, letter case folded) and
    its indentation, or ``None``."""
    m = KEY_LINE.match(line)
    return (indent_of(line), m.group(1).casefold()) if m else None


def _first_word(line: str) -> str:
    """The first word of ``line`` (letter case folded), or ``""``."""
    m = _FIRST_WORD.match(line)
    return m.group(1).casefold() if m else ""


def _reopened(lines: list[str]) -> int | None:
    """The index where ``lines`` write again the line that opened their first
    record: the first line (whitespace folded, holding a letter or a digit:
    never a closing ``}`` or a rule of dashes) that the text writes again, at
    its second place (records are the spans between its places), where the
    text before that place and after it are alike (other lines of each
    begin with the same word: ``VERSION:`` of two vCards; never a comment
    header that repeats a line of its own, ``.\\" .}f``), and that line is
    indented no deeper than the line above it (no continuation line);
    ``None`` where no such line is written twice."""
    first: dict[str, int] = {}
    again: dict[str, int] = {}
    folded = [" ".join(line.split()) for line in lines]
    for i, key in enumerate(folded):
        if not any(c.isalnum() for c in key):
            continue
        if key in first:
            again.setdefault(key, i)
        else:
            first[key] = i
    if not again:
        return None
    opener = min(again, key=first.__getitem__)
    start, end = first[opener], again[opener]
    above = [line for line in lines[:start] if line.strip()]
    if above and indent_of(lines[start]) > indent_of(above[-1]):
        return None  # a continuation line (a description's ``algorithm``) opens no record
    before = {_first_word(line) for line, key in zip(lines[:end], folded, strict=False)
              if key != opener}
    return end if any(_first_word(line) in before for line, key in zip(
        lines[end:], folded[end:], strict=True) if key != opener and _first_word(line)) else None


def in_first_record(rule: Locator, text: str) -> bool:
    """Whether ``rule`` finds a value in the first record of ``text``
    (``first_record``: a cancelled record is none; a text of one record:
    whether it finds one at all)."""
    head = first_record(text, live_text(text))
    return bool(rule.values(text if head is None else head))


def later_record_only(rule: Locator, source: str) -> bool:
    """Whether ``rule`` learned ``first_record`` finds values in ``source``, a
    document of several records, but none in its first (``in_first_record``),
    or finds them only past the first sibling block of the kind it learned
    (``agentflow.grounding.locator_siblings.later_sibling_only``), or only
    below the first section line of the keyword it learned (``agentflow.
    grounding.locator_sections.below_section_only``): what it finds there
    is a later record's."""
    return (rule.first_record and first_record(source, live_text(source)) is not None and bool(
        rule.values(source)) and not in_first_record(rule, source)) or later_sibling_only(
        rule, source) or below_section_only(rule, source)


def record_values(rule: Locator, text: str) -> list[str]:
    """What a single-value ``rule`` finds in ``text`` where its examples show
    the field's value: up to the end of the first record of the kind it
    learned (``Locator.record``; ``agentflow.grounding.locator_siblings.
    first_values``), else in the first record (``Locator.first_record``);
    all it finds for any other rule, on a text of one record, or where the
    first record holds none (the second Atom entry's ``<link>`` is not the
    first entry's: ``agentflow.extraction.chunk_reads``)."""
    found = rule.values(text)
    if rule.many or not found:
        return found
    first = first_values(rule, text)
    if first is None and rule.first_record and (
            head := first_record(text, live_text(text))) is not None:
        first = rule.values(head)
    return first or found


def learn_records(rule: Locator, examples: Sequence[CheckedExample]) -> Locator:
    """``rule`` with ``first_record``, ``several`` and ``record``
    (``agentflow.grounding.locator_siblings.learn_record``) as the examples
    that fill the field show them (see the module docstring)."""
    filled = [e for e in examples if example_value(e, rule.field)]
    first = bool(filled) and not (rule.group or rule.heading or rule.items) and all(
        in_first_record(rule, e.text) and _in_first_paragraph(rule, e.text) for e in filled)
    record = learn_record(rule, examples)
    section = learn_section(rule, examples)
    several = (rule.many and rule.continued and any(
        len(_distinct(rule.blocks(e.text))) > 1 for e in filled)) or any(
        later_differs(dataclasses.replace(rule, record=record), e.text) for e in filled)
    return dataclasses.replace(rule, first_record=first, several=several, record=record,
                               section=section)


def _in_first_paragraph(rule: Locator, text: str) -> bool:
    """Whether ``rule`` finds a value in ``text`` before the blank line
    that ends its first run of lines holding a key line (``_blank_end``,
    whatever follows it), or ``text`` has no such blank line: an example
    that writes the value past one shows that a blank line is no record's
    end for the field (a conda recipe's ``about:`` block, a DEP-5 file's
    ``Files:`` paragraphs after its header)."""
    live = live_text(text)
    kept = live.splitlines(keepends=True)
    end = _blank_end(text.splitlines(keepends=True), kept, alike=False)
    return end is None or bool(rule.values("".join(kept[:end])))


def _distinct(blocks: list[list[str]]) -> set[tuple[str, ...]]:
    """The different blocks of ``blocks``, whitespace folded."""
    return {tuple(" ".join(item.split()) for item in block) for block in blocks}


def differing_blocks(rule: Locator, source: str) -> list[list[str]]:
    """The blocks of a continued list ``rule`` in ``source`` where they are
    not all the same and no example shows the first is meant (``several``);
    ``[]`` otherwise."""
    if not rule.many or not rule.continued or rule.several:
        return []
    blocks = rule.blocks(source)
    return blocks if len(_distinct(blocks)) > 1 else []


def unread_labels(rule: Locator, source: str) -> bool:
    """Whether ``source`` writes a list ``rule``'s key as a line's key
    (``KEY_LINE``, letter case ignored) on more lines than the rule reads
    after its label (inside its ``group`` and ``fence``): ``url = `` beside the
    examples' ``url: ``, ``url::`` beside their ``url = ``. ``False`` for a rule without a
    label of its own."""
    if not rule.many or not rule.labelled or rule.heading or rule.arg is not None:
        return False
    key = rule.key.casefold()
    if not key:
        return False
    lines = rule.region(live_text(source)).splitlines()  # inside its group and fence
    keyed = sum(1 for line in lines if (m := KEY_LINE.match(line)) is not None
                and m.group(1).casefold() == key)
    return keyed > rule.label_lines(source)


def same_block(value: list[str], block: list[str]) -> bool:
    """Whether ``value`` is ``block`` item by item (whitespace folded, clean edges allowed)."""
    return len(value) == len(block) and all(
        same_text(b, v, clean=True) for v, b in zip(value, block, strict=True))
