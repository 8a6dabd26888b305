"""Reasoning: the *reason* step of ``ReActAgent``'s loop around one model
request: the request's snapshot of the call, what to do when the request
fails (a middleware's degradation, a broken stream sent again), and folding
the finished reply into the call. The streaming itself stays inline in the
agent's event generator, so no generator layer re-yields each chunk's event.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.errors import ProviderError
from agentflow.events import AttemptDiscarded, DiscardReason
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Middleware, ModelRequest
from agentflow.model import ToolSpec, Usage
from agentflow.reply import ReplyBuilder

__all__ = ["recover", "snapshot", "stream_retry", "take_reply"]


def snapshot(ex: CallExecution, sys_prompt: str | None, tools: list[ToolSpec]) -> ModelRequest:
    """The next request before ``pre_reasoning``: the system prompt, a copy
    of the call's memory, ``tools`` (the toolkit's specs, a fresh list) plus
    the call's own tools, and the call's options with a one-request
    ``tool_choice`` (forcing), which is used up here."""
    messages = list(ex.memory)
    if sys_prompt:
        messages.insert(0, Msg.system(sys_prompt))
    tools.extend(ex.call_tools.values())
    options = ex.options
    if ex.tool_choice is not None:
        options = options.with_(tool_choice=ex.tool_choice)
        ex.tool_choice = None
    return ModelRequest(messages, tools, options)


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
    used = builder.usage
    ex.usage = ex.usage + Usage(used.input_tokens, used.output_tokens,
                                used.cached_tokens, used.reasoning_tokens, 1)
    ex.last_finish_reason = builder.finish_reason
    reply = builder.build()
    ex.memory.append(reply)
    return reply
