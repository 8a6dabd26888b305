"""``agentflow._nesting.nesting_depth``: how deeply a JSON-like value nests,
whatever the classes of its containers and scalars."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentflow._nesting import nesting_depth


class Frozen(Mapping[str, Any]):
    """A mapping that is no dict."""

    def __init__(self, **items: Any) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Text(str):
    """A string subclass: a scalar all the same."""


def test_scalars_nest_nothing_and_containers_of_any_class_count() -> None:
    assert nesting_depth("x", 5) == nesting_depth(None, 5) == nesting_depth(Text("x"), 5) == 0
    flat = {"name": "Ann", "age": 3, "score": 0.5, "ok": True, "email": None, "t": Text("x")}
    assert nesting_depth(flat, 5) == 1
    assert nesting_depth({"a": [Frozen(b=(1, {"c": Text("d")}))]}, 10) == 5
    assert nesting_depth([Frozen(), []], 10) == 2


def test_counting_stops_past_the_limit() -> None:
    deep: Any = "x"
    for _ in range(1000):
        deep = [deep]
    assert nesting_depth(deep, 10) == 11
