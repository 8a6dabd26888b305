"""Conversation state between requests: the ``StateStore`` protocol and the
load -> stream -> save helpers.

A store keeps one ``AgentState`` per conversation key, with a version
(optimistic concurrency)::

    loaded = await store.load("conv-42")           # StoredState(state, version)
    reply = await agent.call("next question", state=loaded.state)
    await store.save("conv-42", loaded.state, version=loaded.version)

``save`` writes only if the stored version is still ``version`` (0: the key
does not exist yet) and returns the new version (``version + 1``); when
another request saved first, it raises ``StateConflictError`` and writes
nothing, so two requests on one conversation never silently overwrite each
other. ``stream_with_store`` / ``call_with_store`` do the three steps for
you, and save only a call that completed: a call that fails or is cancelled
(a client that went away) saves nothing.

Stores: ``SQLiteStateStore`` (embedded default, one file, stdlib sqlite3) and
``PostgresStateStore`` (asyncpg). Both keep the ``AgentState.to_json()``
document, so any store is a few lines over another database.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentflow.approvals import Decision as ApprovalDecision
from agentflow.approvals import check_decisions, pending_calls, resolve_approvals
from agentflow.client_tools import pending_client_calls, resolve_client_tools
from agentflow.errors import AlreadyDecidedError, InvalidInputError, StateConflictError
from agentflow.events import CallStarted, Complete, Event, ToolProgress, ToolResult
from agentflow.messages import Msg, ToolResultBlock, clean_text
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.state import AgentState

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent

__all__ = ["StateStore", "StoredState", "call_with_store", "check_key", "stream_with_store"]

MAX_KEY_LENGTH = 512


@dataclass(frozen=True, slots=True)
class StoredState:
    """A loaded conversation: its state and the version it was stored at
    (0 when the key has never been saved; ``state`` is then empty)."""

    state: AgentState
    version: int


@runtime_checkable
class StateStore(Protocol):
    """Where conversations live between requests.

    ``load(key)`` returns the stored state and its version (an empty state at
    version 0 for an unknown key). ``save(key, state, version=v)`` writes
    ``state`` only if the stored version is ``v`` and returns ``v + 1``.

    Raises (both methods): ``InvalidInputError`` for a key that is not a
    non-empty string of at most 512 characters (``check_key``); ``InvalidStateError`` from
    ``load`` when the stored document is malformed; ``save`` raises
    ``StateConflictError`` when the stored version is not ``version``.
    """

    async def load(self, key: str) -> StoredState: ...

    async def save(self, key: str, state: AgentState, *, version: int) -> int: ...

    async def delete(self, key: str) -> None: ...

    async def aclose(self) -> None: ...


def check_key(key: object, version: object = 0) -> str:
    """``key`` when it is a valid conversation key (and ``version`` an int >= 0):
    a non-empty ``str`` of at most ``MAX_KEY_LENGTH`` characters that every store
    can hold (no NUL, no lone surrogate).

    Raises:
        InvalidInputError: naming what is wrong.
    """
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidInputError(
            f"a conversation key must be a non-empty string of at most {MAX_KEY_LENGTH} "
            f"characters, got {type(key).__name__}"
            + (f" of length {len(key)}" if isinstance(key, str) else "")
        )
    if "\x00" in key or clean_text(key) != key:  # PostgreSQL text refuses NUL; no store
        raise InvalidInputError(                   # encodes a lone surrogate
            "a conversation key must not hold a NUL character or a lone UTF-16 surrogate")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidInputError(f"a state version must be an int >= 0, got {version!r}")
    return key


async def stream_with_store(
    agent: ReActAgent,
    store: StateStore,
    key: str,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any = None,
    *,
    strategy: OutputStrategy | StrategyName | None = None,
    decisions: Mapping[str, ApprovalDecision] | None = None,
    client_results: Mapping[str, ToolResultBlock] | None = None,
) -> AsyncGenerator[Event, None]:
    """Load the conversation ``key``, run ``agent.stream`` on it, save it.

    Yields the call's events; the final ``Complete`` is yielded only once the
    state is saved. A call that raises or is cancelled (the consumer stops
    iterating) saves nothing (but the approval decisions it applied, below),
    and the stored conversation stays as it was;
    so does a call whose output could not be had (``agent.stream`` raises its
    ``StructuredOutputError``).

    With ``decisions`` (tool call id -> ``Approve``/``Refuse``) the call
    resumes a conversation suspended for approval (``agentflow.approvals``):
    the decisions are applied (approved calls run; the ``ToolProgress`` their
    tools reported, then their ``ToolResult``s, follow ``CallStarted``: the
    call opens on their outcomes), then the model continues (``msg`` may be
    ``None``).
    An approved call runs at most once: the decisions are saved (claimed)
    before any tool runs, so of two requests with the same decisions (a
    double click, a retried POST) only the one whose save wins runs the
    tool, the other raises ``AlreadyDecidedError``; the tools' outcomes are
    saved before the model is called, so a model call that then fails (a
    provider error, a client that went away) leaves them recorded, and the
    conversation continues from them (``msg`` ``None``, no ``decisions``).
    A resume with approved calls saves three times (claim, outcomes, the
    call's end); one with refusals only, twice.

    With ``client_results`` (tool call id -> result: the request's tool
    results, ``RunInput.tool_results()``) a conversation that waits for the
    client's tool results (stop reason ``client_tool_calls``,
    ``agentflow.client_tools``) gets them in place of its placeholders, and
    the model continues (``msg`` ``None``; with a new ``msg``, only when every
    pending call has its result, else the model reads them as unanswered).
    A new ``msg`` moves the conversation on: calls still held then (for
    approval, or for the client) wait no more; a later decision for one is
    refused (``InvalidInputError``) and a later client result ignored.

    A step that left both kinds waiting (a call for approval and a client
    tool's call; stop reason ``approval_required``) is resumed with both
    ``decisions`` and ``client_results`` in one request.

    Raises:
        StateConflictError: another request saved ``key`` while this call
            ran (instead of ``Complete``; nothing more was written).
        AlreadyDecidedError: ``decisions`` names a call an earlier (or a
            concurrent) request decided; nothing ran.
        InvalidInputError: ``msg`` is ``None`` and a pending client tool call
            has no result in ``client_results``, or calls wait for approval
            and ``decisions`` is ``None`` (checked before any call runs).
        as ``agent.stream`` and the store.
    """
    loaded = await store.load(key)
    if client_results is not None:
        waiting = pending_client_calls(loaded.state)
        if waiting and (msg is None or all(c.id in client_results for c in waiting)):
            resolve_client_tools(loaded.state, client_results)
    if msg is None:  # the model continues: nothing may still wait (checked before any tool runs)
        _check_nothing_waits(loaded.state, decisions)
    version = loaded.version
    claimed = False

    async def checkpoint(state: AgentState) -> None:
        nonlocal version, claimed
        try:
            version = await store.save(key, state, version=version)
        except StateConflictError as conflict:
            if not claimed and decisions is not None:  # did another request decide first?
                _check_decided_first(conflict, (await store.load(key)).state, decisions)
            raise
        claimed = True

    reported: list[ToolProgress] = []  # (the tools run before the call, which opens on them)
    resolved = ([] if decisions is None else
                await resolve_approvals(agent, loaded.state, decisions, checkpoint=checkpoint,
                                        progress=reported.append))
    async with aclosing(agent.stream(msg, output, state=loaded.state,
                                     strategy=strategy)) as events:
        async for event in events:
            if isinstance(event, Complete):
                await store.save(key, loaded.state, version=version)
            yield event
            if resolved and isinstance(event, CallStarted):  # the approved calls' outcomes
                for reports in reported:
                    yield reports
                for block in resolved:
                    yield ToolResult(block.tool_use_id, block.name, block.output,
                                     block.is_error, is_json=block.is_json)


def _check_decided_first(conflict: StateConflictError, now: AgentState,
                         decisions: Mapping[str, ApprovalDecision]) -> None:
    """Raise ``AlreadyDecidedError`` (from ``conflict``) when the stored
    conversation ``now`` has the outcome of a call ``decisions`` names: the
    request whose save won decided it (a double click, a retried request)."""
    try:
        check_decisions(now, decisions)
    except AlreadyDecidedError as decided:
        raise decided from conflict
    except InvalidInputError:
        pass


def _check_nothing_waits(state: AgentState,
                         decisions: Mapping[str, ApprovalDecision] | None) -> None:
    """Refuse to continue ``state`` while a call still waits: a client tool's
    call without its result, or calls for approval without ``decisions``
    (``resolve_approvals`` checks the decisions themselves)."""
    if left := pending_client_calls(state):
        raise InvalidInputError("no result for the client tool call(s) "
                                f"{', '.join(c.id for c in left)}: send the client's results "
                                "with the run that continues the conversation")
    if decisions is None and (asked := pending_calls(state)):
        raise InvalidInputError(f"the call(s) {', '.join(c.id for c in asked)} wait for "
                                "approval: resume the conversation with a decision for each")


async def call_with_store(
    agent: ReActAgent,
    store: StateStore,
    key: str,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any = None,
    *,
    strategy: OutputStrategy | StrategyName | None = None,
) -> Msg:
    """``stream_with_store`` drained: the reply, with the conversation saved.

    Raises: as ``stream_with_store``.
    """
    reply: Msg | None = None
    async with aclosing(stream_with_store(agent, store, key, msg, output,
                                          strategy=strategy)) as events:
        async for event in events:
            if isinstance(event, Complete):
                reply = event.message
    assert reply is not None  # the stream ends with Complete or raises
    return reply
