"""The bounded cache."""

from __future__ import annotations

import pytest

from agentflow._lru import LRU


def test_least_recently_used_goes_first() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and len(cache) == 2
    assert cache.get_or_make("d", lambda: 4) == 4 and cache.get_or_make("d", lambda: 5) == 4
    with pytest.raises(ValueError):
        LRU(0)


def test_per_type_reads_a_type_once_until_its_fields_change() -> None:
    from pydantic import BaseModel

    from agentflow._lru import per_type

    class Card(BaseModel):
        name: str

    reads: list[object] = []

    def read(tp: object) -> int:
        reads.append(tp)
        return len(reads)

    cache: LRU[object, tuple[object, int]] = LRU(4)
    assert per_type(cache, Card, read) == 1 and per_type(cache, Card, read) == 1
    Card.__pydantic_fields__ = dict(Card.__pydantic_fields__)  # as a rebuild makes
    assert per_type(cache, Card, read) == 2 and per_type(cache, Card, read) == 2
    assert per_type(cache, [1], read) == 3 and per_type(cache, [1], read) == 4  # never kept
    assert reads[0] is Card
