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
