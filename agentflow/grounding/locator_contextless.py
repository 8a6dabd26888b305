"""Locators learned where no text around a field's value is common to the
worked examples (a title quoted in one, bare in another; a list with group
headings between its items): the value as the same argument of a line that
begins with the same first argument (``Locator.arg``, ``learn_argument``),
or a list as every list item of its document (``Locator.items``,
``learn_items``). ``agentflow.grounding.locators`` tries them when no
context rule holds, and documents the rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.grounding.lines import line_arguments
from agentflow.grounding.locate import occurrences
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["learn_argument", "learn_items"]


def learn_items(name: str, examples: Sequence[CheckedExample]) -> Locator | None:
    """A list that is every list item of its document (its own text), in order
    (``Locator.items``), when each example's value is exactly that (an
    empty one: its text has no list item); at least two examples must fill
    the field. ``None`` otherwise."""
    rule = Locator(name, "", False, "", many=True, items=True)
    filled = [e for e in examples if example_value(e, name)]
    if len(filled) < 2 or not all(rule.holds(example_value(e, name), e.text) for e in examples):
        return None
    return rule


def learn_argument(name: str, examples: Sequence[CheckedExample]) -> Locator | None:
    """The field's value as the same argument of a line that begins with the
    same first argument in every example that fills it (``.TH``: the title is
    its first argument, the section its second), when no text around the
    value is common to them (quoted in one, bare in another); at least two
    examples must fill the field. ``None`` otherwise. The first argument
    after it, where it is the whole rest of its line in every example, is
    read as the rest of the line (``Locator(left=keyword)``, no ``arg``):
    one-word examples cannot show that the value is one word. An argument
    that is the last of its line in every example (``Locator.last``) is
    not read where the line goes on after it."""
    places: set[tuple[str, int]] = set()
    filled = 0
    for example in examples:
        value = example_value(example, name)
        if not isinstance(value, str) or not value.strip():
            continue
        filled += 1
        found = _argument_places(value.strip(), example.text)
        if not found:
            return None
        places = found if filled == 1 else places & found
        if not places:
            return None
    if filled < 2 or len(places) != 1:
        return None
    ((keyword, index),) = places
    if index == 0:
        # every example's value is the whole rest of its line (``Component: toolbar``):
        # the examples cannot tell one word from the rest of the line, and a key's
        # value is the rest of its line (``Component: settings UI``), so read that
        rest = Locator(name, keyword, True, "")
        if all(rest.holds(example_value(e, name), e.text) for e in examples):
            return rest
    last = all(len(args) == index + 2 for e in examples if example_value(e, name)
               for line in e.text.splitlines() for args in [line_arguments(line)]
               if args and line[slice(*args[0])] == keyword)
    return Locator(name, keyword, True, "", arg=index, last=last)


def _argument_places(value: str, text: str) -> set[tuple[str, int]]:
    """``(first argument, index)`` of each line argument ``value`` is exactly
    (``agentflow.grounding.locator_rule.line_arguments``; never the first)."""
    out = set()
    for start, end in occurrences(value, text):
        lo = text.rfind("\n", 0, start) + 1
        hi = text.find("\n", lo)
        line = text[lo:len(text) if hi < 0 else hi]
        args = line_arguments(line)
        for k, (a, b) in enumerate(args[1:], start=1):
            if (a, b) == (start - lo, end - lo):
                out.add((line[slice(*args[0])], k - 1))
    return out
