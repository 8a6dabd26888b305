"""A value every example writes at a second place: whether the rule's own
place may only agree with it by chance.

A rule whose place names no word (a line start of markup alone: ``# `` of a
Markdown title, ``- ``, `` (``) is evidenced by its position only. Where
every example that fills the field also writes its value at another place,
which the rule does not read (a README whose package is both its ``#
fancylog`` title and the ``pip install fancylog`` of its Installation
section), the examples cannot say which of the two places is the field's:
the rule's place agrees with the value in each of them, maybe by the habit
of their authors (a README titled after its package), not because it is the
field's. Such a rule keeps the text the examples all write before their
value at that other place (``Locator.beside``, ``beside_context``:
`` install ``; ``""`` where they share none): on a document that does not
write the rule's value after that text on a line as well (``written_beside``:
``npm install --global x`` does; ``# GLib`` over "see INSTALL.md" does not),
the rule neither narrows the grammar nor pins a value (``Locator.
twins_agree``), as for a twin place that reads otherwise. A labelled rule
(``Version: ``) names its field; another key the examples write the value
after is its echo instead (``agentflow.grounding.echo_keys``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentflow.grounding.locate import occurrences
from agentflow.grounding.locator_places import Seen, common_end, example_value, places_at

if TYPE_CHECKING:
    from agentflow.grounding.locator_rule import Locator
    from agentflow.output.examples import CheckedExample

__all__ = ["MAX_OTHER_PLACES", "beside_context", "written_beside"]

MAX_OTHER_PLACES = 8
"""The most other places of one example's value compared (the first ones)."""


def _own(before: str, left: str, anchored: bool) -> bool:
    """Whether a value with ``before`` on its line sits at the rule's place."""
    return before.strip() == left.strip() if anchored else before.endswith(left)


def _word_cut(common: str, befores: Sequence[str]) -> str:
    """``common`` (an end of each of ``befores``) less a word it begins inside of in one of them."""
    if not common or not common[0].isalnum() or all(
            len(b) == len(common) or not b[-len(common) - 1].isalnum() for b in befores):
        return common
    i = 0
    while i < len(common) and common[i].isalnum():
        i += 1
    return common[i:]


def beside_context(rule: Locator, examples: Sequence[CheckedExample]) -> str | None:
    """The text every example that fills ``rule``'s field writes just before its
    value at a place the rule does not read (cut to whole words; ``""``: none
    in common), or ``None``: the rule names its place (a label, a list's items,
    an argument), fewer than two examples fill the field, or one writes its
    value at the rule's place alone."""
    if rule.many or rule.labelled or rule.arg is not None or rule.items or rule.marker:
        return None
    others: list[list[Seen]] = []
    for example in examples:
        value = example_value(example, rule.field)
        if not isinstance(value, str) or not value.strip():
            continue
        places = [p for p in places_at(value.strip(), example.text)
                  if not _own(p.before, rule.left, rule.anchored) or not p.after.startswith(
                      rule.right)]
        if not places:
            return None
        others.append(places[:MAX_OTHER_PLACES])
    if len(others) < 2:
        return None
    best = ""
    for first in others[0]:
        befores = [first.before] + [
            max((p.before for p in places), key=lambda b: len(common_end([first.before, b])))
            for places in others[1:]]
        common = _word_cut(common_end(befores), befores)
        best = common if len(common) > len(best) else best
    return best


def written_beside(value: str, beside: str, source: str, left: str, anchored: bool) -> bool:
    """Whether ``source`` writes ``value`` (whole tokens) after ``beside`` on its
    line (``npm install --global x`` for `` install ``), at a place other than
    the rule's (``left``, ``anchored``)."""
    for start, _ in occurrences(value, source, whole_tokens=True):
        before = source[source.rfind("\n", 0, start) + 1:start]
        if beside in before and not _own(before, left, anchored):
            return True
    return False
