"""A bounded mapping for caches keyed by output types or schemas.

A cache keyed by a type keeps the type alive; one that never forgets grows
with every fresh type (``create_model`` per request). ``LRU`` holds at most
``maxsize`` entries and forgets the least recently used one first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["LRU", "per_type"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``maxsize`` entries, least recently used evicted first (thread-safe)."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: K) -> V | None:
        """The value for ``key`` (now the most recent), or ``None``."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Store ``value`` for ``key``, evicting the oldest entry past ``maxsize``."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value, or ``make()`` stored and returned."""
        value = self.get(key)
        return self.put(key, make()) if value is None else value


def per_type(cache: LRU[Any, tuple[Any, V]], tp: Any, read: Callable[[Any], V]) -> V:
    """``read(tp)``, kept in ``cache`` per type and read again when the type's
    pydantic fields are another mapping (``__pydantic_fields__``: a model
    rebuilt, a forward reference resolved); a type that cannot be a key (an
    unhashable annotation) is read each time. The value is shared: not to be
    changed by the caller."""
    try:
        cached = cache.get(tp)
    except TypeError:  # an unhashable annotation
        return read(tp)
    source = getattr(tp, "__pydantic_fields__", None)
    if cached is not None and cached[0] is source:
        return cached[1]
    return cache.put(tp, (source, read(tp)))[1]
