"""``merge_spans``: spans in order of their starts, the overlapping ones
joined (void blocks and number stretches join touching spans too; the lists
under a heading do not); ``outside``: the spans no other span holds."""

from __future__ import annotations

import random

import pytest

from agentflow.grounding.spans import merge_spans, outside


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


def test_outside_keeps_the_spans_no_holder_contains() -> None:
    holders = [(10, 20), (0, 4), (12, 30)]
    spans = [(0, 4), (1, 3), (3, 5), (10, 25), (12, 30), (11, 31), (40, 41)]
    assert outside(spans, holders) == [(3, 5), (10, 25), (11, 31), (40, 41)]
    assert outside(spans, []) == spans
    rng = random.Random(3)
    for _ in range(200):  # what testing every holder for every span keeps
        holders = [(a, a + rng.randint(0, 9)) for a in rng.sample(range(60), 8)]
        spans = [(a, a + rng.randint(0, 9)) for a in range(0, 60, 3)]
        assert outside(spans, holders) == [
            (s, e) for s, e in spans if not any(hs <= s and e <= he for hs, he in holders)]
