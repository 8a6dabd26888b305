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
    not read where the line goes on after it. Where every example's line
    writes the same arguments before the value, they are the line's key
    (``left``: ``We recommend that you upgrade your``, not ``We``), and
    where it writes the same arguments after it, a line must end with them
    (``Locator.tail``: ``packages.``); sentences (lines that end with
    ``.``, ``!`` or ``?``) that share only their first word make no rule."""
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
    lines = [words for e in examples if isinstance(v := example_value(e, name), str) and v.strip()
             for words in _value_lines(v.strip(), e.text, keyword, index)]
    heads = {words[:index + 1] for words in lines}
    tails = {words[index + 2:] for words in lines}
    tail = " ".join(tails.pop()) if len(tails) == 1 else ""
    if len(heads) == 1:  # the words before the value are the same in every example's
        # line: they are its key, not the first alone (``We recommend that you upgrade your``)
        return Locator(name, " ".join(heads.pop()), True, "", arg=0, last=last, tail=tail)
    if keyword.isalpha() and all(words[-1].endswith((".", "!", "?")) for words in lines):
        return None  # sentences that share their first word only: any other sentence
        # that begins with it (``We thank ...``) would be read
    return Locator(name, keyword, True, "", arg=index, last=last, tail=tail)


def _value_lines(value: str, text: str, keyword: str, index: int) -> list[tuple[str, ...]]:
    """The arguments (``line_arguments``) of each line of ``text`` that
    begins with ``keyword`` and writes ``value`` as its argument ``index``
    after it."""
    out = []
    for line in text.splitlines():
        words = tuple(line[slice(*span)] for span in line_arguments(line))
        if len(words) > index + 1 and words[0] == keyword and words[index + 1] == value:
            out.append(words)
    return out


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
