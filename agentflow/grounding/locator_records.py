"""Which record of a document a learned locator reads, and whether a list
rule read every place the document writes its label.

Many formats write several records in one document, separated by blank
lines: an APT ``.sources`` file's stanzas, a DEP-5 file's paragraphs, a
mail box's headers. A record is a run of lines between blank lines that
holds a key line (``agentflow.grounding.lines.KEY_LINE``; a paragraph of
comments is none). A learned locator (``agentflow.grounding.locators``)
keeps what the examples show of it:

* ``Locator.first_record``: every example that fills the field writes its
  value in its first record (``in_first_record``); on a document of several
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
  whether all of them, is meant (``differing_blocks``).
* ``unread_labels``: a list rule read after a label, on a document that
  writes the rule's key as a line's key more often than the rule reads a
  value after its label (``url=`` where the examples write ``url = ``):
  the list the rule reads misses items.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agentflow.grounding.folding import same_text
from agentflow.grounding.groups import in_group
from agentflow.grounding.lines import KEY_LINE
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.void_blocks import live_text
from agentflow.output.examples import CheckedExample

__all__ = ["differing_blocks", "first_record", "in_first_record", "later_record_only",
           "learn_records", "same_block", "unread_labels"]


def first_record(text: str, live: str | None = None) -> str | None:
    """``live`` (``text`` with its void spans blanked, ``agentflow.grounding.
    void_blocks.live_text``; ``text`` itself by default) up to the end of
    ``text``'s first record (the first run of lines between blank lines of
    ``text`` that holds a live key line: comments, or a cancelled record,
    before it kept), or ``None`` where no later record follows it (one
    record: nothing to tell)."""
    live = text if live is None else live
    lines = text.splitlines(keepends=True)
    kept = live.splitlines(keepends=True)
    keyed = [KEY_LINE.match(line) is not None for line in kept]
    seen_key = False
    end = 0
    for i, line in enumerate(lines):
        if not line.strip():
            if seen_key:
                end = i
                break
            continue
        seen_key = seen_key or (i < len(keyed) and keyed[i])
    else:
        return None
    if not any(keyed[end:]):
        return None
    return "".join(kept[:end])


def in_first_record(rule: Locator, text: str) -> bool:
    """Whether ``rule`` finds a value in the first record of ``text``
    (``first_record``: a cancelled record is none; a text of one record:
    whether it finds one at all)."""
    head = first_record(text, live_text(text))
    return bool(rule.values(text if head is None else head))


def later_record_only(rule: Locator, source: str) -> bool:
    """Whether ``rule`` learned ``first_record`` finds values in ``source``, a
    document of several records, but none in its first (``in_first_record``):
    what it finds there is a later record's."""
    return rule.first_record and first_record(source, live_text(source)) is not None and bool(
        rule.values(source)) and not in_first_record(rule, source)


def learn_records(rule: Locator, examples: Sequence[CheckedExample]) -> Locator:
    """``rule`` with ``first_record`` and ``several`` as the examples that
    fill the field show them (see the module docstring)."""
    filled = [e for e in examples if example_value(e, rule.field)]
    first = bool(filled) and not (rule.group or rule.heading or rule.items) and all(
        in_first_record(rule, e.text) for e in filled)
    several = rule.many and rule.continued and any(
        len(_distinct(rule.blocks(e.text))) > 1 for e in filled)
    return dataclasses.replace(rule, first_record=first, several=several)


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
    after its label (inside its ``group``): ``url=`` or ``URL :`` beside the
    examples' ``url = ``. ``False`` for a rule without a label of its own."""
    if not rule.many or not rule.labelled or rule.heading or rule.arg is not None:
        return False
    key = rule.key.casefold()
    if not key:
        return False
    text = live_text(source)
    lines = (in_group(text, rule.group) if rule.group else text).splitlines()
    keyed = sum(1 for line in lines if (m := KEY_LINE.match(line)) is not None
                and m.group(1).casefold() == key)
    return keyed > rule.label_lines(source)


def same_block(value: list[str], block: list[str]) -> bool:
    """Whether ``value`` is ``block`` item by item (whitespace folded, clean edges allowed)."""
    return len(value) == len(block) and all(
        same_text(b, v, clean=True) for v, b in zip(value, block, strict=True))
