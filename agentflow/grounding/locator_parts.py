"""A learned rule narrowed to the part of a document every example writes
the field in: its INI-style group or kind of group, its fenced block and its
label's nesting depth (``grouped``: ``[Desktop Entry]``, ``[submodule "*"]``,
``agentflow.grounding.groups``; ``^---``, ``agentflow.grounding.fences``;
``agentflow.grounding.depths``) or, for a list rule without a label, the
heading of its list (``headed``: ``Notes:``, ``agentflow.grounding.
list_heading``). ``agentflow.grounding.locators`` documents the rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from agentflow.grounding.depths import depth_at
from agentflow.grounding.fences import fence_of
from agentflow.grounding.groups import group_kind, group_of
from agentflow.grounding.key_paths import common_start, learn_document, parent_keys
from agentflow.grounding.list_heading import heading_of
from agentflow.grounding.locator_places import Seen, example_value, seen_at
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["grouped", "headed", "narrowed"]


def headed(rule: Locator, examples: Sequence[CheckedExample],
           like: Seen | None = None) -> Locator:
    """``rule`` (a list rule without a label: ``- `` items, every list item)
    reading only the lists under the heading every example that fills the
    field writes its list under (``Locator.heading``; ``agentflow.grounding.
    list_heading``), when that rule holds on every example; else ``rule``."""
    if not rule.many or rule.labelled or rule.split or rule.continued or rule.arg is not None:
        return rule
    return narrowed(rule, examples, lambda text, at: heading_of(text, at.line),
                    lambda key: dataclasses.replace(rule, heading=key), like)


def grouped(rule: Locator, examples: Sequence[CheckedExample],
            like: Seen | None = None) -> Locator:
    """``rule`` reading only inside the INI-style group every example that
    fills the field writes its value (its first item) under (``Locator.group``;
    ``agentflow.grounding.groups``: ``[Desktop Entry]``), else inside the kind
    of group they all write it under (``[submodule "*"]`` of ``[submodule
    "a"]`` and ``[submodule "b"]``: ``groups.group_kind``); inside the fenced
    block they all write it in (``Locator.fence``; ``agentflow.grounding.
    fences``: ``^---``); and, for a rule that reads after a label, its label
    only at the depth they all write it at (``Locator.depth``; ``agentflow.
    grounding.depths``, read inside the rule's group and block). Each where
    the narrowed rule holds on every example; else not narrowed so (values in
    different groups, or in none)."""
    there = narrowed(rule, examples, lambda text, at: group_of(text, at.start),
                     lambda key: dataclasses.replace(rule, group=key), like)
    if there is rule:
        there = narrowed(rule, examples, lambda text, at: group_kind(group_of(text, at.start)),
                         lambda key: dataclasses.replace(rule, group=key), like)
    rule = there
    rule = narrowed(rule, examples, lambda text, at: fence_of(text, at.start),
                    lambda key: dataclasses.replace(rule, fence=key), like)
    if not (rule.labelled or rule.arg is not None) or rule.heading:
        return rule
    rule = _documented(rule, examples, like)
    deep = narrowed(rule, examples, lambda text, at: str(depth_at(rule.region(text), at.start)),
                    lambda key: _parented(dataclasses.replace(rule, depth=int(key)), examples,
                                          like), like)
    return deep


def _placed(rule: Locator, examples: Sequence[CheckedExample],
            like: Seen | None) -> list[tuple[str, int]] | None:
    """Each example that fills the field: its text and where its value (its
    first item) begins; ``None`` where one is not placed."""
    places = _first_places(rule.field, examples, like)
    return None if places is None else [(text, place.start) for text, place in places]


def _first_places(field: str, examples: Sequence[CheckedExample],
                  like: Seen | None) -> list[tuple[str, Seen]] | None:
    """Each example that fills ``field``: its text and its value's (its first
    item's) place there (``seen_at``, as ``like`` placed it); ``None`` where
    one is not placed."""
    out = []
    for example in examples:
        value = example_value(example, field)
        first = next((v.strip() for v in (value if isinstance(value, list) else [value])
                      if isinstance(v, str) and v.strip()), "")
        if not first:
            continue
        place = seen_at(first, example.text, like)
        if place is None:
            return None
        out.append((example.text, place))
    return out


def _held(rule: Locator, examples: Sequence[CheckedExample]) -> bool:
    """Whether ``rule`` holds on every example."""
    return all(rule.holds(example_value(e, rule.field), e.text) for e in examples)


def _documented(rule: Locator, examples: Sequence[CheckedExample],
                like: Seen | None) -> Locator:
    """``rule`` reading, in a stream of several ``---`` documents, only the one
    its examples write the value in (``Locator.document``; ``agentflow.
    grounding.key_paths.learn_document``), where that rule holds on every
    example; else ``rule``."""
    placed = _placed(rule, examples, like)
    if not placed:
        return rule
    marks = learn_document(placed, rule.key)
    there = dataclasses.replace(rule, document=marks) if marks else rule
    return there if there is not rule and _held(there, examples) else rule


def _parented(rule: Locator, examples: Sequence[CheckedExample],
              like: Seen | None) -> Locator:
    """``rule`` (read at a ``depth``) reading its label only under the parent
    keys every example writes it under (``Locator.parents``; ``agentflow.
    grounding.key_paths.parent_keys``), where that rule holds on every
    example; else ``rule`` (``narrowed`` then asks whether it holds at its
    depth alone: an example may write the label at that depth under another
    parent first, ``bugs.url`` before ``repository.url``)."""
    placed = _placed(rule, examples, like)
    if rule.depth is None or not rule.depth or not placed:
        return rule
    chains = []
    for text, at in placed:
        lines = rule.region(text).split("\n")
        row = text.count("\n", 0, at)
        rows = [i for i in rule.label_rows(lines) if i <= row]
        chains.append(parent_keys(lines, rows[-1] if rows else row))
    parents = common_start(chains)
    there = dataclasses.replace(rule, parents=parents) if parents else rule
    return there if there is not rule and _held(there, examples) else rule


def narrowed(rule: Locator, examples: Sequence[CheckedExample],
             key_of: Callable[[str, Seen], str], narrow: Callable[[str], Locator],
             like: Seen | None = None) -> Locator:
    """``narrow(key)``: ``rule`` reading only the part of the document (its
    heading, its group) ``key``, the part ``key_of`` the example's text and its
    value's place gives for every example that fills the field (its first
    item), when that narrowed rule holds on every example; else ``rule``
    (values in different parts, in none, or not placed); ``like``: each value
    placed as ``learn_locator`` placed it."""
    places = _first_places(rule.field, examples, like)
    if places is None:
        return rule
    keys = {key_of(text, place) for text, place in places}
    if len(keys) != 1 or "" in keys:
        return rule
    there = narrow(keys.pop())
    held = all(there.holds(example_value(e, rule.field), e.text) for e in examples)
    return there if held else rule
