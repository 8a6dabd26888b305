"""``merge_spans``: spans in order of their starts, the overlapping ones
joined (void blocks and number stretches join touching spans too; the lists
under a heading do not)."""

from __future__ import annotations

import pytest

from agentflow.grounding.spans import merge_spans


@pytest.mark.parametrize(("spans", "touching", "merged"), [
    ([], True, []),
    ([(0, 3)], True, [(0, 3)]),
    ([(0, 3), (5, 8)], True, [(0, 3), (5, 8)]),
    ([(0, 5), (2, 3)], True, [(0, 5)]),            # inside the last one
    ([(0, 3), (2, 6), (4, 9)], True, [(0, 9)]),    # a chain of overlaps
    ([(0, 3), (3, 5)], True, [(0, 5)]),            # touching: joined
    ([(0, 3), (3, 5)], False, [(0, 3), (3, 5)]),   # touching: apart
    ([(0, 4), (3, 5)], False, [(0, 5)]),
])
def test_overlapping_spans_are_joined(spans: list[tuple[int, int]], touching: bool,
                                      merged: list[tuple[int, int]]) -> None:
    assert merge_spans(spans, touching=touching) == merged
