"""A store's ``save`` is all or nothing under cancellation and crashes.

* Cancellation at every step of a save, deterministically: the SQLite store's
  worker connection is wrapped so that before or after its k-th call the
  saving task is cancelled (and the wrapper waits until the save saw it); the
  PostgreSQL store gets a pool whose connections cancel the saving task at
  their k-th ``await``, before the operation or once it answered. For every
  k: a save that returned wrote its state whole; one that raised
  ``CancelledError`` wrote nothing, and left no open transaction (the next
  save on the connection does not carry it along; another writer is not
  locked out).
* ``kill -9`` of a process in a loop of saves, against a SQLite file and a
  real PostgreSQL server: the stored document always matches its version.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentflow import AgentState, Msg
from agentflow.errors import StateConflictError
from agentflow.web import PostgresStateStore, SQLiteStateStore, StateStore

from .postgres_server import postgres_server

T = TypeVar("T")
_tables = itertools.count()
ROOT = Path(__file__).resolve().parents[1]


def conversation(text: str) -> AgentState:
    return AgentState([Msg.user(text)])


def texts(state: AgentState) -> list[str]:
    return [m.text for m in state.memory]


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str]:
    try:
        with postgres_server() as dsn:
            yield dsn
    except FileNotFoundError as exc:
        print(f"\nSKIP PostgreSQL atomicity tests: {exc}")
        pytest.skip(str(exc))


async def run_save(store: StateStore, key: str, state: AgentState, version: int,
                   ) -> tuple[int | None, bool]:
    """Save in its own task: (the version ``save`` returned or None, whether
    the task ended cancelled). The result is recorded before the task's next
    await, where a cancellation held back by the commit arrives."""
    returned: list[int] = []

    async def saving() -> None:
        returned.append(await store.save(key, state, version=version))
        await asyncio.sleep(0)

    task = asyncio.ensure_future(saving())
    await asyncio.wait([task])
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
    return (returned[0] if returned else None), task.cancelled()


async def check_outcome(store: StateStore, key: str, before: str, after: str,
                        returned: int | None, cancelled: bool) -> None:
    loaded = await store.load(key)
    if returned is not None:  # the save completed: all of it is there
        assert (loaded.version, texts(loaded.state)) == (2, [after])
    else:  # it raised CancelledError: nothing of it is there
        assert cancelled
        assert (loaded.version, texts(loaded.state)) == (1, [before])
    # the connection carries no open transaction: a later save on another key
    # commits only itself, and the conversation stays as it is
    await asyncio.wait_for(store.save(f"{key}-other", conversation("other"), version=0), 10)
    again = await store.load(key)
    assert (again.version, texts(again.state)) == (loaded.version, texts(loaded.state))
    # and the conversation can be saved on at the version found
    await asyncio.wait_for(store.save(key, conversation("next"), version=loaded.version), 10)


# ------------------------------------------------------------------ SQLite


class StepConnection:
    """A ``sqlite3`` connection whose k-th call during a save (``execute``,
    ``commit``, ``rollback``; before or after the call) cancels the saving
    task from the worker thread, then waits until the save saw the
    cancellation."""

    def __init__(self, real: sqlite3.Connection, store: SteppedSQLiteStore) -> None:
        self.real, self.store = real, store

    def _step(self) -> None:
        store = self.store
        if store._current is None or store.task is None:
            return  # opening the store, or a load: not counted
        step, store.steps = store.steps, store.steps + 1
        if step == store.cancel_at:
            store.hit = True
            store.loop.call_soon_threadsafe(store.task.cancel)
            assert store._current.aborted.wait(10), "the save did not see its cancellation"

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self._step()
        cursor = self.real.execute(sql, params)
        self._step()
        return cursor

    def commit(self) -> None:
        self._step()
        self.real.commit()
        self._step()

    def rollback(self) -> None:
        self._step()
        self.real.rollback()
        self._step()

    @property
    def in_transaction(self) -> bool:
        return self.real.in_transaction

    def close(self) -> None:
        self.real.close()


class SteppedSQLiteStore(SQLiteStateStore):
    """The real store, its worker connection wrapped in ``StepConnection``."""

    task: asyncio.Task[Any] | None = None
    loop: asyncio.AbstractEventLoop
    cancel_at = -1
    steps = 0
    hit = False

    def _open(self) -> Any:
        return StepConnection(super()._open(), self)

    def arm(self, at: int) -> None:
        self.cancel_at, self.steps, self.hit = at, 0, False


async def sqlite_cancel_everywhere(store: SteppedSQLiteStore, conflict: bool) -> int:
    """Cancel one save at each of its steps in turn; the number of steps."""
    store.loop = asyncio.get_running_loop()
    for at in itertools.count():
        key = f"k{at}-{conflict}"
        await store.save(key, conversation("before"), version=0)
        version = 2 if conflict else 1  # a stale version: the save meets a conflict
        store.arm(at)
        returned: list[int] = []
        error: list[BaseException] = []

        async def saving(key: str = key, version: int = version, returned: list[int] = returned,
                         error: list[BaseException] = error) -> None:
            try:
                returned.append(await store.save(key, conversation("after"), version=version))
            except StateConflictError as exc:
                error.append(exc)
            await asyncio.sleep(0)

        store.task = task = asyncio.ensure_future(saving())
        await asyncio.wait([task])
        store.task = None
        if not store.hit:
            return at  # past the last step: the save ran uncancelled
        if conflict:
            assert not returned
            assert error or task.cancelled()
            loaded = await store.load(key)
            assert (loaded.version, texts(loaded.state)) == (1, ["before"])
            continue
        await check_outcome(store, key, "before", "after", returned[0] if returned else None,
                            task.cancelled())
        # no write lock is left behind for other processes
        with sqlite3.connect(store.path, timeout=0) as other:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
    raise AssertionError("unreachable")


async def test_sqlite_save_cancelled_at_every_step(tmp_path: Path) -> None:
    async with SteppedSQLiteStore(tmp_path / "s.db") as store:
        steps = await sqlite_cancel_everywhere(store, conflict=False)
        assert steps == 6  # BEGIN, the write, COMMIT: before and after each
        steps = await sqlite_cancel_everywhere(store, conflict=True)
        assert steps == 8  # BEGIN, the write, the version read, ROLLBACK


async def test_sqlite_cancelled_save_is_never_committed_by_the_next_one(tmp_path: Path) -> None:
    # the case: cancelled between the write and its commit, then an
    # unrelated save on the same connection
    async with SteppedSQLiteStore(tmp_path / "s.db") as store:
        store.loop = asyncio.get_running_loop()
        await store.save("c", conversation("kept"), version=0)
        store.arm(3)  # right after the UPDATE ran
        store.task = task = asyncio.ensure_future(store.save("c", conversation("void"),
                                                             version=1))
        await asyncio.wait([task])
        store.task = None
        assert store.hit and task.cancelled()
        await store.save("unrelated", conversation("x"), version=0)
        loaded = await store.load("c")
        assert (loaded.version, texts(loaded.state)) == (1, ["kept"])


async def test_sqlite_save_cancelled_before_it_starts(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        await store.save("c", conversation("before"), version=0)
        for _ in range(3):
            task = asyncio.ensure_future(store.save("c", conversation("after"), version=1))
            task.cancel()
            await asyncio.wait([task])
            assert task.cancelled()
        loaded = await store.load("c")
        assert (loaded.version, texts(loaded.state)) == (1, ["before"])


# ------------------------------------------------------------------ PostgreSQL


class CancellingPool:
    """An asyncpg pool whose connections cancel the saving task at their k-th
    ``await`` (acquire, each statement, release), before sending it or once
    it answered. Everything else goes to the real pool."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.task: asyncio.Task[Any] | None = None
        self.at, self.after, self.count, self.hit = -1, False, 0, False

    def arm(self, task: asyncio.Task[Any] | None, at: int, after: bool) -> None:
        self.task, self.at, self.after, self.count, self.hit = task, at, after, 0, False

    async def step(self, operation: Awaitable[T]) -> T:
        counted = self.task is not None
        step = self.count
        self.count += counted
        trigger = counted and step == self.at
        if trigger and not self.after:
            self.hit = True
            self.task.cancel()  # type: ignore[union-attr]
        result = await operation
        if trigger and self.after:
            self.hit = True
            self.task.cancel()  # type: ignore[union-attr]
            await asyncio.sleep(0)
        return result

    async def acquire(self) -> CancellingConnection:
        # like asyncpg's own acquire, a cancelled one hands its connection back
        got: list[Any] = []

        async def acquiring() -> Any:
            got.append(await self.real.acquire())
            return got[0]

        try:
            return CancellingConnection(await self.step(acquiring()), self)
        except asyncio.CancelledError:
            if got:
                await self.real.release(got[0])
            raise

    async def release(self, con: CancellingConnection) -> None:
        await self.step(self.real.release(con.real))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class CancellingConnection:
    def __init__(self, real: Any, pool: CancellingPool) -> None:
        self.real, self.pool = real, pool

    async def execute(self, *args: Any) -> Any:
        return await self.pool.step(self.real.execute(*args))

    async def fetchval(self, *args: Any) -> Any:
        return await self.pool.step(self.real.fetchval(*args))

    def terminate(self) -> None:
        self.real.terminate()


