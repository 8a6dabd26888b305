"""The case-insensitive lookup of one ASCII word in ASCII text takes a path
without a regular expression; it must find exactly what the pattern finds
(every overlapping occurrence, in order)."""

from __future__ import annotations

import random

from agentflow.grounding.locate import _pattern, _plain_occurrences


def _by_pattern(value: str, source: str) -> list[tuple[int, int]]:
    pattern = _pattern(value, False)
    assert pattern is not None
    spans, pos = [], 0
    while (m := pattern.search(source, pos)) is not None:
        spans.append((m.start(), m.end()))
        pos = m.start() + 1
    return spans


def test_ascii_word_lookup_equals_the_pattern() -> None:
    rng = random.Random(7)
    letters = "aAbBzZ-_.@+*(1 \t\n"
    for _ in range(5000):
        source = "".join(rng.choice(letters) for _ in range(rng.randint(0, 40)))
        value = "".join(rng.choice(letters.strip()) for _ in range(rng.randint(1, 4))).strip()
        if not value or any(c.isspace() for c in value):
            continue
        assert _plain_occurrences(value, source, False) == _by_pattern(value, source), (
            value, source)


def test_overlapping_and_mixed_case_occurrences() -> None:
    assert _plain_occurrences("aA", "AaAa", False) == [(0, 2), (1, 3), (2, 4)]
    assert _plain_occurrences("Ann", "ann ANN anne", False) == [(0, 3), (4, 7), (8, 11)]
    assert _plain_occurrences("x.y", "XaY x.Y", False) == [(4, 7)]  # "." is no wildcard
