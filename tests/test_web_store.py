"""State stores: load/save with optimistic concurrency on SQLite and on a
real PostgreSQL server the tests start; load -> stream -> save helpers."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentflow import AgentState, InvalidInputError, InvalidStateError, Msg, ReActAgent
from agentflow.errors import ProviderConnectionError, StateConflictError
from agentflow.events import Complete
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from agentflow.web import (
    PostgresStateStore,
    SQLiteStateStore,
    StateStore,
    call_with_store,
    stream_with_store,
)

from .postgres_server import postgres_server

_tables = itertools.count()


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str | None]:
    try:
        with postgres_server() as dsn:
            yield dsn
    except FileNotFoundError as exc:
        print(f"\nSKIP PostgreSQL store tests: {exc}")
        yield None
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"PostgreSQL did not start: {exc.stderr}")


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateStore]:
    table = f"states_{next(_tables)}"
    made: StateStore
    if request.param == "sqlite":
        made = SQLiteStateStore(tmp_path / "states.sqlite3", table=table)
    else:
        dsn = request.getfixturevalue("pg_dsn")
        if dsn is None:
            pytest.skip("no PostgreSQL server binaries here (initdb, pg_ctl, postgres)")
        made = PostgresStateStore(dsn, table=table)
    try:
        yield made
    finally:
        await made.aclose()


def conversation(*texts: str) -> AgentState:
    return AgentState([Msg.user(t) for t in texts])


def texts(state: AgentState) -> list[str]:
    return [m.text for m in state.memory]


async def test_unknown_key_loads_empty_at_version_0(store: StateStore) -> None:
    loaded = await store.load("nobody-here")
    assert loaded.version == 0 and loaded.state == AgentState()


async def test_save_load_round_trip_exactly(store: StateStore) -> None:
    state = AgentState([Msg.user("héllo \u0000 nul and \U0001f600"), Msg.assistant("ok")],
                       so_tool_active=True)
    assert await store.save("c1", state, version=0) == 1
    loaded = await store.load("c1")
    assert loaded.version == 1
    assert loaded.state == state and loaded.state.to_json() == state.to_json()
    assert await store.save("c1", conversation("more"), version=1) == 2
    assert texts((await store.load("c1")).state) == ["more"]


async def test_stale_save_is_a_conflict_and_writes_nothing(store: StateStore) -> None:
    await store.save("c", conversation("first"), version=0)
    a, b = await store.load("c"), await store.load("c")
    await store.save("c", conversation("a wins"), version=a.version)
    with pytest.raises(StateConflictError) as info:
        await store.save("c", conversation("b loses"), version=b.version)
    assert (info.value.key, info.value.expected_version, info.value.actual_version) == ("c", 1, 2)
    assert texts((await store.load("c")).state) == ["a wins"]
    # creating a key twice is a conflict too
    with pytest.raises(StateConflictError):
        await store.save("c", conversation("new"), version=0)
    # and so is saving a version that does not exist
    with pytest.raises(StateConflictError) as info:
        await store.save("never", conversation("x"), version=3)
    assert info.value.actual_version == 0
    assert (await store.load("never")).version == 0


async def test_concurrent_saves_exactly_one_wins(store: StateStore) -> None:
    await store.save("race", conversation("start"), version=0)
    results = await asyncio.gather(
        *(store.save("race", conversation(f"writer {i}"), version=1) for i in range(8)),
        return_exceptions=True,
    )
    wins = [r for r in results if r == 2]
    assert len(wins) == 1
    assert all(isinstance(r, StateConflictError) for r in results if r != 2)
    assert (await store.load("race")).version == 2


async def test_delete(store: StateStore) -> None:
    await store.save("gone", conversation("x"), version=0)
    await store.delete("gone")
    await store.delete("gone")
    assert (await store.load("gone")).version == 0


async def test_bad_keys_and_versions_are_typed_errors(store: StateStore) -> None:
    # a NUL (PostgreSQL text refuses it) or a lone surrogate (a client's "\ud800"
    # JSON escape: no store encodes it) was a raw driver error, a 500 on the web
    for key in ("", "k" * 513, 5, "a\x00b", "a\ud800b"):
        with pytest.raises(InvalidInputError, match="conversation key"):
            await store.load(key)  # type: ignore[arg-type]
    for version in (-1, 1.0, True, None):
        with pytest.raises(InvalidInputError, match="version"):
            await store.save("k", AgentState(), version=version)  # type: ignore[arg-type]


async def test_store_repr_hides_the_dsn() -> None:
    store = PostgresStateStore("postgresql://user:s3cret@127.0.0.1:1/db")
    assert "s3cret" not in repr(store)
    with pytest.raises(ValueError, match="table"):
        SQLiteStateStore(":memory:", table="x; DROP TABLE y")


async def test_malformed_stored_document_is_invalid_state(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        await store.save("k", AgentState(), version=0)
        with sqlite3.connect(tmp_path / "s.db") as db:  # another connection, as another process
            db.execute("UPDATE agentflow_states SET state = ? WHERE key = 'k'", (b"{oops",))
        with pytest.raises(InvalidStateError):
            await store.load("k")


# ---------------------------------------------------------------- load -> stream -> save


class Note(BaseModel):
    title: str


def note_model(delay: float = 0.0) -> FunctionModel:
    async def answer(request: RecordedRequest) -> Reply:
        await asyncio.sleep(delay)
        last = [m.text for m in request.messages if m.role == "user"][-1]
        return Reply(tool_calls=[Call("generate_response", {"title": last.upper()})])

    return FunctionModel(answer)


async def test_call_with_store_continues_the_conversation(store: StateStore) -> None:
    agent = ReActAgent("t", note_model())
    first = await call_with_store(agent, store, "conv", "hello", Note)
    assert first.output == Note(title="HELLO")
    second = await call_with_store(agent, store, "conv", "again", Note)
    assert second.output == Note(title="AGAIN")
    loaded = await store.load("conv")
    assert loaded.version == 2
    assert [m.text for m in loaded.state.memory if m.role == "user"] == ["hello", "again"]


async def test_a_conversation_with_a_lone_surrogate_is_saved(store: StateStore) -> None:
    # a user's text may hold "\ud800" (valid JSON); the call succeeded, but every save
    # failed on orjson's TypeError and the conversation was lost
    agent = ReActAgent("t", ScriptedModel([Reply(tool_calls=[Call("generate_response",
                                                                  {"title": "menu"})])]))
    reply = await call_with_store(agent, store, "conv", "caf\udce9 menu", Note)
    assert reply.output == Note(title="menu")
    loaded = await store.load("conv")
    assert loaded.version == 1
    assert [m.text for m in loaded.state.memory if m.role == "user"] == ["caf\ufffd menu"]


async def test_failed_call_saves_nothing(store: StateStore) -> None:
    async def broken(request: RecordedRequest) -> Reply:
        raise ProviderConnectionError("stream cut", partial=True)

    await call_with_store(ReActAgent("t", ScriptedModel(["hi"])), store, "c", "first")
    before = await store.load("c")
    with pytest.raises(ProviderConnectionError):
        await call_with_store(ReActAgent("t", FunctionModel(broken)), store, "c", "second")
    after = await store.load("c")
    assert after.version == before.version == 1 and after.state == before.state


async def test_cancelled_call_saves_nothing(store: StateStore) -> None:
    model = note_model(delay=30)
    agent = ReActAgent("t", model)
    task = asyncio.ensure_future(call_with_store(agent, store, "c", "slow", Note))
    async with asyncio.timeout(60):  # a guard against a hang only
        while not model.requests:  # noqa: ASYNC110 - the model offers no event
            await asyncio.sleep(0.01)
    task.cancel()  # mid-call: the state was loaded and the model asked
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await store.load("c")).version == 0

    # a consumer that stops iterating cancels the call too
    agent = ReActAgent("t", ScriptedModel([Reply(text="long reply", chunk_size=2)]))
    async with aclosing(stream_with_store(agent, store, "c", "hi")) as events:
        async for event in events:
            if event.type == "reasoning_chunk":
                break
    assert (await store.load("c")).version == 0


async def test_two_requests_on_one_conversation_loser_gets_conflict(store: StateStore) -> None:
    await call_with_store(ReActAgent("t", note_model()), store, "c", "start", Note)
    fast, slow = ReActAgent("fast", note_model(0.01)), ReActAgent("slow", note_model(0.3))
    results = await asyncio.gather(
        call_with_store(slow, store, "c", "slow one", Note),
        call_with_store(fast, store, "c", "fast one", Note),
        return_exceptions=True,
    )
    assert isinstance(results[0], StateConflictError)
    assert results[1].output == Note(title="FAST ONE")  # type: ignore[union-attr]
    loaded = await store.load("c")
    assert loaded.version == 2
    assert "slow one" not in [m.text for m in loaded.state.memory]


async def test_complete_comes_only_after_the_save(store: StateStore) -> None:
    agent = ReActAgent("t", note_model())
    async for event in stream_with_store(agent, store, "c", "x", Note):
        if isinstance(event, Complete):
            assert (await store.load("c")).version == 1
