"""Ids already met in a run, with a small value each, in constant memory.

    seen = SeenIds()
    seen.setdefault("a.jsonl#7", 3)     # None: first time (3 is kept)
    seen.setdefault("a.jsonl#7", 9)     # 3: met before, on line 3
    seen["a.jsonl#7"] = 9               # replaced
    seen.get("b.txt", MISSING)          # MISSING: never met

A run over millions of inputs needs to know which ids it has met (a JSONL
file's repeated ids, the records an ``--out`` file already holds). A Python
``dict`` or ``set`` of them costs ~100-170 bytes per id, so memory would grow
with the corpus. ``SeenIds`` keeps them in a private SQLite temporary
database (the standard library's ``sqlite3``; ``sqlite3.connect("")``: an
on-disk database that lives in SQLite's page cache until that fills, then
spills to a temporary file, deleted when closed; sqlite.org/inmemorydb.html,
"Temporary Databases"). Memory is the page cache (``CACHE_KIB``), whatever
the number of ids. The whole id is the key (its UTF-8 bytes, lone surrogates
of undecodable file names included), never a digest: two different ids are
never taken for one.

Cost: one SQLite statement per call, ~5 us at 10k ids and ~15 us at 1M (a
B-tree that no longer fits the cache), measured on a 2-core machine
(benchmarks/RESULTS.md, "Extraction at scale").
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Final

__all__ = ["CACHE_KIB", "MISSING", "Missing", "SeenIds", "Value"]

CACHE_KIB = 2048
"""SQLite's page cache for one ``SeenIds``, in KiB: its memory, at most."""

Value = int | str | None
"""What an id may carry: an int (a line, a position), a string, or ``None``."""


class Missing:
    """The type of ``MISSING``: the answer for an id never met."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = Missing()
"""``SeenIds.get``'s default: the id was never met (``None`` is a value)."""


def _key(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class SeenIds:
    """A mapping of id (``str``) -> ``Value`` held in a temporary SQLite
    database, not in Python objects (see the module docstring).

    One thread at a time may use it (the run's reader may be a worker
    thread, so the connection is not tied to the thread that made it).
    ``close()`` (or garbage collection) deletes its temporary file.
    """

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = sqlite3.connect(
            "", isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}",
                       "temp_store=FILE"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute("CREATE TABLE seen (id BLOB PRIMARY KEY, value) WITHOUT ROWID")
        self._db.execute("BEGIN")  # one transaction: nothing is ever committed to a disk
        self._len = 0

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError("SeenIds is closed")
        return self._db

    def setdefault(self, key: str, value: Value) -> Value | Missing:
        """Add ``key`` with ``value`` unless it is there; the value it had
        before (``MISSING`` when it was not there: it is now)."""
        k = _key(key)
        if self._conn.execute("INSERT OR IGNORE INTO seen VALUES (?, ?)", (k, value)).rowcount:
            self._len += 1
            return MISSING
        row = self._conn.execute("SELECT value FROM seen WHERE id = ?", (k,)).fetchone()
        return row[0]  # type: ignore[no-any-return]

    def get(self, key: str, default: Value | Missing = MISSING) -> Value | Missing:
        """``key``'s value, or ``default`` when it was never added."""
        row = self._conn.execute("SELECT value FROM seen WHERE id = ?", (_key(key),)).fetchone()
        return default if row is None else row[0]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not MISSING

    def __setitem__(self, key: str, value: Value) -> None:
        k = _key(key)
        if not self._conn.execute("UPDATE seen SET value = ? WHERE id = ?", (value, k)).rowcount:
            self._conn.execute("INSERT INTO seen VALUES (?, ?)", (k, value))
            self._len += 1

    def __len__(self) -> int:
        return self._len

    def items(self) -> Iterator[tuple[str, Value]]:
        """Every ``(id, value)``, streamed from the database in key order
        (memory: one row at a time)."""
        for k, value in self._conn.execute("SELECT id, value FROM seen ORDER BY id"):
            yield bytes(k).decode("utf-8", "surrogatepass"), value

    def close(self) -> None:
        """Drop the ids and their temporary file (idempotent)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit sqlite3 may be gone
            self.close()
