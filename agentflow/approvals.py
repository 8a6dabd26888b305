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

What waits is known by the call: the loop records the held calls' ids in
their tool message (``WAITING_CALLS``), and only those wait; a result that
merely reads like ``PENDING_OUTPUT`` (a server tool's error text) never does.
An approved call runs at most once: ``resolve_approvals`` claims the decided
calls (``STARTED_OUTPUT`` in place of the placeholders) and saves the claim
through its ``checkpoint`` (a store's conditional save) before any tool runs,
then saves the outcomes before the model reads them; a decision for a call
already decided raises ``AlreadyDecidedError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentflow._arguments import check_function, check_list, wrong_type
from agentflow._commit import finish, rearm_cancel
from agentflow.acting import progress_of
from agentflow.errors import (
    AlreadyDecidedError,
    ArgumentValueError,
    InvalidInputError,
    ToolNameError,
)
from agentflow.events import ApprovalRequested, ToolProgress, ToolResult, ToolUse
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.base import Act, Middleware, ModelRequest
from agentflow.tools import TOOL_NAME_PATTERN
from agentflow.tools.names import renamings
from agentflow.waiting_calls import abandoned_ids, settle_calls, waiting_step

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.execution import CallExecution
    from agentflow.state import AgentState

__all__ = ["PENDING_OUTPUT", "STARTED_OUTPUT", "Approve", "Checkpoint", "Refuse",
           "RequireApproval", "check_decisions", "is_approval_pending", "pending_calls",
           "resolve_approvals"]

PENDING_OUTPUT = "Awaiting approval: this call has not run yet."
"""The placeholder result of a call that waits for approval (an error
result, so that no vendor mistakes it for the tool's output)."""

STARTED_OUTPUT = ("Approved and started, but its outcome was not recorded (the run stopped "
                  "while the tool ran): it may or may not have taken effect.")
"""The result of an approved call from its claim until its outcome is
recorded; what the model reads if the outcome never was (the process died
while the tool ran): the call never runs again."""


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call; with ``input``, on that input instead of the model's
    (an edited call)."""

    input: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
    """Do not run the call; the model reads ``reason`` as its error result."""

    reason: str = "the user refused this call"

    @property
    def result_text(self) -> str:
        """The error result the model reads for the refused call."""
        return f"Refused: {self.reason}"


Decision = Approve | Refuse


class RequireApproval(Middleware):
    """Suspend the call when the model calls one of ``tools`` (names, as the
    model sees them: an MCP server's ``prefix`` included), or a call for
    which ``needs(call)`` is true.

    A name matched by name only would let a tool run unasked under the name
    the agent gives it: ``"write_file"`` for an MCP server's tool the model
    calls ``fs_write_file`` (``prefix="fs"``), ``"files.read"`` for one it
    calls ``files_read_1a2b3c4d`` (made valid). So before each model request
    a name the request does not offer is checked against the offered tools a
    source gave (``Toolkit.from_sources``, ``tools.names.renamings``): one the
    agent offers renamed so, or a name no tool can have, fails the call before
    the model is asked (``ToolNameError``). A name no tool answers to yet is
    kept (the agent's own ``bulk_delete`` is no renaming of ``delete``).

    Raises:
        ArgumentValueError: neither or both of ``tools`` and ``needs`` (a ``ValueError``).
        ArgumentTypeError: ``tools`` is one str (a single name: wrap it in a
            list) or holds a name that is no str; ``needs`` is no function (a
            ``TypeError``).
        ToolNameError (from the call): as above; nothing ran.
    """

    def __init__(self, tools: Collection[str] | None = None, *,
                 needs: Callable[[ToolUseBlock], bool] | None = None) -> None:
        if (tools is None) == (needs is None):
            raise ArgumentValueError("pass tools (names) or needs (a predicate)")
        if tools is not None:
            check_list("tools", tools, "tool names", kind=Collection)
            if not all(isinstance(name, str) for name in tools):
                raise wrong_type("tools", "a list of tool names (str)", tools)
        check_function("needs", needs, "a function (ToolUseBlock -> bool)", optional=True)
        names = frozenset(tools or ())
        self._names = names
        self._needs = needs if needs is not None else (lambda call: call.name in names)

    async def pre_reasoning(self, ex: CallExecution, request: ModelRequest) -> None:
        """Refuse a name the agent offers under another name (class docstring).

        Raises:
            ToolNameError: naming the tool's name to use.
        """
        if not self._names:
            return
        offered = {t.name for t in request.tools}
        sourced = offered & ex.toolkit.from_sources() if ex.toolkit is not None else set()
        for name in sorted(self._names - offered):
            renamed = renamings(name, sourced)
            if renamed or not TOOL_NAME_PATTERN.fullmatch(name):
                use = (f"this agent calls it {' or '.join(map(repr, renamed))} (the name the model "
                       "sees: an MCP server's prefix, or its name made valid, included); name "
                       "that" if renamed else "no tool can be called so (names match "
                       "^[A-Za-z_][A-Za-z0-9_-]{0,63}$): name the tool as the model sees it")
                raise ToolNameError(f"RequireApproval names the tool {name!r}, but {use}: calls "
                                    "to it would run without approval")

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
        ids = {r.tool_use_id for r in results.tool_results  # held, with this placeholder
               if r.tool_use_id in ex.waiting and r.is_error and r.output == PENDING_OUTPUT}
        if not ids:
            return False
        asked = next((m for m in reversed(ex.memory) if m.role == "assistant"), None)
        calls = [c for c in asked.tool_uses if c.id in ids] if asked is not None else []
        if calls:
            ex.emit(ApprovalRequested(tuple(ToolUse(c.id, c.name, dict(c.input))
                                            for c in calls)))
        return False


def is_approval_pending(result: ToolResult) -> bool:
    """Whether the ``ToolResult`` event is the placeholder of a call that
    waits for approval (not a result to show): its ``waiting`` is
    ``"approval_required"``, set by the loop from the held calls' ids. Never
    decided by the result's text (a server tool's error may read like
    ``PENDING_OUTPUT``); for a stored conversation, ``pending_calls(state)``."""
    return result.waiting == "approval_required"


def pending_calls(state: AgentState) -> list[ToolUseBlock]:
    """The calls of ``state`` that wait for a decision (``[]``: none): those
    of the step that ends it; a new message moves the conversation on, and
    the calls held before it wait no more."""
    return waiting_step(state, PENDING_OUTPUT)[1]


def check_decisions(state: AgentState, decisions: Mapping[str, Decision]) -> list[ToolUseBlock]:
    """The calls of ``state`` that wait for approval (``pending_calls``), in
    call order, when ``decisions`` (tool call id -> ``Approve``/``Refuse``)
    decides each of them and nothing else; what ``resolve_approvals`` checks
    before anything runs, without running or changing anything. A web app
    can call it to refuse a bad resume (a 4xx) before starting a stream.

    Raises:
        AlreadyDecidedError: a decision names a call that already has its
            outcome (an earlier request decided it; ``.call_ids`` names them).
        InvalidInputError: no call of ``state`` waits for approval, a waiting
            call has no decision, or a decision names a call that does not
            wait (naming the ids), also one the conversation went on without
            (a new message came while it waited: it is not run later).
    """
    return _check_decisions(state, decisions)[1]


def _check_decisions(state: AgentState, decisions: Mapping[str, Decision]
                     ) -> tuple[int, list[ToolUseBlock]]:
    """``check_decisions``, with the index of the tool message that holds the
    pending calls (as ``waiting_step``)."""
    index, calls = waiting_step(state, PENDING_OUTPUT)
    ids = {c.id for c in calls}
    if gone := sorted(set(decisions) & abandoned_ids(state, index, PENDING_OUTPUT)):
        raise InvalidInputError(
            f"the call(s) {', '.join(gone)} no longer wait for approval: the conversation went "
            "on without them (a new message came first, and the model read them as not run); "
            "nothing ran")
    answered = {r.tool_use_id for m in state.memory if m.role == "tool"
                for r in m.tool_results}
    if again := sorted(i for i in set(decisions) - ids if i in answered):
        raise AlreadyDecidedError(again)
    if not calls:
        raise InvalidInputError("this conversation has no tool call waiting for approval")
    if missing := sorted(ids - set(decisions)):
        raise InvalidInputError(f"no decision for the pending call(s) {', '.join(missing)}")
    if unknown := sorted(set(decisions) - ids):
        raise InvalidInputError(f"no pending call {', '.join(unknown)}")
    return index, calls


Checkpoint = Callable[["AgentState"], Awaitable[None]]
"""Saves the state where the caller keeps it (a store's conditional save),
raising when another request saved first."""


async def resolve_approvals(agent: ReActAgent, state: AgentState,
                            decisions: Mapping[str, Decision], *,
                            checkpoint: Checkpoint | None = None,
                            progress: Callable[[ToolProgress], None] | None = None,
                            ) -> list[ToolResultBlock]:
    """Apply a decision to every pending call of ``state`` (keyed by tool call
    id): an approved call runs (on its edited input if given), a refused one
    gets an error result with the reason. The state's placeholders are
    replaced, so the next ``agent.call(None, state=state)`` continues with
    the model reading the outcomes. Returns the new results, in call order.

    At most once: the decided calls are claimed before any tool runs (their
    placeholders give way to ``STARTED_OUTPUT``, so a second resolve of the
    same state finds them decided), and ``checkpoint(state)`` (a store's
    conditional save: ``stream_with_store`` passes one) makes the claim
    durable first: of two requests that resume one stored conversation, only
    the one whose save wins runs anything. Once a tool started, the run and
    the outcome's ``checkpoint`` finish even if the caller is cancelled (a
    client that went away): a side effect under way cannot be called back,
    so its outcome is recorded. A call whose outcome could not be recorded
    (the process died) keeps ``STARTED_OUTPUT``: the model reads that it may
    or may not have taken effect, and it never runs again. ``progress``
    takes each ``ToolProgress`` an approved call's tool reports while it
    runs, as in an agent's step (``agentflow.acting.progress_of``).

    Raises:
        AlreadyDecidedError: a decision names a call an earlier request
            decided (nothing runs).
        InvalidInputError: no call is pending, a pending call has no
            decision, a decision names a call that is not pending, or an
            edited input does not fit its tool (``Tool.check_arguments``,
            naming the fields): nothing is decided, the person may edit again.
        MCPNotRunningError (a ``UsageError``): a tool source of the agent
            cannot give its tools (an MCP server outside its ``async
            with``); nothing is decided.
        as ``checkpoint`` (e.g. ``StateConflictError``: nothing ran).
    """
    index, calls = _check_decisions(state, decisions)
    _check_runnable(agent, calls, decisions)
    outcomes: dict[str, ToolResultBlock] = {}
    runs: list[ToolUseBlock] = []
    edited: dict[str, ToolUseBlock] = {}
    for call in calls:
        decision = decisions[call.id]
        if isinstance(decision, Refuse):
            outcomes[call.id] = ToolResultBlock(call.id, decision.result_text, True, call.name)
        elif decision.input is None:
            runs.append(call)
        else:
            edited[call.id] = ToolUseBlock(call.id, call.name, dict(decision.input))
            runs.append(edited[call.id])
    if edited:  # the model sees the call that ran
        asked = state.memory[index - 1]
        state.memory[index - 1] = asked.replace(content=[
            edited.get(b.id, b) if isinstance(b, ToolUseBlock) else b for b in asked.content])
    settle_calls(state, index, {**outcomes, **{
        r.id: ToolResultBlock(r.id, STARTED_OUTPUT, True, r.name) for r in runs}})
    if checkpoint is not None:  # the claim, durable before anything runs
        await checkpoint(state)
    if runs:  # begun, it runs to its end (a cancellation comes after it)
        ran, cancelled = await finish(asyncio.ensure_future(
            _run_and_record(agent, state, index, runs, checkpoint, progress)))
        outcomes.update(ran)
        if cancelled:
            rearm_cancel()
    return [outcomes[c.id] for c in calls]


def _check_runnable(agent: ReActAgent, calls: list[ToolUseBlock],
                    decisions: Mapping[str, Decision]) -> None:
    """Refuse decisions whose calls could not run as decided, before any is
    decided: a claimed call never runs again, so an edit that does not fit
    its tool, or a tool source that is not running, used up the person's
    approval on an error result the model read.

    Raises:
        InvalidInputError / MCPNotRunningError: see ``resolve_approvals``.
    """
    for source in agent.toolkit.sources:
        if not source.tools_ready:
            source.current_tools()  # raises, naming the source (MCPNotRunningError)
    for call in calls:
        decision = decisions[call.id]
        if not isinstance(decision, Approve) or decision.input is None:
            continue
        tool = agent.toolkit.get(call.name)
        if tool is not None and (problem := tool.check_arguments(decision.input)):
            raise InvalidInputError(f"the edited input of call {call.id} does not fit: "
                                    f"{problem}\nNothing was decided: edit the call again")


async def _run_and_record(agent: ReActAgent, state: AgentState, index: int,
                          runs: list[ToolUseBlock], checkpoint: Checkpoint | None,
                          progress: Callable[[ToolProgress], None] | None,
                          ) -> dict[str, ToolResultBlock]:
    """Run the approved calls (in order; each one's progress to ``progress``)
    and put their outcomes in ``state`` (saved with ``checkpoint``, before the
    model reads them)."""
    ran: dict[str, ToolResultBlock] = {}
    for run in runs:
        tool = agent.toolkit.get(run.name)
        if tool is None:
            ran[run.id] = ToolResultBlock(run.id, f"Tool {run.name!r} not found.", True, run.name)
            continue
        with progress_of(run, progress):
            ran[run.id] = await tool.run(run)
    settle_calls(state, index, ran)
    if checkpoint is not None:
        await checkpoint(state)
    return ran
