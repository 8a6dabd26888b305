"""Reasoning: the *reason* step of ``ReActAgent``'s loop around one model
request: the request (``next_request``: the snapshot of the call, the
toolkit's specs per dialect, the options of a call nobody reads deltas of),
what to do when the request fails (a middleware's degradation, a broken
stream sent again), the events middleware queued (``drain``), and folding the
finished reply into the call. The streaming itself stays inline in the
agent's event generator, so no generator layer re-yields each chunk's event.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from agentflow.errors import ProviderError
from agentflow.events import AttemptDiscarded, DiscardReason, Event
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Hooks, Middleware, ModelRequest
from agentflow.model import GenerateOptions, SchemaDialect, ToolSpec, Usage
from agentflow.output.dialects import tool_spec_for
from agentflow.reply import ReplyBuilder
from agentflow.telemetry import note_events
from agentflow.tools import Toolkit

__all__ = [
    "drain",
    "next_request",
    "recover",
    "snapshot",
    "stream_retry",
    "system_message",
    "take_reply",
    "tool_specs",
    "whole_options",
]


SYSTEM_CACHE_SIZE = 64
"""System prompts whose message ``system_message`` keeps (the most recently used)."""


@functools.lru_cache(maxsize=SYSTEM_CACHE_SIZE)
def system_message(text: str) -> Msg:
    """The system message of the prompt ``text``, made once per prompt and
    shared by every request that sends it (a message is frozen; the system
    message is never in a call's memory, so its id is no conversation's)."""
    return Msg.system(text)


def snapshot(ex: CallExecution, sys_prompt: str | None, tools: list[ToolSpec]) -> ModelRequest:
    """The next request before ``pre_reasoning``: the system prompt
    (``system_message``), a copy of the call's memory, ``tools`` (the
    toolkit's specs, a fresh list) plus the call's own tools, and the call's
    options with a one-request ``tool_choice`` (forcing), which is used up here."""
    messages = list(ex.memory)
    if sys_prompt:
        messages.insert(0, system_message(sys_prompt))
    tools.extend(ex.call_tools.values())
    options = ex.options
    if ex.tool_choice is not None:
        options = options.with_(tool_choice=ex.tool_choice)
        ex.tool_choice = None
    return ModelRequest(messages, tools, options)


async def next_request(ex: CallExecution, hooks: Hooks, sys_prompt: str | None,
                       tools: list[ToolSpec]) -> ModelRequest:
    """The next model request: the ``snapshot``, after ``pre_reasoning``."""
    request = snapshot(ex, sys_prompt, tools)
    for m in hooks.pre_reasoning:
        await m.pre_reasoning(ex, request)
    return request


def tool_specs(cache: dict[tuple[str, int], list[ToolSpec]], toolkit: Toolkit,
               dialect: SchemaDialect) -> list[ToolSpec]:
    """``toolkit``'s specs in the model's schema ``dialect``: a fresh list (the
    request's own), over specs kept in ``cache`` per dialect and toolkit
    revision (a tool source's tools can change between requests)."""
    key = (dialect, toolkit.revision)
    specs = cache.get(key)
    if specs is None:
        if len(cache) >= 16:  # revisions gone by: a source that keeps changing
            cache.clear()
        specs = cache[key] = [tool_spec_for(s, dialect) for s in toolkit.specs()]
    return list(specs)


def whole_options(
    options: GenerateOptions, cached: tuple[GenerateOptions, GenerateOptions] | None
) -> tuple[GenerateOptions, GenerateOptions]:
    """``(options, the options of a call nobody reads deltas of)``: ``stream=False``
    unless ``options`` choose a transport; ``cached`` when made from the same
    ``options`` object (no copy per call)."""
    if options.stream is not None:
        return options, options
    if cached is None or cached[0] is not options:
        cached = (options, options.with_(stream=False))
    return cached


def drain(ex: CallExecution) -> Sequence[Event]:
    """The events queued on ``ex`` (emptied); retries among them become events
    of the call's span (also where nobody reads the events: ``call``)."""
    events = ex.pending_events
    if not events:
        return ()
    ex.pending_events = []
    note_events(ex, events)
    return events


async def recover(
    ex: CallExecution,
    middleware: Sequence[Middleware],
    request: ModelRequest,
    error: ProviderError,
    received: bool,
    stream_retries: int,
) -> bool:
    """Whether to send ``request`` again after ``error``: a middleware
    recovered (``on_model_error``: degradation), or a broken stream may be
    sent again (``stream_retry``). When the attempt had streamed chunks,
    ``AttemptDiscarded`` is queued ahead of the events the middleware queued."""
    retry = False
    why: DiscardReason = "degradation"
    for m in middleware:
        if await m.on_model_error(ex, request, error):
            retry = True
            break
    if not retry and stream_retry(ex, error, stream_retries):
        retry, why = True, "stream_error"
    if retry and received:  # what streamed so far is void: say so first
        ex.discarded += 1
        ex.pending_events.insert(
            0, AttemptDiscarded(ex.iteration, why, f"attempt abandoned: {error}"))
    return retry


def stream_retry(ex: CallExecution, error: ProviderError, limit: int) -> bool:
    """Whether to send the request again after ``error``: a stream that broke
    mid-way (``partial``, retryable), within ``limit`` such retries per call."""
    if not (error.partial and error.retryable) or ex.stream_retries >= limit:
        return False
    ex.stream_retries += 1
    ex.log.info("call.stream_retry", attempt=ex.stream_retries, error=type(error).__name__)
    return True


def take_reply(ex: CallExecution, builder: ReplyBuilder) -> Msg:
    """Fold a finished reply into ``ex`` (usage plus one request, finish
    reason, memory); the reply message."""
    total, used = ex.usage, builder.usage  # one Usage: the sum, plus this request
    ex.usage = Usage(total.input_tokens + used.input_tokens,
                     total.output_tokens + used.output_tokens,
                     total.cached_tokens + used.cached_tokens,
                     total.reasoning_tokens + used.reasoning_tokens, total.requests + 1,
                     total.unreported + (0 if used.input_tokens else 1),  # unknown, not 0
                     total.cache_write_tokens + used.cache_write_tokens)
    memory = ex.memory  # the calls' ids unique in the conversation, not only the reply
    reply = builder.build(lambda: {b.id for m in memory if m.role == "assistant"
                                   for b in m.tool_uses})
    ex.last_finish_reason = builder.finish_reason  # (as built: ReplyBuilder.build)
    ex.last_finish_detail = builder.finish_detail
    memory.append(reply)
    return reply
