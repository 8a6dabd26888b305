"""``LineIds``: the ids of a JSONL file and the line each was first met on,
a run of consecutive integers kept apart from the database: every answer is
the one a plain dict of every id would give."""

from __future__ import annotations

import random

import pytest

from agentflow.documents.line_ids import LineIds, integer_id
from agentflow.documents.seen import MISSING


@pytest.mark.parametrize(("text", "number"), [
    ("0", 0), ("7", 7), ("-3", -3), ("123456789012345678901", 123456789012345678901),
    ("07", None), ("-0", None), ("+7", None), (" 7", None), ("7.0", None), ("", None),
    ("-", None), ("٣", None), ("1" * 5000, None),
])
def test_integer_ids_are_canonical_texts(text: str, number: int | None) -> None:
    assert integer_id(text) == number


def _suffix(rid: object, line: int) -> str:
    return str(line if rid is None else rid)


def _number(rid: object, line: int) -> int | None:
    if rid is None:
        return line
    if type(rid) is int:
        return rid
    return integer_id(rid) if isinstance(rid, str) else None


def _replay(rids: list[object]) -> None:
    ids = LineIds()
    truth: dict[str, int] = {}
    try:
        for line, rid in enumerate(rids, start=1):
            key = "f.jsonl#" + _suffix(rid, line)
            got = ids.setdefault(key, _number(rid, line), line)
            assert got == truth.get(key, MISSING), (line, rid)
            truth.setdefault(key, line)
    finally:
        ids.close()


@pytest.mark.parametrize("rids", [
    list(range(10)),                          # the common file: 0, 1, 2...
    [None] * 5,                               # no ids: line numbers
    [0, 1, 2, 1, "2", 3, "03", 3.0, 3],       # repeats inside the run, as text too
    [10, 0, 5, 1, 2, 3, 4, 5, 11, 12, 6],     # the run meets an id the database holds
    [0, 1, None, 3, 4, 2, 5],                 # a line number between ids
    [5, 4, 3, 2, 1, 0, 5, 0],                 # descending
    ["a", "b", 0, "a", "0", 1, True, "True", -1, "-1", 2],
])
def test_answers_are_a_dicts(rids: list[object]) -> None:
    _replay(rids)


@pytest.mark.parametrize("seed", range(20))
def test_random_files_answer_as_a_dict(seed: int) -> None:
    rng = random.Random(seed)
    pool: list[object] = [None, "x", "07", "-0", 2.0, True]
    rids = [rng.choice([i, i, i, str(i), rng.randrange(-3, 40), rng.choice(pool)])
            for i in range(200)]
    _replay(rids)
