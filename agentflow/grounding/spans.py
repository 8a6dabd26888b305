"""Spans of a text, ``[start, end)`` character offsets: joining the ones
that overlap (void blocks, the lists under a heading, the stretches where no
number is read), and keeping the ones no other span holds. Pure functions."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence

__all__ = ["merge_spans", "outside"]


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


def outside(spans: Iterable[tuple[int, int]],
            holders: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans, in their order, that no span of ``holders`` contains
    (``hs <= s and e <= he``): sorted once and searched (the latest end of
    the holders that start by ``s``), never each holder for each span."""
    ordered = sorted(holders)
    starts = [hs for hs, _ in ordered]
    reach = list(itertools.accumulate((he for _, he in ordered), max))
    kept = []
    for s, e in spans:
        at = bisect.bisect_right(starts, s)
        if not at or reach[at - 1] < e:
            kept.append((s, e))
    return kept
