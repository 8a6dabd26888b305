"""``SQLiteStateStore``: the embedded default ``StateStore``, one SQLite file
through aiosqlite (its queries run on aiosqlite's own thread, never on the
event loop).

Table (created on first use)::

    CREATE TABLE agentflow_states (
        key TEXT PRIMARY KEY, version INTEGER NOT NULL,
        state BLOB NOT NULL,      -- AgentState.to_json()
        updated_at REAL NOT NULL) -- Unix seconds

The version check is one conditional statement (``INSERT ... ON CONFLICT DO
NOTHING`` for a new key, ``UPDATE ... WHERE version = ?`` otherwise), so it
holds across processes sharing the file too. The file runs in WAL mode with
a 5 s busy timeout.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import aiosqlite
import anyio

from agentflow.errors import StateConflictError
from agentflow.state import AgentState
from agentflow.web.store import StoredState, check_key

__all__ = ["SQLiteStateStore", "check_table"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def check_table(table: str) -> str:
    """``table`` when it is a plain SQL identifier.

    Raises:
        ValueError: naming the rule.
    """
    if not isinstance(table, str) or not _TABLE.match(table):
        raise ValueError(f"table must match {_TABLE.pattern} (a plain SQL identifier), "
                         f"got {table!r}")
    return table


class SQLiteStateStore:
    """A ``StateStore`` in one SQLite file.

    Args:
        path: the database file (created if missing); ``":memory:"`` for a
            store that lives as long as this object.
        table: the table's name (a plain identifier).

    Use ``async with SQLiteStateStore(...) as store`` or call ``aclose()``:
    the connection holds a thread.

    Raises:
        ValueError: a bad ``table``.
    """

    def __init__(self, path: str | os.PathLike[str] = "agentflow-states.sqlite3", *,
                 table: str = "agentflow_states") -> None:
        self.path = os.fspath(path)
        self.table = check_table(table)
        self._db: aiosqlite.Connection | None = None
        self._opening = anyio.Lock()

    def __repr__(self) -> str:
        return f"SQLiteStateStore(path={self.path!r}, table={self.table!r})"

    async def _conn(self) -> aiosqlite.Connection:
        if self._db is not None:
            return self._db
        async with self._opening:
            if self._db is None:
                db = await aiosqlite.connect(self.path, timeout=5.0)
                try:
                    await db.execute("PRAGMA journal_mode=WAL")
                    await db.execute(
                        f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, "
                        "version INTEGER NOT NULL, state BLOB NOT NULL, updated_at REAL NOT NULL)"
                    )
                    await db.commit()
                except BaseException:
                    await db.close()
                    raise
                self._db = db
        return self._db

    async def load(self, key: str) -> StoredState:
        """The conversation ``key`` (empty, version 0, if never saved).

        Raises:
            InvalidInputError: a bad key. InvalidStateError: a malformed document.
        """
        check_key(key)
        db = await self._conn()
        async with db.execute(f"SELECT version, state FROM {self.table} WHERE key = ?",
                              (key,)) as cursor:
            row: Any = await cursor.fetchone()
        if row is None:
            return StoredState(AgentState(), 0)
        return StoredState(AgentState.from_json(row[1]), int(row[0]))

    async def save(self, key: str, state: AgentState, *, version: int) -> int:
        """Write ``state`` if ``key`` is still at ``version``; the new version.

        Raises:
            StateConflictError: the stored version is not ``version`` (nothing written).
            InvalidInputError: a bad key or version.
        """
        check_key(key, version)
        blob = state.to_json()
        db = await self._conn()
        if version == 0:
            cursor = await db.execute(
                f"INSERT INTO {self.table} (key, version, state, updated_at) VALUES (?, 1, ?, ?) "
                "ON CONFLICT(key) DO NOTHING", (key, blob, time.time()))
        else:
            cursor = await db.execute(
                f"UPDATE {self.table} SET version = version + 1, state = ?, updated_at = ? "
                "WHERE key = ? AND version = ?", (blob, time.time(), key, version))
        changed = cursor.rowcount
        await cursor.close()
        await db.commit()
        if changed != 1:
            raise StateConflictError(key, version, await self._version(db, key))
        return version + 1

    async def delete(self, key: str) -> None:
        """Forget the conversation ``key`` (no error if it does not exist)."""
        check_key(key)
        db = await self._conn()
        await db.execute(f"DELETE FROM {self.table} WHERE key = ?", (key,))
        await db.commit()

    async def _version(self, db: aiosqlite.Connection, key: str) -> int:
        async with db.execute(f"SELECT version FROM {self.table} WHERE key = ?",
                              (key,)) as cursor:
            row: Any = await cursor.fetchone()
        return 0 if row is None else int(row[0])

    async def aclose(self) -> None:
        """Close the connection (the store reopens it if used again)."""
        db, self._db = self._db, None
        if db is not None:
            await db.close()

    async def __aenter__(self) -> SQLiteStateStore:
        await self._conn()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
