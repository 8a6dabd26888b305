"""A call's input: what ``ReActAgent.call`` / ``stream`` accept as the message,
the working copy of a state's memory a call starts from, and the call's
``CallExecution`` over it."""

from __future__ import annotations

from collections.abc import Sequence
from logging import DEBUG, getLogger
from typing import TYPE_CHECKING, Any

from agentflow._logging import get_logger
from agentflow.acting import not_executed
from agentflow.errors import InvalidInputError
from agentflow.execution import CallExecution
from agentflow.messages import STRUCTURED_OUTPUT_REMINDER, Msg
from agentflow.model import ChatModel, GenerateOptions
from agentflow.output.strategies import OutputStrategy, StrategyName

if TYPE_CHECKING:
    from agentflow.state import AgentState

__all__ = ["answer_open_calls", "coerce_input", "continued_inputs", "start_execution"]

_log = get_logger()
_ROOT_LOGGER = getLogger("agentflow")  # debug_enabled's (call_outcome), read inline


def coerce_input(msg: str | Msg | Sequence[str | Msg] | None) -> list[Msg]:
    """The call's input as user messages.

    Raises:
        InvalidInputError: not a str, a Msg, or a non-empty sequence of them.
    """
    if msg is None:
        return []
    if isinstance(msg, str):
        return [Msg("user", msg)]
    if isinstance(msg, Msg):
        return [msg]
    if isinstance(msg, Sequence) and not isinstance(msg, bytes | bytearray):
        if not msg:
            raise InvalidInputError("the message list is empty: pass at least one message")
        out: list[Msg] = []
        for i, item in enumerate(msg):
            if isinstance(item, str):
                out.append(Msg("user", item))
            elif isinstance(item, Msg):
                out.append(item)
            else:
                raise InvalidInputError(
                    f"message {i} is a {type(item).__name__}; expected str or Msg"
                )
        return out
    raise InvalidInputError(
        f"the message must be a str, a Msg or a list of them, got {type(msg).__name__}"
    )


def answer_open_calls(memory: Sequence[Msg]) -> list[Msg]:
    """A working copy of ``memory`` in which every tool call has a result.

    Memory the agent wrote always does; memory built or edited by hand (or
    restored from tampered JSON) may not, and vendors refuse a conversation
    with an unanswered tool call. Missing results are added as errors.
    """
    out: list[Msg] = []
    for i, msg in enumerate(memory):
        out.append(msg)
        if msg.role != "assistant" or not msg.tool_uses:
            continue
        answered = {r.tool_use_id for m in memory[i + 1 : i + 2] for r in m.tool_results}
        missing = [c for c in msg.tool_uses if c.id not in answered]
        if missing:
            out.append(not_executed(missing))
    return out


def continued_inputs(state: AgentState) -> tuple[Msg, ...]:
    """The caller's input messages a call without a new message continues
    from: the messages of ``state.memory`` whose ids ``state.input_ids``
    recorded (the latest call that had input), in memory order; for a state
    that recorded none (saved before ids were kept, or built by hand) or whose
    recorded messages are gone, the latest run of user messages of memory the
    framework did not add (no ``STRUCTURED_OUTPUT_REMINDER`` tag: reminders,
    nudges, re-asks), read back from the end. Empty when memory holds none."""
    if state.input_ids:
        wanted = set(state.input_ids)
        found = tuple(m for m in state.memory if m.id in wanted)
        if found:
            return found
    run: list[Msg] = []
    for m in reversed(state.memory):
        if m.metadata.get(STRUCTURED_OUTPUT_REMINDER):
            continue  # the framework's own
        if m.role == "user":
            run.append(m)
        elif run:
            break
    return tuple(reversed(run))


def start_execution(
    model: ChatModel,
    state: AgentState,
    agent: tuple[str, str],
    options: GenerateOptions,
    output: Any,
    *,
    strategy: OutputStrategy | StrategyName | None,
    deltas: bool,
    has_tools: bool,
    inputs: Sequence[Msg] = (),
) -> CallExecution:
    """A fresh per-call execution over a working copy of ``state``
    (``answer_open_calls``) for the agent ``(name, id)``: ``options`` are the
    call's base request options, ``deltas`` whether anyone reads the deltas
    (``stream()``), ``has_tools`` whether the model is offered tools (the agent's own, or
    those its middleware declare: ``Middleware.declared_tools``), ``inputs``
    the caller's input messages of the call (``CallExecution.inputs``; none:
    the call continues the conversation, ``continued_inputs``)."""
    ex = CallExecution(
        model=model,
        state=state,
        agent_name=agent[0],
        agent_id=agent[1],
        base_log=_log,
        options=options,
        output_type=output,
        memory=answer_open_calls(state.memory),
        inputs=tuple(inputs) or continued_inputs(state),
        so_tool_active=state.so_tool_active,
        deltas_read=deltas,
    )
    ex.extra["has_tools"] = has_tools
    if strategy is not None:
        ex.extra["strategy"] = strategy
    if _ROOT_LOGGER.isEnabledFor(DEBUG):  # debug_enabled, inline
        ex.log.debug("call.start", output=getattr(output, "__name__", output))
    return ex
