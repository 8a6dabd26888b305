"""The case-insensitive lookup of one ASCII word in ASCII text, and the
whitespace-folded lookup of several words, take paths without a regular
expression; they must find exactly what the pattern finds (every
overlapping occurrence, in order), the second in time linear in the text."""

from __future__ import annotations

import random

from agentflow.grounding.locate import _pattern, _plain_occurrences, _spaced_occurrences


def _by_pattern(value: str, source: str, case_sensitive: bool = False
                ) -> list[tuple[int, int]]:
    pattern = _pattern(value, case_sensitive)
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


def test_whitespace_folded_lookup_equals_the_pattern() -> None:
    rng = random.Random(11)
    pieces = ["a", "b", "A", "ab", " ", "  ", "\n", "\t", "\r\n", "\x0b", "\x1c", "\u00a0",
              "\u2003", "\u00e9", "\u0130", "K"]
    for _ in range(20000):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        case_sensitive = rng.random() < 0.5
        if not value.split() or not (case_sensitive or (value.isascii() and source.isascii())):
            continue
        assert _spaced_occurrences(value, source, case_sensitive) == _by_pattern(
            value, source, case_sensitive), (value, source, case_sensitive)


def test_a_long_value_in_a_long_repetitive_text_is_found_in_linear_time() -> None:
    """A 7 kB value whose words a 1 MB text repeats all but its last (the
    pattern's search took seconds per lookup, minutes for longer values); the
    time is benchmarks/bench_linear.py's."""
    source = "lime  nut " * 100_000
    for words in (800, 6000):
        for case_sensitive in (True, False):
            value = "lime nut " * words + "pear"
            assert _plain_occurrences(value, source, case_sensitive) == []
        assert _plain_occurrences("nut\nlime", source, True)[:2] == [(6, 14), (16, 24)]
