"""The Server-Sent Events wire format of ``agent.stream(...)``.

One SSE frame per event, UTF-8, fields in this order::

    id: 7
    event: output_partial
    data: {"type":"output_partial","data":{"name":"Ada"}}

``id`` counts the frames of one response from 1 (an ``error`` frame gets the
next id too); ``event`` repeats the JSON's ``type``, so a browser
``EventSource`` can ``addEventListener("output_partial", ...)``; ``data`` is
one line of JSON. Idle streams get a comment line ``: ping`` (every
``ping_interval`` seconds, 15 by default), which parsers ignore. The stream
ends after ``complete`` or ``error``; a stream cannot be reconnected to, so
a reconnecting ``EventSource`` should be ``close()``d on either (a call
suspended for approval is resumed by a new request: ``agentflow.approvals``).

The JSON shapes, one per ``type`` (every key always present unless marked
optional; ``null`` where there is no value):

``call_started``
    ``{"type", "call_id": str, "agent_name": str, "agent_id": str}`` — first.
``text_chunk`` / ``thinking_chunk``
    ``{"type", "text": str, "iteration": int}`` — a piece of the model's
    reply text (``agentflow.events.ReasoningChunk``) / of its thinking
    (``ThinkingChunk``); ``iteration`` counts reasoning steps from 1.
``reasoning_chunk``
    the reply text's name in agentflow 0.1.0 (the Python event's ``type``,
    after the ReAct loop's reasoning step), which a frontend reads as the
    model's thinking (the AI SDK's and AG-UI's "reasoning" is the thinking):
    sent only by ``AgentflowEncoder(text_event="reasoning_chunk")`` /
    ``sse_response(..., text_event="reasoning_chunk")``, for a client not
    yet moved to ``text_chunk``; the same shape.
``tool_use``
    ``{"type", "id": str, "name": str, "input": object}`` — a complete tool call.
``tool_progress``
    ``{"type", "id": str, "name": str, "progress": number, "total":
    number|null, "message": str|null}`` — a running tool call's progress
    (``id``: the call's), as the tool reports it (an MCP server's
    ``notifications/progress``), between its ``tool_use`` and ``tool_result``.
``tool_result``
    ``{"type", "id": str, "name": str|null, "output": str, "is_error": bool,
    "is_json": bool, "waiting": null|"approval_required"|"client_tool_calls"}`` —
    ``is_json``: ``output`` is the JSON of the value the tool returned (a
    number, an object...: ``JSON.parse`` it), not text it wrote; ``waiting``:
    ``null`` for a result to show; else the call did not run and waits (for a
    person's approval, for the client's result): ``output`` is only its
    placeholder. Known by the call's id, never by the text.
``output_partial``
    ``{"type", "data": object}`` — the structured output parsed so far; keys
    seen never disappear from later partials; values may still grow.
``output_retry``
    ``{"type", "reason": "forcing"|"validation"|"multiple"|"degradation"|
    "tools_failed", "attempt": int, "message": str}``.
``attempt_discarded``
    ``{"type", "iteration": int, "reason": "stream_error"|"degradation"|"superseded"|
    "empty_reply", "message": str}`` — what streamed so far in that reasoning step is void:
    for ``stream_error``, ``degradation`` and ``empty_reply`` its text, thinking and
    partial output (the request is sent again; after an empty reply, with a
    continuation prompt); for ``superseded`` the partial output
    only. Partial output starts again from nothing after it.
``approval_requested``
    ``{"type", "calls": [{"id": str, "name": str, "input": object}]}`` — tool
    calls waiting for a person's decision (``agentflow.approvals``); the
    ``complete`` that follows has stop reason ``approval_required``.
``complete``
    ``{"type", "output": any, "text": str, "stop_reason": str,
    "usage": {"input_tokens", "output_tokens", "cached_tokens",
    "reasoning_tokens", "requests", "unreported", "cache_write_tokens"}, "forced_retries": int,
    "validation_retries": int, "error": null|{"type", "message"}}`` — last.
    ``output`` is the validated output as JSON (``null`` if none was asked
    for); ``error`` says why an output that was asked for is missing
    (``StructuredOutputError`` and kin) in a ``Complete`` made without it;
    ``agent.stream`` never yields one (it raises, and the response ends with
    an ``error`` frame naming the ``StructuredOutputError``), so from
    ``sse_response`` it is ``null``.
``error``
    ``{"type", "error": {"type": str, "message": str}}`` — the call failed
    (``error.type`` is the exception's class name, e.g. ``RateLimitedError``,
    ``StateConflictError``, ``StructuredOutputValidationError``); last. Only
    agentflow's own errors carry their message (which never holds a secret);
    any other exception is reported as ``{"type": "InternalError", "message":
    "internal error"}`` and logged on the server.

Stop reasons: ``completed``, ``structured_output``, ``max_iters``,
``stopped``, ``output_failed``, ``approval_required``, ``client_tool_calls``
(the model called a client tool: the ``tool_use`` went out, the call waits
for the client's result; ``agentflow.client_tools``)
(``agentflow.events.StopReason``).
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any, Literal, TypeAlias

from pydantic_core import to_jsonable_python

from agentflow._clean_text import json_bytes
from agentflow._secrets import mask_secrets
from agentflow.errors import AgentflowError
from agentflow.events import (
    ApprovalRequested,
    AttemptDiscarded,
    CallStarted,
    Complete,
    Event,
    OutputPartial,
    OutputRetry,
    ReasoningChunk,
    ThinkingChunk,
    ToolProgress,
    ToolResult,
    ToolUse,
)

__all__ = ["PING_FRAME", "TEXT_EVENT", "TextEvent", "error_to_dict", "event_to_dict",
           "sse_frame"]

TextEvent: TypeAlias = Literal["text_chunk", "reasoning_chunk"]
"""The names the reply text can be sent under: ``text_chunk``, or 0.1.0's
``reasoning_chunk`` (see the module docstring)."""

TEXT_EVENT: TextEvent = "text_chunk"
"""The reply text's event name (``agentflow.events.ReasoningChunk``'s)."""

PING_FRAME = b": ping\n\n"
"""The keep-alive comment sent while a stream is idle."""


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event's JSON shape (see the module docstring), ready for ``orjson``.
    An event type this table does not know yet is sent with its fields.

    Raises:
        TypeError: ``event`` is not one of ``agentflow.events``' types.
    """
    if isinstance(event, ReasoningChunk):
        return {"type": TEXT_EVENT, "text": event.text, "iteration": event.iteration}
    if isinstance(event, ThinkingChunk):
        return {"type": event.type, "text": event.text, "iteration": event.iteration}
    if isinstance(event, OutputPartial):
        return {"type": event.type, "data": _jsonable(event.data)}
    if isinstance(event, CallStarted):
        return {"type": event.type, "call_id": event.call_id, "agent_name": event.agent_name,
                "agent_id": event.agent_id}
    if isinstance(event, ToolUse):
        return {"type": event.type, "id": event.id, "name": event.name,
                "input": _jsonable(dict(event.input))}
    if isinstance(event, ToolResult):
        return {"type": event.type, "id": event.id, "name": event.name, "output": event.output,
                "is_error": event.is_error, "is_json": event.is_json, "waiting": event.waiting}
    if isinstance(event, ToolProgress):
        return {"type": event.type, "id": event.id, "name": event.name,
                "progress": event.progress, "total": event.total, "message": event.message}
    if isinstance(event, OutputRetry):
        return {"type": event.type, "reason": event.reason, "attempt": event.attempt,
                "message": event.message}
    if isinstance(event, AttemptDiscarded):
        return {"type": event.type, "iteration": event.iteration, "reason": event.reason,
                "message": event.message}
    if isinstance(event, ApprovalRequested):
        return {"type": event.type, "calls": [
            {"id": c.id, "name": c.name, "input": _jsonable(dict(c.input))} for c in event.calls]}
    if isinstance(event, Complete):
        result = event.message.result
        failure = result.error if result is not None else None
        return {
            "type": event.type,
            "output": _jsonable(event.output),
            "text": event.message.text,
            "stop_reason": event.stop_reason,
            "usage": asdict(event.usage),
            "forced_retries": event.forced_retries,
            "validation_retries": event.validation_retries,
            "error": None if failure is None else {"type": type(failure).__name__,
                                                   "message": str(failure)},
        }
    if is_dataclass(event) and isinstance(getattr(event, "type", None), str):
        # an event type newer than this table: its fields, as JSON
        data = _jsonable(event)
        return {"type": data.pop("type"), **data}
    raise TypeError(f"not an agentflow event: {type(event).__name__}")


def error_to_dict(error: BaseException) -> dict[str, Any]:
    """The ``error`` event for a failed call: agentflow's own errors with
    their class name and message (through ``mask_secrets``: a message that
    quotes a tool's or a server's text loses registered keys and URLs' user
    info and queries), anything else as ``InternalError`` (its text may hold
    internals, so it stays in the server's log)."""
    if isinstance(error, AgentflowError):
        detail = {"type": type(error).__name__, "message": mask_secrets(str(error))}
    else:
        detail = {"type": "InternalError", "message": "internal error"}
    return {"type": "error", "error": detail}


def sse_frame(event_id: int, data: dict[str, Any]) -> bytes:
    """One SSE frame: ``id``, ``event`` (= ``data["type"]``) and one-line JSON ``data``."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (
        event_id, data["type"].encode(), json_bytes(data)
    )
