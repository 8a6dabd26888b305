"""A ``CancelledError`` no canceller asked for, raised inside a call (by the
model client, middleware, a library's own cancel scope), ends ``stream()`` and
``call()`` with a typed ``StrayCancelError`` (the ``CancelledError`` its
cause), the state as it was. It went through as a cancellation: a route
streaming the events stopped with no error event and nothing else happened,
since the task was not being cancelled. A real cancellation still cancels."""

from __future__ import annotations

import asyncio

import anyio
import pytest
from pydantic import BaseModel

from agentflow import AgentState, Middleware, ReActAgent, StrayCancelError
from agentflow.testing import FunctionModel, RecordedRequest, Reply


class Contact(BaseModel):
    name: str


def _leaks(request: RecordedRequest) -> Reply:
    raise asyncio.CancelledError("leaked by a client library")


class LeakingMiddleware(Middleware):
    async def on_call_start(self, ex: object) -> None:
        raise asyncio.CancelledError()


@pytest.mark.parametrize("where", ["model", "middleware"])
async def test_a_stray_cancel_inside_a_call_is_a_typed_error(where: str) -> None:
    model = FunctionModel(_leaks if where == "model" else lambda request: "hi")
    agent = ReActAgent("a", model, middleware=[LeakingMiddleware()] if where != "model" else [])
    state = AgentState()
    events = []
    with pytest.raises(StrayCancelError) as info:
        async for event in agent.stream("hello", Contact, state=state):
            events.append(event)
    assert isinstance(info.value.__cause__, asyncio.CancelledError)
    assert "while it was not being cancelled" in str(info.value)
    with pytest.raises(StrayCancelError):
        await agent.call("hello", state=state)
    assert state.memory == []
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_real_cancellation_still_cancels() -> None:
    started = anyio.Event()

    async def slow(request: RecordedRequest) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    agent = ReActAgent("a", FunctionModel(slow))
    state = AgentState()
    with anyio.CancelScope() as scope:
        async def cancel_when_started() -> None:
            await started.wait()
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_started)
            async for _ in agent.stream("hello", state=state):
                pass
    assert scope.cancelled_caught and state.memory == []
