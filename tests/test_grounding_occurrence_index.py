"""``occurrence_index``: every start of a needle in a text, from the index
of the text's runs of characters, is what a loop of ``find`` returns
(overlapping starts, in order), for needles shorter than a run, as long as
one, and longer than the runs the index splits its places by; and
``starts`` answers the same before and after a text searched many times
gets its index."""

from __future__ import annotations

import random

import pytest

from agentflow.grounding import occurrence_index
from agentflow.grounding.occurrence_index import GRAM, TextIndex, scan, starts


def _texts() -> list[str]:
    rng = random.Random(11)
    texts = ["", "a", "aaaa", "abab" * 40, "- lime 1\n- lime 2\n" * 30,
             "é\u0301 x\U0010ffff" * 20]
    for alphabet in ("ab", "ab \n", "0123456789 -", "aé\u0301 \U0010ffffZ"):
        unit = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        texts.append("".join(unit if rng.random() < 0.8 else rng.choice(alphabet)
                             for _ in range(rng.randint(50, 600))))
    return texts


@pytest.mark.parametrize("text", _texts())
def test_the_index_finds_what_find_finds(text: str) -> None:
    index = TextIndex(text)
    rng = random.Random(len(text))
    needles = {text[a:a + size] for a in range(0, len(text), 7)
               for size in (1, GRAM - 1, GRAM, GRAM + 1, 2 * GRAM, 70, 150)}
    needles |= {"zz", "q" * 9, "a" * 100, "lime 3", "\U0010ffff"}
    needles |= {"".join(rng.choice("ab \né") for _ in range(rng.randint(1, 12))) for _ in range(50)}
    for needle in filter(None, needles):
        assert index.starts(needle) == scan(needle, text), needle


def test_scan_finds_overlapping_starts() -> None:
    assert scan("aa", "aaaa") == [0, 1, 2]
    assert TextIndex("aaaa" * 9).starts("aa") == list(range(35))


def test_a_text_searched_many_times_answers_the_same_from_its_index() -> None:
    text = "".join(f"- lime{i:05d} nut {i % 7}\n" for i in range(2_000))
    assert len(text) >= occurrence_index.MIN_INDEXED
    needles = [f"lime{i:05d} nut" for i in range(occurrence_index.SCANS_BEFORE_INDEX + 200)]
    needles += ["nut 3", "- ", "\n", "absent", "lime01999 nut 4\n"]
    assert [starts(n, text) for n in needles] == [scan(n, text) for n in needles]
    assert occurrence_index._searched(text).index is not None  # the last ones: by the index
