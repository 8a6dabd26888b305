"""A learned locator's rule in words (``Locator.describe``): where it reads,
up to what, under which group, fence, depth, parent keys, ``---`` document
or record, for reports and the CLI's ``learned:`` lines."""

from __future__ import annotations

from agentflow.grounding.locator_places import is_gap
from agentflow.grounding.locator_reading import LocatorReading
from agentflow.grounding.sibling_blocks import record_words

__all__ = ["LocatorWords"]


class LocatorWords(LocatorReading):
    """The base of ``Locator`` that says its rule in words (``describe``),
    reading only the fields below and ``LocatorReading``'s."""

    __slots__ = ()

    field: str
    echoes: tuple[str, ...]
    record: str

    def describe(self) -> str:
        """The rule in words (for reports, the ``learned:`` lines):
        ``version: at the start of a line after 'Version: ', to the end of
        the line``."""
        return describe(self)


def describe(rule: LocatorWords) -> str:
    """``rule`` in words (for reports, the ``learned:`` lines): ``version: at
    the start of a line after 'Version: ', to the end of the line``."""
    where = "at the start of a line after" if rule.anchored else "after"
    until = ("up to a column gap (two spaces or more)" if is_gap(rule.right) else
             f"up to {rule.right!r}" if rule.right else "to the end of the line")
    if rule.right_word:
        until += f" before {rule.right_word!r}"
    split = f", items split by {rule.split!r}" if rule.split else ""
    under = f" under a heading {rule.heading!r}" if rule.heading else ""
    if rule.group:
        under += f" inside group {rule.group!r}"
    if rule.fence:
        under += f" inside a block fenced by {rule.fence!r}"
    if rule.depth:
        under += f" at nesting depth {rule.depth}"
    if rule.parents:
        under += " under " + " under ".join(
            "a list item" if k == "-" else f"{k + ':'!r}" for k in rule.parents)
    if rule.document:
        marks = ", ".join(f"{k + ':'!r}" for k in rule.document[:4])
        more = ", ..." if len(rule.document) > 4 else ""
        under += f", in the '---' document that writes {marks}{more}"
    if rule.echoes:
        under += " (also written after " + ", ".join(
            f"{k + ':'!r}" for k in rule.echoes) + ": where that differs, unpinned)"
    if rule.record:
        under += f", in {record_words(rule.record)}"
    if rule.items:
        return f"{rule.field}: every list item (its own lines){under}, in order"
    if rule.arg is not None:
        only = ", the last on its line" if rule.last else ""
        return (f"{rule.field}: argument {rule.arg + 1} (one word, or one quoted string"
                f"{only}) of a line that begins with {rule.left!r}{under}")
    if rule.marker:
        where = "at the start of a line after a numbered item marker like"

    more = (", and on over its paragraph's next lines" if rule.paragraph else
            ", and on over its continuation lines" if rule.continued else "")
    return f"{rule.field}: {where} {rule.left!r}, {until}{split}{more}{under}"
