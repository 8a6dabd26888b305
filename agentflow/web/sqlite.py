"""``SQLiteStateStore``: the embedded default ``StateStore``, one SQLite file.

Every statement runs on the store's own worker thread (one ``sqlite3``
connection, never the event loop), and a ``save`` is one transaction there:
``BEGIN IMMEDIATE``, the conditional write, ``COMMIT`` (or ``ROLLBACK``).

Table (created on first use)::

    CREATE TABLE agentflow_states (
        key TEXT PRIMARY KEY, version INTEGER NOT NULL,
        state BLOB NOT NULL,      -- AgentState.to_json()
        updated_at REAL NOT NULL) -- Unix seconds

The version check is one conditional statement (``INSERT ... ON CONFLICT DO
NOTHING`` for a new key, ``UPDATE ... WHERE version = ?`` otherwise), so it
holds across processes sharing the file too. The file runs in WAL mode with
a 5 s busy timeout.

Atomic under cancellation and crashes: a ``save`` cancelled before its
commit point rolls back on the worker thread and raises ``CancelledError``
(no transaction is left open for a later save to commit); one cancelled
while its ``COMMIT`` runs returns its version and the cancellation comes at
the caller's next ``await``. A process killed mid-save leaves the file at
the last committed version (SQLite's journal rolls the rest back).
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from agentflow._arguments import check_instance, wrong_value
from agentflow._commit import finish, rearm_cancel
from agentflow.errors import StateConflictError
from agentflow.state import AgentState
from agentflow.web.store import StoredState, check_key

__all__ = ["SQLiteStateStore", "check_table"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
T = TypeVar("T")


def check_table(table: str) -> str:
    """``table`` when it is a plain SQL identifier.

    Raises:
        ArgumentTypeError: ``table`` is no str (a ``TypeError``).
        ArgumentValueError: not a plain identifier (a ``ValueError``), naming the rule.
    """
    what = f"a plain SQL identifier (matching {_TABLE.pattern})"
    check_instance("table", table, str, what)
    if not _TABLE.match(table):
        raise wrong_value("table", what, table)
    return table


class _Save:
    """One save's transaction, shared by the event loop and the worker thread:
    the loop ``abort()``s it on cancellation; the worker commits only if it
    was not aborted before the commit point."""

    __slots__ = ("aborted", "committing", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.aborted = threading.Event()
        self.committing = False

    def abort(self) -> bool:
        """Stop the save; whether it had already passed its commit point."""
        with self.lock:
            self.aborted.set()
            return self.committing

    def may_commit(self) -> bool:
        with self.lock:
            if self.aborted.is_set():
                return False
            self.committing = True
            return True


def _discard(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a save nobody waits for any more."""
    if not future.cancelled():
        future.exception()


