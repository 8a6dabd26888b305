"""The reasoning/acting loop of one call (``ReActAgent.stream``'s and ``call``'s body).

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

That loop has two drivers over the same steps (``agentflow.loop_steps``),
so each rule is in one place: ``call_events``, ``stream()``'s async generator,
yields the call's events between the steps; ``call_complete``, ``call()``'s
coroutine, makes none and returns the ``Complete``: no generator layer,
event or delta check on a call nobody reads the events of, which tells the
model that nobody reads the deltas (``GenerateOptions.stream = False``: an
HTTP adapter then fetches the whole reply, folded by its ``whole_reply``).
A call works on a copy of the state's memory (a fresh, empty state when the
call is given none) and commits it only when the loop ends: an exception or
a cancellation (including a consumer that stops iterating) leaves the
``AgentState`` exactly as it was before the call.

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
from typing import TYPE_CHECKING, Any

from agentflow.acting import run_tool_calls, tool_progress
from agentflow.call_outcome import commit, output_failure, stops
from agentflow.errors import ProviderError, StructuredOutputError
from agentflow.events import (
    SUSPENDED,
    CallStarted,
    Complete,
    Event,
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.loop_steps import (
    LoopAgent,
    after_acting,
    call_failure,
    close_chunks,
    fold_chunks,
    open_call,
    out_of_steps,
    stray_call_error,
    supplied_results,
    tool_message,
)
from agentflow.messages import Msg, ToolResultBlock
from agentflow.middleware.base import Act, ReasonAgain
from agentflow.middleware.decisions import merge_decisions, waiting_reasons
from agentflow.model import TextDelta, ThinkingDelta
from agentflow.output.reminders import TOOL_NAME
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.reasoning import drain, next_request, recover, snapshot, take_reply, tool_specs
from agentflow.reply import ReplyBuilder
from agentflow.state import AgentState

if TYPE_CHECKING:
    from agentflow.grounding import Grounded
    from agentflow.output.examples import Example

__all__ = ["LoopAgent", "call_complete", "call_events", "stray_call_error"]


async def call_events(
    agent: LoopAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any,
    state: AgentState | None,
    strategy: OutputStrategy | StrategyName | None,
    ground: bool | Grounded | None,
    examples: Sequence[Example] | None,
    *,
    strict: bool,
) -> AsyncGenerator[Event, None]:
    """The events of one call of ``agent`` (``stream``'s body), the loop's
    steps (``agentflow.loop_steps``) with every event between them.
    ``strict``: a call whose output could not be had raises its
    ``StructuredOutputError`` (after committing) instead of yielding
    ``Complete``. No ``state``: a fresh one, dropped after the call."""
    ex, hooks, inputs = await open_call(agent, msg, output, state, strategy, ground, examples,
                                        deltas=True)
    try:
        with agent.telemetry.call(agent.name, agent.id, ex):
            yield CallStarted(ex.call_id, agent.name, agent.id)
            for m, now in hooks.start_steps:
                if now is not None:  # a sync stage: no coroutine
                    now(m, ex)
                else:
                    await m.on_call_start(ex)
            for event in drain(ex):
                yield event
            ex.memory.extend(inputs)  # after what on_call_start added (reminders)

            # the loop: reason, act, repeat (inline: no generator layer re-yields the events)
            while ex.iteration < agent.max_iters:
                ex.iteration += 1
                if agent.toolkit.sources and ex.iteration > 1:  # changed by a tool call?
                    await agent.toolkit.refresh()
                while True:  # reason: one model request, sent again after a recovered error
                    request = await next_request(ex, hooks, agent.sys_prompt, tool_specs(
                        agent._specs, agent.toolkit, ex.model.profile.schema_dialect))
                    for event in drain(ex):
                        yield event
                    builder = ReplyBuilder(ex.model.model_name)
                    with agent.telemetry.model_request(ex, request) as trace:
                        received = False  # a chunk arrived
                        try:
                            chunks = ex.model.stream(request.messages, request.tools,
                                                     request.options)
                            try:
                                async for chunk in chunks:
                                    received = True
                                    builder.add(chunk)
                                    if isinstance(chunk, TextDelta):
                                        yield ReasoningChunk(chunk.text, ex.iteration)
                                    elif isinstance(chunk, ThinkingDelta) and chunk.text:
                                        yield ThinkingChunk(chunk.text, ex.iteration)
                                    for m in hooks.on_chunk:
                                        partial = m.on_chunk(ex, chunk, builder)
                                        if partial is not None:
                                            yield partial
                            finally:
                                await close_chunks(chunks)
                        except ProviderError as error:
                            trace.fail(error)
                            retry = await recover(ex, agent.middleware, request, error, received,
                                                  agent.stream_retries)
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
                # the output tool's calls are the output (OutputPartial, Complete)
                shown = decision.inputs if isinstance(decision, Act) else {}
                for call in calls:
                    if call.name != TOOL_NAME:
                        yield ToolUse(call.id, call.name, dict(shown.get(call.id, call.input)))
                for event in drain(ex):
                    yield event
                if stops(ex, calls, decision):
                    break
                if isinstance(decision, ReasonAgain):
                    continue
                supplied = supplied_results(ex, decision)
                ran: list[ToolResultBlock] = []  # each tool's progress as it reports it
                async with aclosing(tool_progress(ex, agent.toolkit, agent.telemetry, calls,
                                                  supplied, ran)) as progress:
                    async for event in progress:
                        yield event
                results = tool_message(ex, ran)
                held = waiting_reasons(decisions, decision)  # what a held call waits for
                for block in results.tool_results:
                    if block.name != TOOL_NAME:
                        yield ToolResult(block.tool_use_id, block.name, block.output,
                                         block.is_error, held.get(block.tool_use_id),
                                         block.is_json)
                ended = await after_acting(agent, ex, hooks, calls, results, decision)
                for event in drain(ex):
                    yield event
                if ended:
                    break
            else:
                out_of_steps(agent, ex)

            for m, now in hooks.end_steps:
                if now is not None:  # a sync stage: no coroutine
                    now(m, ex)
                else:
                    await m.on_call_end(ex)
            for event in drain(ex):
                yield event
            complete = commit(ex)
        if strict and not ex.completed and ex.stop_reason not in SUSPENDED:
            raise output_failure(complete)  # (a call paused for its caller is not a failure)
        yield complete
    except (StructuredOutputError, ProviderError, asyncio.CancelledError) as exc:
        failure = call_failure(ex, exc)  # with what the call spent; a stray cancel a failure
        if failure is exc:
            raise
        raise failure from exc  # never a stream's silent end
    finally:
        ex.state.release()


async def call_complete(
    agent: LoopAgent,
    msg: str | Msg | Sequence[str | Msg] | None,
    output: Any,
    state: AgentState | None,
    strategy: OutputStrategy | StrategyName | None,
    ground: bool | Grounded | None,
    examples: Sequence[Example] | None,
) -> Complete:
    """The ``Complete`` of one call of ``agent`` that nobody reads the events
    of (``call``'s body): ``call_events``' steps, making no event. The
    requests say nobody reads the deltas (``GenerateOptions.stream``), and
    the model folds its whole reply where its class can (``whole_reply``;
    never a wrapper's forwarded attribute: its own stream decides), unless a
    middleware reads the chunks. Also when the output could not be had
    (``message.output`` then raises). No ``state``: a fresh one, dropped
    after the call. Events middleware queue are noted on the call's span
    (``drain``) where the stream would yield them."""
    ex, hooks, inputs = await open_call(agent, msg, output, state, strategy, ground, examples,
                                        deltas=False)
    chunk_hooks = hooks.on_chunk_unread
    try:
        with agent.telemetry.call(agent.name, agent.id, ex):
            for m, now in hooks.start_steps:
                if now is not None:  # a sync stage: no coroutine
                    now(m, ex)
                else:
                    await m.on_call_start(ex)
            ex.memory.extend(inputs)  # after what on_call_start added (reminders)
            if ex.pending_events:
                drain(ex)
            while ex.iteration < agent.max_iters:
                ex.iteration += 1
                if agent.toolkit.sources and ex.iteration > 1:  # changed by a tool call?
                    await agent.toolkit.refresh()
                while True:  # reason: one model request, sent again after a recovered error
                    # ``next_request``, inline: no coroutine of its own per request
                    request = snapshot(ex, agent.sys_prompt, tool_specs(
                        agent._specs, agent.toolkit, ex.model.profile.schema_dialect))
                    for m in hooks.pre_reasoning:
                        await m.pre_reasoning(ex, request)
                    if ex.pending_events:
                        drain(ex)
                    builder = ReplyBuilder(ex.model.model_name)
                    whole = None if chunk_hooks else getattr(type(ex.model), "whole_reply", None)
                    with agent.telemetry.model_request(ex, request) as trace:
                        try:
                            if whole is not None:
                                await whole(ex.model, request.messages, request.tools,
                                            request.options, builder)
                            else:
                                await fold_chunks(ex, request, builder, chunk_hooks)
                        except ProviderError as error:
                            trace.fail(error)
                            retry = await recover(ex, agent.middleware, request, error,
                                                  builder.received, agent.stream_retries)
                            if ex.pending_events:
                                drain(ex)
                            if not retry:
                                raise
                            continue
                        trace.finish(builder)
                    break
                reply = take_reply(ex, builder)
                calls = reply.tool_uses
                decision = merge_decisions([await m.post_reasoning(ex, reply)
                                            for m in hooks.post_reasoning])
                if ex.pending_events:
                    drain(ex)
                if stops(ex, calls, decision):
                    break
                if isinstance(decision, ReasonAgain):
                    continue
                supplied = supplied_results(ex, decision)
                results = tool_message(ex, await run_tool_calls(
                    ex, agent.toolkit, agent.telemetry, calls, supplied))
                ended = await after_acting(agent, ex, hooks, calls, results, decision)
                if ex.pending_events:
                    drain(ex)
                if ended:
                    break
            else:
                out_of_steps(agent, ex)

            for m, now in hooks.end_steps:
                if now is not None:  # a sync stage: no coroutine
                    now(m, ex)
                else:
                    await m.on_call_end(ex)
            if ex.pending_events:
                drain(ex)
            return commit(ex)
    except (StructuredOutputError, ProviderError, asyncio.CancelledError) as exc:
        failure = call_failure(ex, exc)  # with what the call spent; a stray cancel a failure
        if failure is exc:
            raise
        raise failure from exc  # never a stream's silent end
    finally:
        ex.state.release()