async def test_postgres_save_cancelled_at_every_await(pg_dsn: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    real = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=4)
    pool = CancellingPool(real)
    store = PostgresStateStore(pool=pool, table=f"atomic_{next(_tables)}")
    try:
        await store.load("warm-up")  # creates the table, uncounted
        for conflict, after in itertools.product((False, True), (False, True)):
            for at in itertools.count():
                key = f"k{at}-{conflict}-{after}"
                await store.save(key, conversation("before"), version=0)
                version = 2 if conflict else 1
                returned: list[int] = []

                async def saving(key: str = key, version: int = version,
                                 returned: list[int] = returned) -> None:
                    with contextlib.suppress(StateConflictError):
                        returned.append(await store.save(key, conversation("after"),
                                                         version=version))
                    await asyncio.sleep(0)

                task = asyncio.ensure_future(saving())
                pool.arm(task, at, after)
                await asyncio.wait([task])
                hit = pool.hit
                pool.arm(None, -1, False)
                if not hit:
                    assert at >= (6 if conflict else 5)  # acquire, BEGIN, write, ..., release
                    break
                if conflict:
                    assert not returned
                    loaded = await store.load(key)
                    assert (loaded.version, texts(loaded.state)) == (1, ["before"])
                else:
                    await check_outcome(store, key, "before", "after",
                                        returned[0] if returned else None, task.cancelled())
        # no connection leaked or was left mid-transaction
        assert real.get_size() - real.get_idle_size() == 0
    finally:
        await store.aclose()
        await real.close()