class SQLiteStateStore:
    """A ``StateStore`` in one SQLite file.

    Args:
        path: the database file (created if missing); ``":memory:"`` for a
            store that lives as long as this object.
        table: the table's name (a plain identifier).

    Use ``async with SQLiteStateStore(...) as store`` or call ``aclose()``:
    the store holds a worker thread.

    Raises:
        ValueError: a bad ``table``.
    """

    def __init__(self, path: str | os.PathLike[str] = "agentflow-states.sqlite3", *,
                 table: str = "agentflow_states") -> None:
        self.path = os.fspath(path)
        self.table = check_table(table)
        self._executor: ThreadPoolExecutor | None = None
        self._sqlite: sqlite3.Connection | None = None  # touched on the worker thread only
        self._current: _Save | None = None                # the save the worker runs now

    def __repr__(self) -> str:
        return f"SQLiteStateStore(path={self.path!r}, table={self.table!r})"

    # ------------------------------------------------------------ worker thread

    def _open(self) -> sqlite3.Connection:
        """The connection (worker thread), in autocommit mode: transactions are
        explicit."""
        return sqlite3.connect(self.path, timeout=5.0, isolation_level=None,
                               check_same_thread=False)

    def _db(self) -> sqlite3.Connection:
        if self._sqlite is None:
            db = self._open()
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, "
                    "version INTEGER NOT NULL, state BLOB NOT NULL, updated_at REAL NOT NULL)")
            except BaseException:
                db.close()
                raise
            self._sqlite = db
        return self._sqlite

    def _version_sync(self, db: sqlite3.Connection, key: str) -> int:
        row = db.execute(f"SELECT version FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return 0 if row is None else int(row[0])

    def _save_sync(self, txn: _Save, key: str, blob: bytes, version: int) -> int | None:
        """Run one save (worker thread): the new version, ``None`` when aborted
        before the commit point; raises ``StateConflictError``."""
        if txn.aborted.is_set():
            return None
        self._current = txn
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                if version == 0:
                    cursor = db.execute(
                        f"INSERT INTO {self.table} (key, version, state, updated_at) "
                        "VALUES (?, 1, ?, ?) ON CONFLICT(key) DO NOTHING",
                        (key, blob, time.time()))
                else:
                    cursor = db.execute(
                        f"UPDATE {self.table} SET version = version + 1, state = ?, "
                        "updated_at = ? WHERE key = ? AND version = ?",
                        (blob, time.time(), key, version))
                if cursor.rowcount != 1:
                    actual = self._version_sync(db, key)
                    db.rollback()
                    raise StateConflictError(key, version, actual)
                if not txn.may_commit():
                    db.rollback()
                    return None
                db.commit()
            except BaseException:
                if db.in_transaction:
                    db.rollback()
                raise
            return version + 1
        finally:
            self._current = None

    def _load_sync(self, key: str) -> tuple[int, bytes] | None:
        row = self._db().execute(f"SELECT version, state FROM {self.table} WHERE key = ?",
                                 (key,)).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    def _delete_sync(self, key: str) -> None:
        self._db().execute(f"DELETE FROM {self.table} WHERE key = ?", (key,))

    def _close_sync(self) -> None:
        db, self._sqlite = self._sqlite, None
        if db is not None:
            db.close()

    # ------------------------------------------------------------ event loop

    def _submit(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="agentflow-sqlite")
        return asyncio.wrap_future(self._executor.submit(fn, *args))

    async def load(self, key: str) -> StoredState:
        """The conversation ``key`` (empty, version 0, if never saved).

        Raises:
            InvalidInputError: a bad key. InvalidStateError: a malformed document.
        """
        check_key(key)
        row = await self._submit(self._load_sync, key)
        if row is None:
            return StoredState(AgentState(), 0)
        return StoredState(AgentState.from_json(row[1]), row[0])

    async def save(self, key: str, state: AgentState, *, version: int) -> int:
        """Write ``state`` if ``key`` is still at ``version``; the new version.

        All or nothing: it returns once the write is committed, or raises
        with nothing written — a cancellation before the commit point rolls
        the transaction back; one during the commit waits for it, returns,
        and is delivered at the caller's next ``await``.

        Raises:
            StateConflictError: the stored version is not ``version`` (nothing written).
            InvalidInputError: a bad key or version.
        """
        check_key(key, version)
        blob = state.to_json()
        txn = _Save()
        future = self._submit(self._save_sync, txn, key, blob, version)
        try:
            new = await asyncio.shield(future)
        except asyncio.CancelledError:
            if not txn.abort():  # the worker rolls back (or never begins): nothing written
                future.add_done_callback(_discard)
                raise
            try:  # the commit is under way: wait for it, then deliver the cancellation
                new, _ = await finish(future)
            except Exception:
                new = None  # the commit failed: nothing written
            if new is None:
                raise
            rearm_cancel()
        assert new is not None  # only an aborted save returns None
        return new

    async def delete(self, key: str) -> None:
        """Forget the conversation ``key`` (no error if it does not exist)."""
        check_key(key)
        await self._submit(self._delete_sync, key)

    async def aclose(self) -> None:
        """Close the connection and its thread (the store reopens them if used again)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            try:
                await asyncio.wrap_future(executor.submit(self._close_sync))
            finally:
                executor.shutdown(wait=False)

    async def __aenter__(self) -> SQLiteStateStore:
        await self._submit(self._db)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
