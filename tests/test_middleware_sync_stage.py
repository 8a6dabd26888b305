"""``sync_stage``: an ``on_call_start`` / ``on_call_end`` with no await in it is
called by the loop itself (no coroutine), in list order among the async ones,
and stays an awaitable coroutine method to its callers and subclasses."""

from __future__ import annotations

import sys

from agentflow.agent import ReActAgent
from agentflow.execution import CallExecution
from agentflow.middleware.base import Middleware, hooks_for, sync_stage
from agentflow.testing import ScriptedModel


class Now(Middleware):
    def __init__(self, tag: str, log: list) -> None:
        self.tag = tag
        self.log = log

    @sync_stage
    def on_call_start(self, ex: CallExecution) -> None:
        # the caller's frame: the loop's own (no wrapper coroutine between)
        self.log.append((self.tag, "start", sys._getframe(1).f_code.co_name))

    @sync_stage
    def on_call_end(self, ex: CallExecution) -> None:
        self.log.append((self.tag, "end", sys._getframe(1).f_code.co_name))


class Later(Middleware):
    def __init__(self, tag: str, log: list) -> None:
        self.tag = tag
        self.log = log

    async def on_call_start(self, ex: CallExecution) -> None:
        self.log.append((self.tag, "start", "awaited"))

    async def on_call_end(self, ex: CallExecution) -> None:
        self.log.append((self.tag, "end", "awaited"))


class Overridden(Now):  # an async override of a sync stage: awaited, super() too
    async def on_call_start(self, ex: CallExecution) -> None:
        self.log.append((self.tag, "start", "override"))
        await super().on_call_start(ex)


def _loop_names(log: list) -> set[str]:
    return {where for _, _, where in log} - {"awaited", "override"}


async def test_sync_stages_run_in_order_without_a_coroutine() -> None:
    for streamed in (False, True):
        log: list = []
        agent = ReActAgent("a", ScriptedModel(["ok"]),
                           middleware=[Later("A", log), Now("B", log), Later("C", log)])
        if streamed:
            [_ async for _ in agent.stream("go")]
        else:
            await agent.call("go")
        assert [(tag, stage) for tag, stage, _ in log] == [
            ("A", "start"), ("B", "start"), ("C", "start"),
            ("A", "end"), ("B", "end"), ("C", "end")]
        assert "stage" not in _loop_names(log)  # called by the loop, not sync_stage's wrapper


async def test_a_sync_stage_is_still_awaitable_and_overridable() -> None:
    log: list = []
    now = Now("B", log)
    await now.on_call_start(None)  # type: ignore[arg-type]  # callers may await it
    assert log == [("B", "start", "stage")]
    log.clear()
    agent = ReActAgent("a", ScriptedModel(["ok"]), middleware=[Overridden("O", log)])
    await agent.call("go")
    assert [(tag, stage, where) for tag, stage, where in log][:2] == [
        ("O", "start", "override"), ("O", "start", "stage")]
    steps = hooks_for([Overridden("O", log)]).start_steps
    assert steps[0][1] is None  # the override is a coroutine method: awaited
    assert hooks_for([Now("B", log)]).start_steps[0][1] is not None
