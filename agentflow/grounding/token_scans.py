"""A tokenizer's scans over a document, in time linear in the document.

A regex that reads a token running to a closer (``<!-- ... -->``, a tag to
its ``>``, a quoted string to its quote) scans the rest of the document (or
line) for the closer from every opener that lacks one: an attacker's
document of openers and no closers (``<x <x <x``, ``<!--`` a line,
``"\\"\\"\\"`` on one long line) took time growing with the square of its
size (minutes for a few hundred KB). The tokenizers of
``agentflow.grounding.markup`` and ``agentflow.grounding.brackets`` find the
same tokens as their regexes would, but find each closer through ``Marks``
(every place of a mark, found in one pass; the next one after an offset by
bisection), and remember, for each place a token's scan reached, where that
scan ended (``Walks``): a second scan that reaches the same place stops there.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

__all__ = ["Marks", "Walks"]


class Marks:
    """The offsets where ``pattern`` matches in ``text`` (a lookahead
    ``(?=-->)`` for a mark of several characters: overlapping places too),
    in order, found in one pass; ``after`` answers in ``O(log n)``."""

    __slots__ = ("_at",)

    def __init__(self, text: str, pattern: str) -> None:
        self._at = [m.start() for m in re.finditer(pattern, text)]

    def after(self, at: int) -> int:
        """The first offset ``>= at`` of a mark; ``-1`` when there is none."""
        k = bisect.bisect_left(self._at, at)
        return self._at[k] if k < len(self._at) else -1


class Walks:
    """A deterministic scan from a place of a mark to a token's end, made
    once per place: ``step(place)`` says what the scan does at a mark's
    place: ``(True, end)`` it ends there (``end``: the token's end, ``-1``
    where the token fails), ``(False, at)`` it goes on from offset ``at``.
    ``end(at)`` is where the scan from offset ``at`` ends; each place's answer
    is kept, so every place is stepped over once whatever the number of scans
    (their total time linear in the text)."""

    __slots__ = ("_ended", "_marks", "_step")

    def __init__(self, marks: Marks, step: Callable[[int], tuple[bool, int]]) -> None:
        self._marks = marks
        self._step = step
        self._ended: dict[int, int] = {}

    def end(self, at: int) -> int:
        """The end of the token whose scan goes on from offset ``at`` (``-1``:
        the token fails)."""
        places: list[int] = []
        while True:
            place = self._marks.after(at)
            if place < 0:
                end = -1
                break
            if place in self._ended:
                end = self._ended[place]
                break
            places.append(place)
            done, at = self._step(place)
            if done:
                end = at
                break
        for place in places:
            self._ended[place] = end
        return end
