"""The reasoning/acting loop of one call (``ReActAgent.stream``'s body).

One call, top to bottom::

    on_call_start
    repeat until done or max_iters:
        request  = snapshot(memory, tools, options)   -> pre_reasoning
        reply    = reason(request)                    (stream chunks out as events)
        decision = post_reasoning(reply)              (every middleware's, merged)
        if decision says finish, or the reply calls no tool: done
        results  = act(reply's tool calls, concurrently) -> post_acting
        if the decision left calls waiting (approval, client tool): pause
    on_call_end, commit memory to the state, emit Complete

``stream()`` is that loop as an async generator of events; ``call()`` drains
it, telling the model that nobody reads the deltas (``GenerateOptions.stream
= False``: an HTTP adapter then fetches whole replies and yields them as the
same chunks) and making no event that only a reader of the stream needs. One
code path, two transports. A call works on a copy of the state's memory
(a fresh, empty state when the call is given none) and commits it only when
the loop ends: an exception or a cancellation (including a consumer that
stops iterating) leaves the ``AgentState`` exactly as it was before the call.

Tool execution and the per-tool retry budget live in ``agentflow.acting``;
the call's input, working memory and execution in ``agentflow.call_input``;
the request snapshot, error recovery and reply folding of the *reason* step
in ``agentflow.reasoning``; applying a decision and committing the call in
``agentflow.call_outcome``.

``ToolUse`` / ``ToolResult`` events are the agent's tools only: calls of the
internal output tool (``generate_response``) are the output, which a reader
sees as ``OutputPartial`` and ``Complete`` (and ``OutputRetry`` when one is
refused); they stay in the conversation memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Protocol

from agentflow._arguments import check_instance, check_optional
from agentflow._commit import stray_cancel
from agentflow.acting import count_failures, run_tool_calls, tool_progress
from agentflow.call_input import coerce_input as _coerce_input
from agentflow.call_input import start_execution
from agentflow.call_outcome import commit, output_failure, stops
from agentflow.errors import (
    InvalidInputError,
    ProviderError,
    StrayCancelError,
    StructuredOutputError,
)
from agentflow.events import (
    SUSPENDED,
    CallStarted,
    Event,
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.grounding.marker import Grounded
from agentflow.input_checks import check_call_inputs
from agentflow.messages import Msg, ToolResultBlock
from agentflow.middleware.base import WAITING_CALLS, Act, ReasonAgain, hooks_for
from agentflow.middleware.decisions import merge_decisions, waiting_reasons
from agentflow.model import TextDelta, ThinkingDelta
from agentflow.output.reminders import TOOL_NAME
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.reasoning import drain, next_request, recover, take_reply, tool_specs
from agentflow.reply import ReplyBuilder
from agentflow.state import AgentState

if TYPE_CHECKING:
    from agentflow.middleware.base import Hooks, Middleware
    from agentflow.middleware.structured_output import StructuredOutputMiddleware
    from agentflow.model import ChatModel, GenerateOptions, ToolSpec
    from agentflow.output.examples import Example
    from agentflow.telemetry import Telemetry
    from agentflow.tools import Toolkit

__all__ = ["LoopAgent", "call_events"]


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


async def call_events(
    agent: LoopAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any,
    state: AgentState | None,
    strategy: OutputStrategy | StrategyName | None,
    ground: bool | Grounded | None,
    examples: Sequence[Example] | None,
    *,
    deltas: bool,
    strict: bool,
) -> AsyncGenerator[Event, None]:
    """The events of one call of ``agent`` (``stream``'s body); ``deltas=False``: nobody reads
    the deltas (``call``), so the requests say so (``GenerateOptions.stream``),
    and the events only a reader of the stream needs (``CallStarted``,
    deltas, ``ToolUse``, ``ToolResult``) are not made: ``call`` reads
    ``Complete``. Middleware's queued events are yielded either way.
    ``strict``: a call whose output could not be had raises its
    ``StructuredOutputError`` (after committing) instead of yielding
    ``Complete``. No ``state``: a fresh one, dropped after the call."""
    inputs = _coerce_input(msg)
    check_optional("state", state, AgentState, "an AgentState")
    if ground is not None:
        check_instance("ground", ground, (bool, Grounded), "True, False, a Grounded() or None")
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
    await state.acquire()
    try:
        ex = start_execution(
            model, state, (agent.name, agent.id),
            agent.options if deltas else agent._whole_options(), output,
            strategy=strategy, deltas=deltas, has_tools=has_tools, inputs=inputs)
        ex.toolkit = agent.toolkit
        if ground is not None:
            ex.extra["ground"] = ground
        if examples is not None:
            ex.extra["examples"] = examples
        if output is None and not state.so_tool_active and hooks.text is not None:
            hooks = hooks.text  # a text call: no output-only middleware stages
        chunk_hooks = hooks.on_chunk if deltas else hooks.on_chunk_unread
        with agent.telemetry.call(agent.name, agent.id, ex):
            if deltas:  # call() reads Complete only: no event made that nobody reads
                yield CallStarted(ex.call_id, agent.name, agent.id)
            for m in hooks.on_call_start:
                await m.on_call_start(ex)
            if ex.pending_events:
                for event in drain(ex):
                    yield event
            ex.memory.extend(inputs)

            # the loop: reason, act, repeat (inline: no generator layer re-yields the events)
            while ex.iteration < agent.max_iters:
                ex.iteration += 1
                if agent.toolkit.sources and ex.iteration > 1:  # changed by a tool call?
                    await agent.toolkit.refresh()
                while True:  # reason: one model request, sent again after a recovered error
                    request = await next_request(ex, hooks, agent.sys_prompt, tool_specs(
                        agent._specs, agent.toolkit, ex.model.profile.schema_dialect))
                    if ex.pending_events:
                        for event in drain(ex):
                            yield event
                    builder = ReplyBuilder(ex.model.model_name)
                    # nobody reads the chunks: the model folds its whole reply, where its
                    # class can (never a wrapper's forwarded attribute: its own stream decides)
                    whole = None if chunk_hooks or deltas else getattr(type(ex.model),
                                                                       "whole_reply", None)
                    with agent.telemetry.model_request(ex, request) as trace:
                        received = False  # a chunk arrived (whole_reply: the builder says)
                        try:
                            if whole is not None:
                                try:
                                    await whole(ex.model, request.messages, request.tools,
                                                request.options, builder)
                                finally:
                                    received = builder.received
                            else:
                                chunks = ex.model.stream(request.messages, request.tools,
                                                         request.options)
                                try:
                                    async for chunk in chunks:
                                        received = True
                                        builder.add(chunk)
                                        if deltas:  # nobody reads them under call(): not made
                                            if isinstance(chunk, TextDelta):
                                                yield ReasoningChunk(chunk.text, ex.iteration)
                                            elif isinstance(chunk, ThinkingDelta) and chunk.text:
                                                yield ThinkingChunk(chunk.text, ex.iteration)
                                        for m in chunk_hooks:
                                            partial = m.on_chunk(ex, chunk, builder)
                                            if partial is not None:
                                                yield partial
                                finally:  # (a generator run to its end has nothing to close)
                                    if getattr(chunks, "ag_frame", True) is not None:
                                        aclose = getattr(chunks, "aclose", None)
                                        if aclose is not None:
                                            await aclose()
                        except ProviderError as error:
                            trace.fail(error)
                            retry = await recover(ex, agent.middleware, request, error, received,
                                                  agent.stream_retries)
                            if ex.pending_events:
                                for event in drain(ex):
                                    yield event
                            if not retry:
                                raise
                            continue
                        trace.finish(builder)
                    break
                reply = take_reply(ex, builder)
                calls = reply.tool_uses
                # every middleware sees the reply, their decisions merge: none hides a call
                decisions = [await m.post_reasoning(ex, reply) for m in hooks.post_reasoning]
                decision = merge_decisions(decisions)
                if deltas:  # the output tool's calls are the output (OutputPartial, Complete)
                    shown = decision.inputs if isinstance(decision, Act) else {}
                    for call in calls:
                        if call.name != TOOL_NAME:
                            yield ToolUse(call.id, call.name, dict(shown.get(call.id, call.input)))
                if ex.pending_events:
                    for event in drain(ex):
                        yield event
                if stops(ex, calls, decision):
                    break
                if isinstance(decision, ReasonAgain):
                    continue
                supplied, ex.waiting, pause, failed = (
                    (decision.results, decision.waiting, decision.pause, decision.failed)
                    if isinstance(decision, Act) else ({}, (), None, ()))
                ran: list[ToolResultBlock] = []
                if deltas:  # streamed: each tool's progress as it reports it
                    async with aclosing(tool_progress(ex, agent.toolkit, agent.telemetry, calls,
                                                      supplied, ran)) as progress:
                        async for event in progress:
                            yield event
                else:
                    ran = await run_tool_calls(ex, agent.toolkit, agent.telemetry, calls,
                                               supplied)
                results = Msg("tool", ran,
                              metadata={WAITING_CALLS: list(ex.waiting)} if ex.waiting else None)
                ex.memory.append(results)
                if deltas:  # a held call's result says what it waits for (by id, not text)
                    held = waiting_reasons(decisions, decision)
                    for block in results.tool_results:
                        if block.name != TOOL_NAME:
                            yield ToolResult(block.tool_use_id, block.name, block.output,
                                             block.is_error, held.get(block.tool_use_id),
                                             block.is_json)
                count_failures(ex, agent.toolkit, agent.tool_retries, calls, results, supplied,
                               failed)
                stop = False
                for m in hooks.post_acting:
                    stop = await m.post_acting(ex, results) or stop
                if ex.pending_events:
                    for event in drain(ex):
                        yield event
                if ex.waiting and pause is not None:  # decided outside the loop: resumed later
                    ex.stop_reason = pause
                    break
                if stop:
                    ex.stop_reason = ex.stop_reason or "stopped"
                    break
            else:
                ex.stop_reason = "max_iters"
                ex.log.info("call.max_iters", max_iters=agent.max_iters)

            for m in hooks.on_call_end:
                await m.on_call_end(ex)
            if ex.pending_events:
                for event in drain(ex):
                    yield event
            complete = commit(ex)
        if strict and not ex.completed and ex.stop_reason not in SUSPENDED:
            raise output_failure(complete)  # (a call paused for its caller is not a failure)
        yield complete
    except (StructuredOutputError, ProviderError) as exc:  # it carries what the call spent
        if exc.usage is None:
            exc.usage = ex.usage
        raise
    except asyncio.CancelledError as exc:  # the call's cancellation, or code's own?
        if not stray_cancel(exc):
            raise
        raise stray_call_error(exc) from exc  # a failure, never a stream's silent end
    finally:
        state.release()


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
