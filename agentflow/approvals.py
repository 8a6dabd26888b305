"""Approvals: a tool call that waits for a person, and the call resumed later.

    agent = ReActAgent("ops", model, tools=[send_email, lookup],
                       middleware=[RequireApproval({"send_email"})])
    state = AgentState()
    reply = await agent.call("Mail Ada the report", state=state)
    pending_calls(state)                    # [ToolUseBlock(id, "send_email", {...})]
    # the call ended with stop reason "approval_required"; later, maybe in
    # another request, with the state from a store (Approve(input=...) edits,
    # Refuse("why") refuses):
    await resolve_approvals(agent, state, {call_id: Approve()})
    reply = await agent.call(None, state=state)   # the model sees the outcome

How it works, through the loop's seams (no branch for approvals in the loop):
``RequireApproval.post_reasoning`` answers each call that needs approval
with a placeholder result (``PENDING_OUTPUT``; the other calls of the step
run as usual), marked waiting (``Act.waiting``); after acting, its
``post_acting`` announces the calls that really wait with an
``ApprovalRequested`` event and the loop ends the call with stop reason
``approval_required``. The loop asks every middleware about every reply and
merges their decisions, so no other middleware's answer (the output tool's,
beside which the output is held) lets such a call run; and a middleware that
ends the step (``Finish``, ``ReasonAgain``: no call runs) leaves no
announcement behind, so every ``ApprovalRequested`` is followed by a pause. The
state then holds the calls with their placeholders, so it can be saved
(``StateStore``, with its version) and resumed by anyone who loads it.
``resolve_approvals`` replaces each placeholder with the outcome: the tool
run on the approved (or edited) input, or a refusal the model reads as an
error result.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentflow.errors import InvalidInputError
from agentflow.events import ApprovalRequested, ToolResult, ToolUse
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.base import Act, Middleware

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.execution import CallExecution
    from agentflow.state import AgentState

__all__ = ["PENDING_OUTPUT", "Approve", "Refuse", "RequireApproval", "is_approval_pending",
           "pending_calls", "resolve_approvals"]

PENDING_OUTPUT = "Awaiting approval: this call has not run yet."
"""The placeholder result of a call that waits for approval (an error
result, so that no vendor mistakes it for the tool's output)."""


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call; with ``input``, on that input instead of the model's
    (an edited call)."""

    input: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
    """Do not run the call; the model reads ``reason`` as its error result."""

    reason: str = "the user refused this call"


Decision = Approve | Refuse


class RequireApproval(Middleware):
    """Suspend the call when the model calls one of ``tools`` (names), or a
    call for which ``needs(call)`` is true.

    Raises:
        ValueError: neither or both of ``tools`` and ``needs``.
    """

    def __init__(self, tools: Collection[str] | None = None, *,
                 needs: Callable[[ToolUseBlock], bool] | None = None) -> None:
        if (tools is None) == (needs is None):
            raise ValueError("pass tools (names) or needs (a predicate)")
        names = frozenset(tools or ())
        self._needs = needs if needs is not None else (lambda call: call.name in names)

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Act | None:
        waiting = [c for c in reply.tool_uses if self._needs(c)]
        if not waiting:
            return None
        return Act({c.id: ToolResultBlock(c.id, PENDING_OUTPUT, True, c.name) for c in waiting},
                   tuple(c.id for c in waiting), "approval_required")

    async def post_acting(self, ex: CallExecution, results: Msg) -> bool:
        """Announce the calls that wait for approval (``ApprovalRequested``)
        once the step's decisions merged and the placeholders are in memory:
        only the calls that really wait (``ex.waiting``) with this
        middleware's placeholder, never a call that a ``Finish`` or a
        ``ReasonAgain`` of another middleware left unrun (no acting then) or
        that another waiting answer took; the loop pauses right after."""
        if not ex.waiting:
            return False
        ids = {r.tool_use_id for r in results.tool_results
               if r.tool_use_id in ex.waiting and is_approval_pending(r)}
        if not ids:
            return False
        asked = next((m for m in reversed(ex.memory) if m.role == "assistant"), None)
        calls = [c for c in asked.tool_uses if c.id in ids] if asked is not None else []
        if calls:
            ex.emit(ApprovalRequested(tuple(ToolUse(c.id, c.name, dict(c.input))
                                            for c in calls)))
        return False


def is_approval_pending(result: ToolResult | ToolResultBlock) -> bool:
    """Whether ``result`` (an event or a block) is the placeholder of a call
    that waits for approval (not a result to show)."""
    return result.is_error and result.output == PENDING_OUTPUT


def _pending(state: AgentState, placeholder: str = PENDING_OUTPUT
             ) -> tuple[int, list[ToolUseBlock]]:
    """The index of the last tool message holding ``placeholder`` results, and
    their calls (``agentflow.client_tools`` pauses with its own placeholder)."""
    for index in range(len(state.memory) - 1, -1, -1):
        msg = state.memory[index]
        if msg.role != "tool":
            continue
        waiting = {r.tool_use_id for r in msg.tool_results
                   if r.is_error and r.output == placeholder}
        if not waiting or index == 0:
            break
        calls = [c for c in state.memory[index - 1].tool_uses if c.id in waiting]
        return index, calls
    return -1, []


def pending_calls(state: AgentState) -> list[ToolUseBlock]:
    """The calls of ``state`` that wait for a decision (``[]``: none)."""
    return _pending(state)[1]


async def resolve_approvals(agent: ReActAgent, state: AgentState,
                            decisions: Mapping[str, Decision]) -> list[ToolResultBlock]:
    """Apply a decision to every pending call of ``state`` (keyed by tool call
    id): an approved call runs (on its edited input if given), a refused one
    gets an error result with the reason. The state's placeholders are
    replaced, so the next ``agent.call(None, state=state)`` continues with
    the model reading the outcomes. Returns the new results, in call order.

    Raises:
        InvalidInputError: no call is pending, a pending call has no
            decision, or a decision names a call that is not pending.
    """
    index, calls = _pending(state)
    if not calls:
        raise InvalidInputError("this conversation has no tool call waiting for approval")
    ids = {c.id for c in calls}
    if missing := sorted(ids - set(decisions)):
        raise InvalidInputError(f"no decision for the pending call(s) {', '.join(missing)}")
    if unknown := sorted(set(decisions) - ids):
        raise InvalidInputError(f"no pending call {', '.join(unknown)}")
    outcomes: dict[str, ToolResultBlock] = {}
    for call in calls:
        decision = decisions[call.id]
        if isinstance(decision, Refuse):
            outcomes[call.id] = ToolResultBlock(call.id, f"Refused: {decision.reason}", True,
                                                call.name)
            continue
        run = call if decision.input is None else ToolUseBlock(call.id, call.name,
                                                               dict(decision.input))
        tool = agent.toolkit.get(call.name)
        outcomes[call.id] = (await tool.run(run) if tool is not None else ToolResultBlock(
            call.id, f"Tool {call.name!r} not found.", True, call.name))
    edited = {c.id: ToolUseBlock(c.id, c.name, dict(d.input)) for c in calls
              if isinstance(d := decisions[c.id], Approve) and d.input is not None}
    if edited:  # the model sees the call that ran
        asked = state.memory[index - 1]
        state.memory[index - 1] = asked.replace(content=[
            edited.get(b.id, b) if isinstance(b, ToolUseBlock) else b for b in asked.content])
    old = state.memory[index]
    state.memory[index] = Msg("tool", [outcomes.get(r.tool_use_id, r) for r in old.tool_results],
                              metadata=old.metadata)
    return [outcomes[c.id] for c in calls]
