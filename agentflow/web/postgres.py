"""``PostgresStateStore``: a ``StateStore`` on PostgreSQL through asyncpg
(extra ``postgres``).

Table (created on first use)::

    CREATE TABLE agentflow_states (
        key TEXT PRIMARY KEY, version BIGINT NOT NULL,
        state JSON NOT NULL,                 -- AgentState.to_json(), kept verbatim
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now())

``json`` rather than ``jsonb``: it keeps the document byte for byte and
accepts every string the conversation may hold (``jsonb`` refuses
``\\u0000``). The version check is one conditional statement (``INSERT ... ON
CONFLICT DO NOTHING`` for a new key, ``UPDATE ... WHERE version = $n``
otherwise), atomic under concurrent requests from any number of servers.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import anyio

from agentflow._arguments import check_int, check_optional
from agentflow._commit import finish, rearm_cancel
from agentflow.errors import ArgumentValueError, StateConflictError
from agentflow.state import AgentState
from agentflow.web.sqlite import check_table
from agentflow.web.store import StoredState, check_key

__all__ = ["PostgresStateStore"]


class PostgresStateStore:
    """A ``StateStore`` in a PostgreSQL table.

    Args:
        dsn: a libpq connection string/URI (``postgresql://user@host:5432/db``);
            never shown in a repr or an error of this class.
        pool: an existing ``asyncpg`` pool instead (the store does not close it).
        table: the table's name (a plain identifier).
        min_size / max_size: the pool's size when the store makes it.

    Use ``async with`` or ``aclose()`` to close a pool the store made.

    Raises:
        ArgumentValueError: neither or both of ``dsn`` and ``pool``; a bad
            ``table``; a pool size below 0 (``min_size``) or 1 and ``min_size``
            (``max_size``). A ``ValueError``.
        ArgumentTypeError: a ``dsn`` that is no str (its value never shown),
            a ``table`` or pool size of the wrong type. A ``TypeError``.
        ImportError: asyncpg is not installed (``pip install 'agentflow[postgres]'``).
    """

    def __init__(self, dsn: str | None = None, *, pool: Any = None,
                 table: str = "agentflow_states", min_size: int = 1, max_size: int = 10) -> None:
        if (dsn is None) == (pool is None):
            raise ArgumentValueError("pass exactly one of dsn and pool")
        check_optional("dsn", dsn, str, "a libpq connection string (a str)", secret=True)
        check_table(table)
        check_int("min_size", min_size, 0)
        check_int("max_size", max_size, max(1, min_size))
        try:
            import asyncpg  # type: ignore[import-untyped]
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("PostgresStateStore needs asyncpg: "
                              "pip install 'agentflow[postgres]'") from exc
        self._asyncpg = asyncpg
        self._dsn = dsn
        self._pool: Any = pool
        self._owns_pool = pool is None
        self._ready = False
        self._opening = anyio.Lock()
        self.table = check_table(table)
        self.min_size, self.max_size = min_size, max_size

    def __repr__(self) -> str:
        return f"PostgresStateStore(table={self.table!r})"

    async def _conn_pool(self) -> Any:
        if self._ready:
            return self._pool
        async with self._opening:
            if self._pool is None:
                self._pool = await self._asyncpg.create_pool(
                    self._dsn, min_size=self.min_size, max_size=self.max_size)
            if not self._ready:
                await self._pool.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, "
                    "version BIGINT NOT NULL, state JSON NOT NULL, "
                    "updated_at TIMESTAMPTZ NOT NULL DEFAULT now())")
                self._ready = True
        return self._pool

    async def load(self, key: str) -> StoredState:
        """The conversation ``key`` (empty, version 0, if never saved).

        Raises:
            InvalidInputError: a bad key. InvalidStateError: a malformed document.
        """
        check_key(key)
        pool = await self._conn_pool()
        row = await pool.fetchrow(f"SELECT version, state FROM {self.table} WHERE key = $1", key)
        if row is None:
            return StoredState(AgentState(), 0)
        return StoredState(AgentState.from_json(row["state"]), int(row["version"]))

    async def save(self, key: str, state: AgentState, *, version: int) -> int:
        """Write ``state`` if ``key`` is still at ``version``; the new version.

        One transaction (``BEGIN``, the conditional write, ``COMMIT``) on a
        pooled connection. All or nothing: it returns once the write is
        committed, or raises with nothing written. A cancellation before
        ``COMMIT`` is sent closes the connection (the server rolls the
        transaction back); one while ``COMMIT`` runs waits for its answer,
        returns, and is delivered at the caller's next ``await``. A killed
        client process leaves an open transaction that the server rolls back.

        Raises:
            StateConflictError: the stored version is not ``version`` (nothing written).
            InvalidInputError: a bad key or version.
        """
        check_key(key, version)
        document = state.to_json().decode()
        pool = await self._conn_pool()
        con = await pool.acquire()
        clean = cancelled = False
        try:
            await con.execute("BEGIN")
            if version == 0:
                new = await con.fetchval(
                    f"INSERT INTO {self.table} (key, version, state) VALUES ($1, 1, $2::json) "
                    "ON CONFLICT (key) DO NOTHING RETURNING version", key, document)
            else:
                new = await con.fetchval(
                    f"UPDATE {self.table} SET version = version + 1, state = $2::json, "
                    "updated_at = now() WHERE key = $1 AND version = $3 RETURNING version",
                    key, document, version)
            if new is None:
                actual = await con.fetchval(
                    f"SELECT version FROM {self.table} WHERE key = $1", key)
                await con.execute("ROLLBACK")
                clean = True
                raise StateConflictError(key, version, int(actual or 0))
            # the commit point: from here the save completes, cancelled or not
            _, cancelled = await finish(asyncio.ensure_future(con.execute("COMMIT")))
            clean = True
            return int(new)
        finally:
            if not clean:
                # cancelled or failed mid-transaction: drop the connection, and
                # with it the transaction (never handed to another save open)
                con.terminate()
            held = await _release(pool, con) or cancelled
            if held and not isinstance(sys.exc_info()[1], asyncio.CancelledError):
                rearm_cancel()  # a cancellation held back by the commit or the release

    async def delete(self, key: str) -> None:
        """Forget the conversation ``key`` (no error if it does not exist)."""
        check_key(key)
        pool = await self._conn_pool()
        await pool.execute(f"DELETE FROM {self.table} WHERE key = $1", key)

    async def aclose(self) -> None:
        """Close the pool if the store made it."""
        pool = self._pool
        if pool is not None and self._owns_pool:
            self._pool, self._ready = None, False
            await pool.close()

    async def __aenter__(self) -> PostgresStateStore:
        await self._conn_pool()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _release(pool: Any, con: Any) -> bool:
    """Give ``con`` back to ``pool``, even when the current task is cancelled
    meanwhile (a connection never leaks out of the pool); whether it was."""
    _, cancelled = await finish(asyncio.ensure_future(pool.release(con)))
    return cancelled
