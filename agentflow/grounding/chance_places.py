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
value at that other place (``Locator.beside``, learned by ``agentflow.
grounding.locator_twins.beside_context``:
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

from agentflow.grounding.locate import occurrences

__all__ = ["own_place", "word_cut", "written_beside"]


def own_place(before: str, left: str, anchored: bool) -> bool:
    """Whether a value with ``before`` on its line sits at the rule's place."""
    return before.strip() == left.strip() if anchored else before.endswith(left)


def word_cut(common: str, befores: Sequence[str]) -> str:
    """``common`` (an end of each of ``befores``) less a word it begins inside of in one of them."""
    if not common or not common[0].isalnum() or all(
            len(b) == len(common) or not b[-len(common) - 1].isalnum() for b in befores):
        return common
    i = 0
    while i < len(common) and common[i].isalnum():
        i += 1
    return common[i:]


def written_beside(value: str, beside: str, source: str, left: str, anchored: bool) -> bool:
    """Whether ``source`` writes ``value`` (whole tokens) after ``beside`` on its
    line (``npm install --global x`` for `` install ``), at a place other than
    the rule's (``left``, ``anchored``)."""
    for start, _ in occurrences(value, source, whole_tokens=True):
        before = source[source.rfind("\n", 0, start) + 1:start]
        if beside in before and not own_place(before, left, anchored):
            return True
    return False
