"""``AgentState``: what persists between calls.

The conversation memory, the persisted structured-output flag
(``so_tool_active``) and the ids of the latest call's input messages
(``input_ids``: what a call without a new message grounds on). It
round-trips exactly through JSON (orjson, snake_case keys), so a web backend
can store it between requests::

    blob = state.to_json()
    state = AgentState.from_json(blob)

Calls that share one state are serialized (each holds the state's lock for
its whole run); calls with separate states run fully in parallel.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from agentflow._clean_text import json_bytes
from agentflow.errors import InvalidStateError, UsageError
from agentflow.messages import Msg, msg_from_dict, msg_to_dict

if TYPE_CHECKING:
    from agentflow.input_checks import CheckedPrefix

__all__ = ["AgentState"]


_FORMAT_VERSION = 1

# Makes taking and giving back a state one step across threads: two threads'
# event loops taking a free state at once both got it before. One lock for
# every state (held for a few attribute reads and writes, never across an await).
_HOLDING = threading.Lock()


class AgentState:
    """Conversation memory plus persisted flags.

    Attributes:
        memory: the messages, oldest first.
        so_tool_active: the last call that asked for structured output ran in
            tool mode (an enter reminder is in memory, no exit reminder yet).
        input_ids: the ids (``Msg.id``) of the caller's input messages of the
            latest call that had any (``CallExecution.inputs``): a call that
            continues the conversation without a new message grounds its
            output on them (``agentflow.call_input.continued_inputs``).
            Persisted as ``input_ids`` when not empty.
        inputs_checked: how much of ``memory`` the input check has passed
            (``agentflow.input_checks``; not persisted).
    """

    __slots__ = ("_busy", "_holder_loop", "_lock", "input_ids", "inputs_checked", "memory",
                 "so_tool_active")

    def __init__(self, memory: Iterable[Msg] = (), *, so_tool_active: bool = False,
                 input_ids: Iterable[str] = ()) -> None:
        self.memory: list[Msg] = list(memory)
        self.so_tool_active = so_tool_active
        self.input_ids: tuple[str, ...] = tuple(input_ids)
        self._lock: anyio.Semaphore | None = None
        self._busy = False
        self._holder_loop: asyncio.AbstractEventLoop | None = None
        self.inputs_checked: CheckedPrefix | None = None

    @property
    def lock(self) -> anyio.Semaphore:
        """The lock a call holds while it runs on this state (created on first use,
        already taken when a call holds the state).

        A one-slot semaphore rather than a task-owned lock: a stream abandoned
        without ``aclose`` is finalized in another task, which must be able to
        release it.
        """
        with _HOLDING:
            if self._lock is None:
                self._lock = anyio.Semaphore(0 if self._busy else 1)
            return self._lock

    async def acquire(self) -> None:
        """Take the state for one call, waiting while another call holds it.

        Uncontended (the common case: a fresh state per call), it neither
        creates the lock nor waits a loop iteration; only a second call on a
        held state creates ``lock`` and waits on it.

        Raises:
            UsageError: a call on another event loop (another thread's
                ``asyncio.run``, ``call_sync``'s worker loop) holds the state;
                the lock cannot wake a waiter on a second loop, so the call
                waited forever before.
        """
        loop = asyncio.get_running_loop()
        with _HOLDING:  # the check and the take, one step for every thread
            if self._take(loop):
                return
            if self._lock is None:
                self._lock = anyio.Semaphore(0)
            holder, lock = self._holder_loop, self._lock
        if holder is not None and holder is not loop:
            raise UsageError(
                "this AgentState is held by a call running on another event loop (another "
                "thread's asyncio.run, or call_sync's worker loop), which cannot hand it to "
                "this one: make every call of a conversation from one loop (call_sync from "
                "each thread does), or give each thread its own state (a store's, "
                "agentflow.web.store)")
        await lock.acquire()
        self._holder_loop = loop

    def acquire_nowait(self) -> bool:
        """Take the state for one call when nobody holds it (``acquire`` with
        no coroutine); ``False``: held, then ``await acquire()``. Must be called
        on the running event loop, which it records as the holder's (as
        ``acquire`` does)."""
        loop = asyncio.get_running_loop()
        with _HOLDING:  # the check and the take, one step for every thread
            return self._take(loop)

    def _take(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Take the state for a call on ``loop`` when nobody holds it (only
        under ``_HOLDING``)."""
        if self._lock is None:
            if not self._busy:
                self._busy, self._holder_loop = True, loop
                return True
            return False
        try:
            self._lock.acquire_nowait()
        except anyio.WouldBlock:
            return False
        self._holder_loop = loop
        return True

    def release(self) -> None:
        """Give the state back (``acquire``'s pair; wakes a waiting call)."""
        with _HOLDING:
            self._busy = False
            if self._lock is not None:
                self._lock.release()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data: dict[str, Any] = {
            "version": _FORMAT_VERSION,
            "memory": [msg_to_dict(m) for m in self.memory],
            "so_tool_active": self.so_tool_active,
        }
        if self.input_ids:
            data["input_ids"] = list(self.input_ids)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> AgentState:
        """Rebuild from ``to_dict`` output.

        Raises:
            InvalidStateError: a malformed shape, an unknown role or block, a
                non-boolean flag, ``input_ids`` that is not a list of strings,
                or an unknown format version (names the message).
        """
        if not isinstance(data, dict):
            raise InvalidStateError(f"AgentState JSON must be an object, got {type(data).__name__}")
        version = data.get("version", _FORMAT_VERSION)
        if version != _FORMAT_VERSION:
            raise InvalidStateError(f"unsupported AgentState format version {version!r}")
        raw_memory = data.get("memory", [])
        flag = data.get("so_tool_active", False)
        if not isinstance(raw_memory, list) or not isinstance(flag, bool):
            raise InvalidStateError("AgentState JSON needs a 'memory' list and a boolean "
                                    "'so_tool_active'")
        input_ids = data.get("input_ids", [])
        if not isinstance(input_ids, list) or not all(isinstance(i, str) for i in input_ids):
            raise InvalidStateError("AgentState JSON's 'input_ids' must be a list of strings")
        memory = []
        for i, item in enumerate(raw_memory):
            try:
                if not isinstance(item, dict) or not isinstance(item.get("metadata", {}), dict):
                    raise TypeError("a message must be an object with an object 'metadata'")
                memory.append(msg_from_dict(item))
            except (KeyError, TypeError, ValueError) as exc:  # incl. pydantic, InvalidInputError
                raise InvalidStateError(f"AgentState message {i} is malformed: {exc}") from exc
        return cls(memory, so_tool_active=flag, input_ids=input_ids)

    def to_json(self) -> bytes:
        """The state as JSON bytes. A string holding a lone UTF-16 surrogate (a
        user's ``"\\ud800"`` JSON escape, ``os.fsdecode`` of a non-UTF-8 name),
        which JSON cannot carry, is stored with U+FFFD in its place, as it was
        sent to the model; every other string round-trips exactly."""
        return json_bytes(self.to_dict())  # (a lone surrogate repaired, a big int's digits)

    @classmethod
    def from_json(cls, data: bytes | str) -> AgentState:
        """Rebuild from ``to_json`` output (raises like ``from_dict``, also for
        text that is not JSON)."""
        try:
            decoded = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InvalidStateError(f"AgentState JSON does not parse: {exc}") from exc
        return cls.from_dict(decoded)

    def copy(self) -> AgentState:
        """A new state with the same memory and flags (no lock shared)."""
        return AgentState(self.memory, so_tool_active=self.so_tool_active,
                          input_ids=self.input_ids)

    def __copy__(self) -> AgentState:
        """``copy.copy``: as ``copy()`` (a new memory list, never the running call's hold)."""
        return self.copy()

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``copy.deepcopy`` keep: the conversation only. The
        hold of a call running on this state (``lock``) is that call's, not the
        conversation's: a copy taken while a call runs (a tool's snapshot, a
        store's) is free for the next call instead of held forever."""
        return {"memory": self.memory, "so_tool_active": self.so_tool_active,
                "input_ids": self.input_ids}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.memory = list(data["memory"])
        self.so_tool_active = bool(data["so_tool_active"])
        self.input_ids = tuple(data["input_ids"])
        self._lock = None
        self._busy = False
        self._holder_loop = None
        self.inputs_checked = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentState):
            return NotImplemented
        return (self.memory == other.memory and self.so_tool_active == other.so_tool_active
                and self.input_ids == other.input_ids)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"AgentState(memory=<{len(self.memory)} messages>, "
            f"so_tool_active={self.so_tool_active})"
        )
