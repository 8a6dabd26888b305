"""The part of a document a learned locator reads, learned from worked
examples (``agentflow.grounding.locators`` documents the rules): the INI
group every example writes the field under, or the kind of group
(``Locator.group``: ``[Desktop Entry]``, ``[submodule "*"]``), the fenced
block (``Locator.fence``: ``^---``, a Markdown page's front matter), and the
nesting depth of its label line (``Locator.depth``); each kept only where
the narrowed rule still holds on every example.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from agentflow.grounding.depths import depth_at
from agentflow.grounding.fences import fence_of
from agentflow.grounding.groups import group_kind, group_of
from agentflow.grounding.locator_places import Seen, example_value, seen_at
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["narrowed", "regioned"]


def regioned(rule: Locator, examples: Sequence[CheckedExample]) -> Locator:
    """``rule`` reading only inside the INI-style group every example that
    fills the field writes its value (its first item) under (``Locator.group``;
    ``agentflow.grounding.groups``: ``[Desktop Entry]``), else inside the kind
    of group they all write it under (``[submodule "*"]`` of ``[submodule
    "a"]`` and ``[submodule "b"]``: ``groups.group_kind``); inside the fenced
    block they all write it in (``Locator.fence``; ``agentflow.grounding.
    fences``); and, for a rule that reads after a label, only its label at the
    depth they all write it at (``Locator.depth``; ``agentflow.grounding.
    depths``, read inside the rule's group and block). Each where the
    narrowed rule holds on every example; else not narrowed so."""
    grouped = narrowed(rule, examples, lambda text, at: group_of(text, at.start),
                       lambda key: dataclasses.replace(rule, group=key))
    if grouped is rule:
        grouped = narrowed(rule, examples, lambda text, at: group_kind(group_of(text, at.start)),
                           lambda key: dataclasses.replace(rule, group=key))
    rule = grouped
    rule = narrowed(rule, examples, lambda text, at: fence_of(text, at.start),
                    lambda key: dataclasses.replace(rule, fence=key))
    if not (rule.labelled or rule.arg is not None) or rule.heading:
        return rule
    return narrowed(rule, examples, lambda text, at: str(depth_at(rule.region(text), at.start)),
                    lambda key: dataclasses.replace(rule, depth=int(key)))


def narrowed(rule: Locator, examples: Sequence[CheckedExample],
             key_of: Callable[[str, Seen], str], narrow: Callable[[str], Locator]) -> Locator:
    """``narrow(key)``: ``rule`` reading only the part of the document (its
    heading, its group) ``key``, the part ``key_of`` the example's text and its
    value's place gives for every example that fills the field (its first
    item), when that narrowed rule holds on every example; else ``rule``
    (values in different parts, in none, or not placed)."""
    keys = set()
    for example in examples:
        value = example_value(example, rule.field)
        first = next((v.strip() for v in (value if isinstance(value, list) else [value])
                      if isinstance(v, str) and v.strip()), "")
        if not first:
            continue
        place = seen_at(first, example.text)
        if place is None:
            return rule
        keys.add(key_of(example.text, place))
    if len(keys) != 1 or "" in keys:
        return rule
    narrowed = narrow(keys.pop())
    held = all(narrowed.holds(example_value(e, rule.field), e.text) for e in examples)
    return narrowed if held else rule
