"""Spans of a text, ``[start, end)`` character offsets: joining the ones
that overlap (void blocks, the lists under a heading, the stretches where no
number is read). Pure functions."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["merge_spans"]


def merge_spans(spans: Iterable[tuple[int, int]], *,
                touching: bool = True) -> list[tuple[int, int]]:
    """``spans``, given in order of their starts, with each one that overlaps
    the last kept span joined into it: in order, none overlapping.
    ``touching``: a span that begins where the last one ends joins it too
    (``(0, 3), (3, 5)`` is ``(0, 5)``); else it stays apart."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and (start <= merged[-1][1] if touching else start < merged[-1][1]):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