# ------------------------------------------------------------------ kill -9

CHILD = textwrap.dedent("""
    import asyncio, sys
    from agentflow import AgentState, Msg
    from agentflow.web import PostgresStateStore, SQLiteStateStore

    async def main() -> None:
        kind, where = sys.argv[1], sys.argv[2]
        store = SQLiteStateStore(where) if kind == "sqlite" else PostgresStateStore(where)
        async with store:
            while True:
                loaded = await store.load("k")
                new = loaded.version + 1
                # a big document: the kill lands inside a write more often
                state = AgentState([Msg.user(f"v{new}:" + "x" * 200_000)])
                print(f"saving {new}", flush=True)
                await store.save("k", state, version=loaded.version)

    asyncio.run(main())
""")


async def _client_backends(dsn: str) -> set[int]:
    """PostgreSQL's client backends other than the asking one (their pids)."""
    import asyncpg

    con = await asyncpg.connect(dsn)
    try:
        rows = await con.fetch("SELECT pid FROM pg_stat_activity WHERE backend_type = "
                               "'client backend' AND pid <> pg_backend_pid()")
        return {row["pid"] for row in rows}
    finally:
        await con.close()


async def _until_gone(dsn: str, known: set[int]) -> None:
    """Wait until every backend not in ``known`` (the killed child's) has ended:
    a COMMIT the child sent before it died may still be running in its
    backend, and would change the version after the test has read it."""
    async with asyncio.timeout(60):
        while await _client_backends(dsn) - known:  # noqa: ASYNC110 - the server has no event
            await asyncio.sleep(0.05)


async def kill_during_saves(store: StateStore, kind: str, where: str, kills: int) -> None:
    rng = random.Random(34)
    for _ in range(kills):
        known = await _client_backends(where) if kind == "postgres" else set()
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, kind, where, stdout=subprocess.PIPE, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.stdout is not None
        for _ in range(rng.randint(2, 6)):  # some saves, then die inside one
            line = await child.stdout.readline()
            assert line.startswith(b"saving"), line
        await asyncio.sleep(rng.uniform(0, 0.02))
        child.send_signal(signal.SIGKILL)
        await child.wait()
        if kind == "postgres":
            await _until_gone(where, known)
        loaded = await store.load("k")
        assert loaded.version >= 1
        [text] = texts(loaded.state)
        assert text == f"v{loaded.version}:" + "x" * 200_000  # whole, and the version's own
    # and the store takes writes afterwards (no lock or transaction left)
    loaded = await store.load("k")
    await asyncio.wait_for(store.save("k", conversation("after"), version=loaded.version), 10)


async def test_sqlite_kill_9_during_saves(tmp_path: Path) -> None:
    path = str(tmp_path / "killed.db")
    async with SQLiteStateStore(path) as store:
        await kill_during_saves(store, "sqlite", path, kills=3)


async def test_postgres_kill_9_during_saves(pg_dsn: str) -> None:
    async with PostgresStateStore(pg_dsn) as store:
        await store.delete("k")
        await kill_during_saves(store, "postgres", pg_dsn, kills=3)
