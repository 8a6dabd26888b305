"""Calls a conversation holds waiting: a step's calls answered with a
placeholder result (``agentflow.approvals``' ``PENDING_OUTPUT`` for a person's
approval, ``agentflow.client_tools``' own for a client-side tool's run) and
recorded as held (``WAITING_CALLS``); finding them in a state and putting
their outcomes in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.base import WAITING_CALLS

if TYPE_CHECKING:
    from agentflow.state import AgentState

__all__ = ["abandoned_ids", "held_ids", "settle_calls", "waiting_ids", "waiting_step"]


def held_ids(msg: Msg) -> frozenset[str]:
    """The ids of the calls that ``msg`` (a tool message) records as waiting
    (``WAITING_CALLS``, written by the loop from ``Act.waiting``)."""
    ids = msg.metadata.get(WAITING_CALLS)
    if not isinstance(ids, list | tuple):
        return frozenset()
    return frozenset(i for i in ids if isinstance(i, str))


def waiting_ids(msg: Msg, placeholder: str) -> set[str]:
    """The ids of the calls the tool message ``msg`` holds with ``placeholder``."""
    held = held_ids(msg)
    return {r.tool_use_id for r in msg.tool_results
            if r.tool_use_id in held and r.is_error and r.output == placeholder}


def waiting_step(state: AgentState, placeholder: str
                 ) -> tuple[int, list[ToolUseBlock]]:
    """The index of the tool message that ends the conversation (system
    reminders aside), and its calls that wait with ``placeholder``
    (``agentflow.client_tools`` pauses with its own): calls the message
    records as held (``WAITING_CALLS``), so a result that only reads like a
    placeholder (a server tool's error text) never waits. Calls held in an
    earlier step wait no more: the conversation went on without them (a new
    message came; the model read them as not run, ``abandoned_ids``)."""
    for index in range(len(state.memory) - 1, 0, -1):
        msg = state.memory[index]
        if msg.role == "system":
            continue
        if msg.role != "tool":
            break
        waiting = waiting_ids(msg, placeholder)
        if not waiting:
            break
        calls = [c for c in state.memory[index - 1].tool_uses if c.id in waiting]
        return index, calls
    return -1, []


def abandoned_ids(state: AgentState, index: int, placeholder: str) -> set[str]:
    """The ids of calls held with ``placeholder`` in a tool message before
    ``index`` (the one that waits now, or -1): the conversation went on
    without them."""
    return {i for m in state.memory[:index if index >= 0 else None] if m.role == "tool"
            for i in waiting_ids(m, placeholder)}


def settle_calls(state: AgentState, index: int, outcomes: Mapping[str, ToolResultBlock]) -> None:
    """Put ``outcomes`` (by tool call id) in place of the results of the tool
    message at ``index``; their calls no longer wait."""
    old = state.memory[index]
    metadata = dict(old.metadata)
    held = held_ids(old) - set(outcomes)
    if held:
        metadata[WAITING_CALLS] = [r.tool_use_id for r in old.tool_results
                                   if r.tool_use_id in held]
    else:
        metadata.pop(WAITING_CALLS, None)
    state.memory[index] = Msg("tool", [outcomes.get(r.tool_use_id, r) for r in old.tool_results],
                              metadata=metadata)
