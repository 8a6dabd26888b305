"""The leave-one-out check of a context rule (``agentflow.grounding.
locators``): the rule the other examples teach must hold on each example, so
that a rule is kept only where no one example alone made it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agentflow.grounding.label_forms import tag_within
from agentflow.grounding.locator_contexts import learn_locator
from agentflow.grounding.locator_places import Seen, example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["held_out"]


def held_out(whole: Locator, examples: Sequence[CheckedExample], i: int,
             like: Seen | None = None) -> bool:
    """Whether the rule of ``whole``'s field learned without example ``i``
    of ``examples`` holds on it (true when the others teach no rule), with
    what only all the examples together show taken from ``whole`` (the rule
    learned from all): its ``split``, which others that write one item a
    line cannot show; likewise whether values run on over continuation lines
    (``continued``, ``paragraph``), and over a sibling key's line
    (``keyed``); the word after ``right`` all the examples write
    (``right_word``), which one alone may write otherwise; the ``group``
    they write the field under; the depth, parent keys and ``---`` document
    they write its label at (``depth``, ``parents``, ``document``); a start
    tag label less the attributes the examples do not all write (``left``,
    ``agentflow.grounding.label_forms.tag_label``). ``like``: each value
    placed as the rule's were (``learn_locator``)."""
    name = whole.field
    rest = [e for j, e in enumerate(examples) if j != i]
    rule = learn_locator(name, whole.many, rest, like)
    if rule is not None and rule.split is None and whole.split is not None:
        rule = dataclasses.replace(rule, split=whole.split)  # the others had one item a line
    if rule is not None and (rule.continued, rule.paragraph) != (
            whole.continued, whole.paragraph) and not rule.right:  # what all the examples show
        rule = dataclasses.replace(rule, continued=whole.continued, paragraph=whole.paragraph)
    if rule is not None and whole.keyed:
        rule = dataclasses.replace(rule, keyed=True)
    if rule is not None and rule.right == whole.right:
        rule = dataclasses.replace(rule, right_word=whole.right_word)
    if rule is not None and whole.left and rule.left != whole.left and tag_within(
            whole.left, rule.left):
        rule = dataclasses.replace(rule, left=whole.left)
    if rule is not None and whole.group:
        rule = dataclasses.replace(rule, group=whole.group)
    if rule is not None and rule.labelled and whole.depth is not None:
        rule = dataclasses.replace(rule, depth=whole.depth, parents=whole.parents,
                                   document=whole.document)
    return rule is None or rule.holds(example_value(examples[i], name), examples[i].text)
