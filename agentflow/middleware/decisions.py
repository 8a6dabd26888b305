"""The step's one decision from the ``post_reasoning`` decisions of every
middleware (``merge_decisions``).

Every middleware sees every reply: a decision is about the reply's tool
calls, and each middleware may hold some of them back (an approval, a client
tool) or answer some itself (the output tool, a cache). Taking the first
decision would let one middleware's answer hide the reply from a later one,
so a call that needs a person's approval could run unapproved beside a
valid output. Merging keeps one rule: a call runs only when no middleware
answered it, and ``Finish`` / ``ReasonAgain`` run none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentflow.events import StopReason
from agentflow.messages import Msg, ToolResultBlock
from agentflow.middleware.base import Act, Decision, Finish, ReasonAgain

__all__ = ["merge_decisions", "waiting_reasons"]


def merge_decisions(decisions: Iterable[Decision | None]) -> Decision | None:
    """The step's decision from the middleware's (in list order; ``None``: no
    opinion).

    ====================================  =======================================
    decisions given                       the step's decision
    ====================================  =======================================
    none                                  ``None``: every call runs
    a ``Finish``                          the first ``Finish``: no call runs
    a ``ReasonAgain``, no ``Finish``      one ``ReasonAgain`` with every one's
                                          messages, in order: no call runs
    only ``Act``\\ s                       one ``Act``: a call's answer is the
                                          first given, but a waiting answer
                                          (``Act.waiting``) wins over a plain
                                          one; ``waiting``: the calls whose
                                          answer is a waiting one; ``pause``:
                                          the first pause among those answers;
                                          ``failed``: the calls whose kept answer
                                          is a failure (``Act.failed``);
                                          ``inputs``: a call's first given
    ====================================  =======================================

    A single decision is returned as it is.
    """
    given = [d for d in decisions if d is not None]
    if len(given) <= 1:
        return given[0] if given else None
    for d in given:
        if isinstance(d, Finish):
            return d
    again = [d for d in given if isinstance(d, ReasonAgain)]
    if again:
        messages: list[Msg] = [m for d in again for m in d.messages]
        return ReasonAgain(tuple(messages))
    results: dict[str, ToolResultBlock] = {}
    owner: dict[str, Act] = {}  # the Act whose answer a call keeps
    for act in given:
        assert isinstance(act, Act)
        for call_id, block in act.results.items():
            held = owner.get(call_id)
            if held is None or (call_id in act.waiting and call_id not in held.waiting):
                results[call_id], owner[call_id] = block, act
    waiting = tuple(i for i in results if i in owner[i].waiting)
    pause: StopReason | None = None
    for act in given:  # list order: the first middleware that pauses names the stop
        assert isinstance(act, Act)
        if act.pause is not None and any(owner[i] is act for i in waiting):
            pause = act.pause
            break
    failed = tuple(i for i in results if i in owner[i].failed)
    inputs = {i: a for act in reversed(given) if isinstance(act, Act)
              for i, a in act.inputs.items()}  # the first given wins
    return Act(results, waiting, pause, failed, inputs)


def waiting_reasons(decisions: Sequence[Decision | None],
                    step: Decision | None) -> dict[str, StopReason]:
    """What each call the step holds waits for: tool call id -> the stop
    reason (``events.SUSPENDED``) of the middleware whose waiting answer the
    merge kept (``merge_decisions``: the first that held the call), else the
    step's ``pause``. ``step`` is the merged decision of ``decisions``; ``{}``
    when it holds no call or does not pause (the calls' answers are then
    results the model reads, nothing waits)."""
    if not isinstance(step, Act) or not step.waiting or step.pause is None:
        return {}
    reasons: dict[str, StopReason] = {}
    for call_id in step.waiting:
        owner = next((d for d in decisions if isinstance(d, Act) and call_id in d.waiting), None)
        reasons[call_id] = owner.pause if owner is not None and owner.pause else step.pause
    return reasons
