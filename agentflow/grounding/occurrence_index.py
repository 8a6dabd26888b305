"""Where a string occurs in a text searched for many strings in turn.

``starts(needle, text)`` is every start of ``needle`` in ``text``,
overlapping ones included, in increasing order: what a loop of
``text.find(needle, i + 1)`` returns. A document's grounded values are
looked up one after the other in the same text (thousands of list items,
each one a search), and each search by ``find`` reads the whole text: the
values times the text's length. So a text searched more than
``SCANS_BEFORE_INDEX`` times gets an index built once, in one pass
(``TextIndex``: where each run of ``GRAM`` characters starts), and each later
search reads only the places where the needle's rarest run of ``GRAM``
characters stands. Short texts are always scanned (their scans are cheap).
The answers are the same either way.
"""

from __future__ import annotations

import bisect
import functools
from array import array
from collections.abc import Iterable

__all__ = ["GRAM", "MIN_INDEXED", "SCANS_BEFORE_INDEX", "TextIndex", "scan", "starts"]

GRAM = 4
"""The length of the runs of characters the index keys its places by."""

SCANS_BEFORE_INDEX = 512
"""Searches of one text by ``find`` before its index is built (building it
costs about as much as 600 scans, so a text searched a few times never pays
for one, and one searched many times pays for it at most about twice)."""

MIN_INDEXED = 16_384
"""Texts shorter than this are always scanned."""

_ANCHORS = 64
"""At most this many runs of a long needle are weighed for the rarest one."""

_FEW = 32
"""Places few enough to check each one (more: a longer run is looked up)."""

_LONGEST = 64
"""The longest run the index splits places by."""


def scan(needle: str, text: str) -> list[int]:
    """Every start of ``needle`` in ``text`` (overlapping), by ``find``."""
    found: list[int] = []
    i = text.find(needle)
    while i >= 0:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


class TextIndex:
    """Where each run of ``GRAM`` characters of a text starts (the last
    ``GRAM - 1`` places: their shorter runs), built in one pass; a run's
    places, when many, are split by the longer runs (8, 16, ... characters)
    that start there the first time a needle asks for one (``_run``)."""

    __slots__ = ("_finer", "_keys", "_places", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._places = _places(text, range(len(text)), GRAM)
        self._finer: dict[str, dict[str, array[int]]] = {}  # a run -> its places by longer runs
        self._keys: list[str] | None = None  # sorted, made when a short needle asks

    def starts(self, needle: str) -> list[int]:
        """Every start of ``needle`` in the text (overlapping), in increasing
        order, as ``scan`` finds them (``needle`` not empty): the places of
        its rarest run of ``GRAM`` characters, or, when even those are
        many, of its longest run of ``GRAM`` times a power of two (up to
        ``_LONGEST``), each checked."""
        size = len(needle)
        if size < GRAM:
            return self._short(needle)
        last = size - GRAM
        step = max(1, -(-last // (_ANCHORS - 1)))
        best: array[int] | None = None
        at = 0
        for j in [*range(0, last, step), last]:
            bucket = self._places.get(needle[j:j + GRAM])
            if bucket is None:
                return []
            if best is None or len(bucket) < len(best):
                best, at = bucket, j
        assert best is not None
        if len(best) > _FEW and size >= 2 * GRAM:
            length = GRAM
            while length * 2 <= min(size, _LONGEST):
                length *= 2
            at = min(at, size - length)
            best = self._run(needle[at:at + length])
            if best is None:
                return []
        text = self.text
        return [i - at for i in best if i >= at and text.startswith(needle, i - at)]

    def _run(self, key: str) -> array[int] | None:
        """The places of ``key`` (``GRAM`` times a power of two long), or
        more: all those of its first half when they are few."""
        if len(key) == GRAM:
            return self._places.get(key)
        half = key[:len(key) // 2]
        places = self._run(half)
        if places is None or len(places) <= _FEW:
            return places
        finer = self._finer.get(half)
        if finer is None:
            self._finer[half] = finer = _places(self.text, places, len(key))
        return finer.get(key)

    def _short(self, needle: str) -> list[int]:
        """The starts of a needle shorter than ``GRAM``: the places of every
        run that begins with it (a range of the sorted runs)."""
        keys = self._keys
        if keys is None:
            self._keys = keys = sorted(self._places)
        found: list[int] = []
        k = bisect.bisect_left(keys, needle)
        while k < len(keys) and keys[k].startswith(needle):
            found.extend(self._places[keys[k]])
            k += 1
        found.sort()
        return found


def _places(text: str, where: Iterable[int], length: int) -> dict[str, array[int]]:
    """The places of ``where`` (in increasing order) by the run of
    ``length`` characters of ``text`` that starts at each."""
    kind = "i" if len(text) < 2**31 else "q"
    places: dict[str, array[int]] = {}
    get = places.get
    for i in where:
        key = text[i:i + length]
        bucket = get(key)
        if bucket is None:
            places[key] = bucket = array(kind)
        bucket.append(i)
    return places


class _Searched:
    """A long text's searches so far, and its index once they are many."""

    __slots__ = ("index", "scans")

    def __init__(self) -> None:
        self.scans = 0
        self.index: TextIndex | None = None


@functools.lru_cache(maxsize=8)
def _searched(text: str) -> _Searched:
    return _Searched()


def starts(needle: str, text: str) -> list[int]:
    """Every start of ``needle`` in ``text`` (overlapping), in increasing
    order: by ``find`` (``scan``), or, in a long text searched more than
    ``SCANS_BEFORE_INDEX`` times, from its ``TextIndex``."""
    if len(text) < MIN_INDEXED or not needle:
        return scan(needle, text)
    searched = _searched(text)
    index = searched.index
    if index is None:
        searched.scans += 1
        if searched.scans <= SCANS_BEFORE_INDEX:
            return scan(needle, text)
        searched.index = index = TextIndex(text)
    return index.starts(needle)
