"""The kind of value a learned rule keeps from its examples (``Locator.letter``,
``digit``, ``clauses``, ``spaced``, ``decimal``, ``unit``, ``comments``,
``quoted``, ``marked``, ``head``, ``shapes``): read off the examples' values
once the rule is learned (``agentflow.grounding.locators``), and used by
``Locator.pins`` / ``fits`` on a document."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agentflow.grounding.list_separators import item_marks
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.quotes import opens_quote
from agentflow.grounding.token_shapes import value_shapes
from agentflow.grounding.value_clauses import block_marker, clause_break, comment_tail
from agentflow.grounding.value_heads import value_head
from agentflow.grounding.value_kinds import figure, quantity_kind
from agentflow.output.examples import CheckedExample

__all__ = ["example_shapes", "with_kind"]


def example_shapes(name: str, examples: Sequence[CheckedExample]) -> tuple[str, ...]:
    """The token shapes of field ``name``'s values in ``examples`` (``Locator.shapes``)."""
    values: list[str] = []
    for example in examples:
        value = example_value(example, name)
        values += [value] if isinstance(value, str) else [
            v for v in (value or []) if isinstance(v, str)] if isinstance(value, list) else []
    return tuple(sorted(value_shapes(values)))


def with_kind(rule: Locator, examples: Sequence[CheckedExample]) -> Locator:
    """``rule`` with the kind of value every example shows for a single field
    (``Locator.letter`` / ``Locator.digit``: each value holds a letter, a
    digit; ``Locator.clauses``: some value holds a clause break;
    ``Locator.spaced``: some value holds more than one word; ``decimal``,
    ``unit``: each writes a decimal number, with a unit), and for any
    field whether some value (an item) holds an inline comment
    (``Locator.comments``), begins with a quoted string (``Locator.quoted``)
    or with a marker line (``Locator.marked``), and for a list the
    separator-like characters its items hold (``Locator.marks``)."""
    texts: list[str] = []
    for example in examples:
        value = example_value(example, rule.field)
        texts += [v for v in (value if isinstance(value, list) else [value])
                  if isinstance(v, str) and v.strip()]
    rule = dataclasses.replace(rule, quoted=any(opens_quote(v) for v in texts),
                               marked=any(block_marker(v) for v in texts))
    if rule.many:  # an item may hold a comment, or a separator-like character, where one
        # of the examples' does
        return dataclasses.replace(rule, comments=any(comment_tail(v) for v in texts),
                                   marks=item_marks(texts))
    values = [v.strip() for e in examples if isinstance(v := example_value(e, rule.field), str)
              and v.strip()]
    if not values:
        return rule
    decimal, unit = quantity_kind(values)
    read = [v for e in examples for v in rule.values(e.text)]
    return dataclasses.replace(
        rule, decimal=decimal, unit=unit, head=value_head(values, read),
        letter=all(any(c.isalpha() for c in v) for v in values),
        digit=all(figure(v) for v in values),
        clauses=any(clause_break(v) for v in values),
        comments=any(comment_tail(v) for v in values),
        spaced=any(len(v.split()) > 1 for v in values))
