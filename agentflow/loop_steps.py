"""The steps of one call's ReAct loop that carry its rules, shared by the
loop's two drivers (``agentflow.loop``): ``call_events``, which yields the
call's events (``stream``), and ``call_complete``, which returns its
``Complete`` and makes no event (``call``). Opening the call (checks, the
held state, the execution), folding a reply nobody reads the chunks of,
acting on a decision and what ends the loop after acting are here (with
``reasoning``, ``acting`` and ``call_outcome``, which they call); a driver
runs the middleware stages between them and, when someone reads them,
yields the events. (The stages stay inline in each driver: an ``await``
of a step of their own would cost a coroutine per stage per call.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agentflow._arguments import check_instance, check_optional
from agentflow._commit import stray_cancel
from agentflow.acting import count_failures
from agentflow.call_input import coerce_input, start_execution
from agentflow.errors import (
    InvalidInputError,
    ProviderError,
    StrayCancelError,
    StructuredOutputError,
)
from agentflow.events import StopReason
from agentflow.grounding.marker import Grounded
from agentflow.input_checks import check_call_inputs
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.base import WAITING_CALLS, Act, Decision, hooks_for
from agentflow.output.examples import check_example_list
from agentflow.output.strategies import as_strategy
from agentflow.state import AgentState

if TYPE_CHECKING:
    from agentflow.execution import CallExecution
    from agentflow.middleware.base import Hooks, Middleware, ModelRequest
    from agentflow.middleware.structured_output import StructuredOutputMiddleware
    from agentflow.model import ChatModel, GenerateOptions, ToolSpec
    from agentflow.output.examples import Example
    from agentflow.output.strategies import OutputStrategy, StrategyName
    from agentflow.reply import ReplyBuilder
    from agentflow.telemetry import Telemetry
    from agentflow.tools import Toolkit

__all__ = ["LoopAgent", "after_acting", "call_failure", "close_chunks", "fold_chunks", "open_call",
           "out_of_steps", "stray_call_error", "supplied_results", "tool_message"]


class LoopAgent(Protocol):
    """What the loop reads of the agent whose call it runs (``ReActAgent``:
    its settings, its stock output middleware and its per-agent caches)."""

    name: str
    id: str
    model: ChatModel
    toolkit: Toolkit
    sys_prompt: str | None
    max_iters: int
    tool_retries: int
    stream_retries: int
    options: GenerateOptions
    telemetry: Telemetry
    middleware: list[Middleware]
    structured_output: StructuredOutputMiddleware
    _hooks: Hooks
    _specs: dict[tuple[str, int], list[ToolSpec]]

    def _whole_options(self) -> GenerateOptions: ...


async def open_call(
    agent: LoopAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any,
    state: AgentState | None,
    strategy: OutputStrategy | StrategyName | None,
    ground: bool | Grounded | None,
    examples: Sequence[Example] | None,
    *,
    deltas: bool,
) -> tuple[CallExecution, Hooks, list[Msg]]:
    """The call's execution over its state, held (``AgentState.acquire``: the
    driver releases ``ex.state`` when the call ends), the middleware stages
    it runs and its input messages. Everything that can refuse the call
    (the input, the output type) is checked first, before the state is
    held. No ``state``: a fresh one, dropped after the call. ``deltas``:
    someone reads the call's deltas (``stream``), else the requests say
    nobody does (``GenerateOptions.stream``).

    Raises:
        InvalidInputError / UnsupportedInputError: a bad message (none at
            all, nor one in the state's memory).
        SchemaError / InvalidExampleError: the output cannot be asked for (bad
            ``examples`` also when it asks for none).
        UsageError: ``strategy`` is no output strategy (also when it asks for none).
    """
    inputs = coerce_input(msg)
    check_optional("state", state, AgentState, "an AgentState")
    if ground is not None:
        check_instance("ground", ground, (bool, Grounded), "True, False, a Grounded() or None")
    if output is None:  # what shapes an output is checked for a call that asks for none too
        if strategy is not None:
            as_strategy(strategy)
        if examples is not None:
            check_example_list(examples)
    if state is None:
        state = AgentState()
    if not inputs and not state.memory:
        raise InvalidInputError("no message: pass a message, or a state whose memory holds one")
    model = agent.model
    state.inputs_checked = check_call_inputs(  # only what the last call did not check
        state.memory, inputs, model.profile, model.model_name, state.inputs_checked)
    if agent.toolkit.sources:  # tool sources (MCP servers): their tools as they are now
        await agent.toolkit.refresh()
    # the middleware that override each stage (``agent.middleware`` as it is now)
    hooks = agent._hooks = hooks_for(agent.middleware, agent._hooks)
    # the model's tools: the toolkit's, and those middleware declare (client tools)
    has_tools = bool(len(agent.toolkit)) or (
        output is not None and any(m.declared_tools() for m in hooks.declaring))
    if output is not None:
        agent.structured_output.prepare(model, output, has_tools, strategy)
    if not state.acquire_nowait():  # a fresh state (the common case): no coroutine
        await state.acquire()
    try:
        ex = start_execution(
            model, state, (agent.name, agent.id),
            agent.options if deltas else agent._whole_options(), output,
            strategy=strategy, deltas=deltas, has_tools=has_tools, inputs=inputs)
    except BaseException:
        state.release()
        raise
    ex.toolkit = agent.toolkit
    if ground is not None:
        ex.extra["ground"] = ground
    if examples is not None:
        ex.extra["examples"] = examples
    if output is None:
        if not state.so_tool_active and hooks.text is not None:
            hooks = hooks.text  # a text call: no output-only middleware stages
    elif hooks.output is not None:
        hooks = hooks.output  # an output call: no text-only middleware stages
    return ex, hooks, inputs


async def fold_chunks(ex: CallExecution, request: ModelRequest, builder: ReplyBuilder,
                      chunk_hooks: Sequence[Middleware]) -> None:
    """Fold the reply to ``request`` from the model's stream into ``builder``,
    each chunk shown to ``chunk_hooks`` (their events are made for nobody:
    a call nobody reads the deltas of, whose model has no ``whole_reply`` or
    whose middleware read the chunks); the stream is closed however this ends."""
    chunks = ex.model.stream(request.messages, request.tools, request.options)
    try:
        async for chunk in chunks:
            builder.add(chunk)
            for m in chunk_hooks:
                m.on_chunk(ex, chunk, builder)
    finally:
        await close_chunks(chunks)


async def close_chunks(chunks: AsyncIterator[Any]) -> None:
    """Close a model's stream however its reading ended (``aclose``, where it
    has one); a generator run to its end has nothing to close."""
    if getattr(chunks, "ag_frame", True) is not None:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


def _acting(decision: Decision | None) -> tuple[
        Mapping[str, ToolResultBlock], tuple[str, ...], StopReason | None, tuple[str, ...]]:
    """What an ``Act`` decision says of the acting step: the results it
    supplies itself, the calls that wait, the pause, the calls it failed."""
    if isinstance(decision, Act):
        return decision.results, decision.waiting, decision.pause, decision.failed
    return {}, (), None, ()


def supplied_results(ex: CallExecution, decision: Decision | None) -> Mapping[str, ToolResultBlock]:
    """Start acting on ``decision``: the calls that wait for a decision
    outside the loop (``ex.waiting``), and the results the decision supplies
    itself (those calls are not run)."""
    supplied, ex.waiting, _, _ = _acting(decision)
    return supplied


def tool_message(ex: CallExecution, ran: list[ToolResultBlock]) -> Msg:
    """The tool message of the step's results ``ran`` (in call order; the
    waiting calls named), added to memory."""
    results = Msg("tool", ran,
                  metadata={WAITING_CALLS: list(ex.waiting)} if ex.waiting else None)
    ex.memory.append(results)
    return results


async def after_acting(agent: LoopAgent, ex: CallExecution, hooks: Hooks,
                       calls: list[ToolUseBlock], results: Msg, decision: Decision | None) -> bool:
    """Count the failed calls against their retry budgets, run every
    ``post_acting``; whether the loop ends here (``ex.stop_reason`` set):
    calls wait for a decision outside the loop (the call pauses, resumed
    later), or a middleware stopped it.

    Raises:
        ToolRetriesExceededError: a tool failed past its retry budget.
    """
    supplied, _, pause, failed = _acting(decision)
    count_failures(ex, agent.toolkit, agent.tool_retries, calls, results, supplied, failed)
    stop = False
    for m in hooks.post_acting:
        stop = await m.post_acting(ex, results) or stop
    if ex.waiting and pause is not None:  # decided outside the loop: resumed later
        ex.stop_reason = pause
        return True
    if stop:
        ex.stop_reason = ex.stop_reason or "stopped"
        return True
    return False


def out_of_steps(agent: LoopAgent, ex: CallExecution) -> None:
    """The loop ran ``max_iters`` steps without ending: say so."""
    ex.stop_reason = "max_iters"
    ex.log.info("call.max_iters", max_iters=agent.max_iters)


def call_failure(ex: CallExecution, exc: BaseException) -> BaseException:
    """What a call ended by ``exc`` raises: a ``CancelledError`` no canceller
    asked for as ``stray_call_error``'s error (any other cancellation as it
    is); an error that reports spending (``StructuredOutputError``,
    ``ProviderError``) carrying the call's usage where it has none."""
    if isinstance(exc, asyncio.CancelledError):
        return stray_call_error(exc) if stray_cancel(exc) else exc
    if isinstance(exc, StructuredOutputError | ProviderError) and exc.usage is None:
        exc.usage = ex.usage
    return exc


def stray_call_error(cancel: asyncio.CancelledError) -> StrayCancelError:
    """The error of a call that ``cancel``, a ``CancelledError`` no canceller
    asked for (``agentflow._commit.stray_cancel``), ended: raised by code inside
    it (a model client, middleware, a library's own cancel scope). Let through,
    it ended ``stream()`` as a cancellation would, and a web route's response
    stopped with no error event (the task was not being cancelled, so nothing
    else happened either)."""
    said = f": {cancel}" if str(cancel) else ""
    return StrayCancelError(
        f"the call raised a CancelledError{said} while it was not being cancelled (raised "
        "by code inside it: the model client, middleware, a library's own cancel scope or "
        "timeout); the call has no reply and its state is as it was")
