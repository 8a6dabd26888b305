"""A learned locator's rule in words (``Locator.describe``): where it reads,
up to what, under which group, fence, depth, parent keys, ``---`` document
or record, for reports and the CLI's ``learned:`` lines."""

from __future__ import annotations

from agentflow.grounding.list_separators import LIST_MARKS, loose
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
    section: str
    row: tuple[str, ...]

    def describe(self) -> str:
        """The rule in words (for reports, the ``learned:`` lines):
        ``version: at the start of a line after 'Version: ', to the end of
        the line``; with nothing before the value, ``at the start of a
        line``, not ``after ''``."""
        where = "at the start of a line after" if self.anchored else "after"
        until = ("up to a column gap (two spaces or more)" if is_gap(self.right) else
                 f"up to {self.right!r}" if self.right else "to the end of the line")
        if self.right_word:
            until += f" before {self.right_word!r}"
        mark = (self.split or "").strip(" \t")
        split = (f", items split by {mark!r} with any blanks around it" if len(mark) == 1 and (
            mark in LIST_MARKS) and self.split and loose(self.split, self.marks)
            else f", items split by {self.split!r}" if self.split else "")
        under = f" under a heading {self.heading!r}" if self.heading else ""
        if self.group:
            under += f" inside group {self.group!r}"
        if self.fence:
            under += f" inside a block fenced by {self.fence!r}"
        if self.depth:
            under += f" at nesting depth {self.depth}"
        if self.parents:
            under += " under " + " under ".join(
                "a list item" if k == "-" else repr(k if k[:1] == "<" else k + ":")
                for k in self.parents)
        if self.document:
            marks = ", ".join(f"{k + ':'!r}" for k in self.document[:4])
            more = ", ..." if len(self.document) > 4 else ""
            under += f", in the '---' document that writes {marks}{more}"
        if self.echoes:
            under += " (also written after " + ", ".join(
                f"{k + ':'!r}" for k in self.echoes) + ": where that differs, unpinned)"
        if self.record:
            under += f", in {record_words(self.record)}"
        if self.section:
            under += f", above the first line opened by {self.section!r}"
        if self.row:
            sides = " and ".join(f"{text!r} {side}" for text, side in zip(
                self.row, ("before it", "after it"), strict=True) if text)
            under += f" (every example's line writes {sides}: where a line does not, unpinned)"
        if self.items:
            return f"{self.field}: every list item (its own lines){under}, in order"
        if self.arg is not None:
            only = ", the last on its line" if self.last else ""
            ends = f" and ends with {self.tail!r}" if self.tail else ""
            line = f"a line that begins with {self.left!r}" if self.left else "a line"
            return (f"{self.field}: argument {self.arg + 1} (one word, or one quoted string"
                    f"{only}) of {line}{ends}{under}")
        if self.marker:
            where = "at the start of a line after a numbered item marker like"

        more = (", and on over its paragraph's next lines" if self.paragraph else
                ", and on over its continuation lines" if self.continued else "")
        if self.left or self.marker:
            where = f"{where} {self.left!r}"
        else:  # nothing before it: not "after ''"
            where = "at the start of a line" if self.anchored else "anywhere on a line"
        return f"{self.field}: {where}, {until}{split}{more}{under}"
