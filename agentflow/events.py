"""The typed events ``Agent.stream`` yields.

Each event is a frozen dataclass with a literal ``type``; ``Event`` is their
union, so a consumer can ``match`` on the classes::

    async for event in agent.stream(msg, Contact):
        match event:
            case ReasoningChunk(text=t): ...
            case OutputPartial(data=d): ...
            case Complete(output=c): ...

Order within one call: ``CallStarted`` first, ``Complete`` last, and between
them, per reasoning step, the step's ``ThinkingChunk``/``ReasoningChunk``/
``OutputPartial`` events as chunks arrive, then one ``ToolUse`` per tool call,
then one ``ToolResult`` per call in call order (``ToolProgress`` between
them, as a long tool reports it). ``OutputRetry`` precedes the
step it causes. ``AttemptDiscarded`` says the chunks streamed so far in the
current step are void (the request is sent again, or a later JSON value
replaces the partial output); ``OutputPartial`` restarts only after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from agentflow._slots_init import slot_init
from agentflow.messages import Msg, OutputT
from agentflow.model import Usage

__all__ = [
    "SUSPENDED",
    "ApprovalRequested",
    "AttemptDiscarded",
    "CallStarted",
    "Complete",
    "DiscardReason",
    "Event",
    "OutputPartial",
    "OutputRetry",
    "ReasoningChunk",
    "RetryReason",
    "StopReason",
    "ThinkingChunk",
    "ToolProgress",
    "ToolResult",
    "ToolUse",
    "TypedEvent",
]

StopReason: TypeAlias = Literal[
    "completed", "structured_output", "max_iters", "stopped", "output_failed",
    "approval_required", "client_tool_calls",
]
SUSPENDED: frozenset[StopReason] = frozenset({"approval_required", "client_tool_calls"})
"""Stop reasons of a call that paused, waiting for its caller (a person's
approval: ``agentflow.approvals``; a client tool's result:
``agentflow.client_tools``); the call is resumed by a later one. Not a failure:
``stream`` yields the ``Complete`` of such a call even without its output."""
RetryReason: TypeAlias = Literal[
    "forcing", "validation", "multiple", "degradation", "tools_failed"
]
DiscardReason: TypeAlias = Literal["stream_error", "degradation", "superseded", "empty_reply"]


@slot_init
@dataclass(frozen=True, slots=True)
class CallStarted:
    """A call began. ``call_id`` is unique per call; it is bound into logs."""

    call_id: str
    agent_name: str
    agent_id: str
    type: Literal["call_started"] = "call_started"


@slot_init
@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    """A piece of the model's reply text, as it streams. ``iteration`` counts
    reasoning steps from 1."""

    text: str
    iteration: int
    type: Literal["reasoning_chunk"] = "reasoning_chunk"


@slot_init
@dataclass(frozen=True, slots=True)
class ThinkingChunk:
    """A piece of the model's reasoning (thinking) text."""

    text: str
    iteration: int
    type: Literal["thinking_chunk"] = "thinking_chunk"


@slot_init
@dataclass(frozen=True, slots=True)
class ToolUse:
    """The model called one of the agent's tools (emitted once the call is
    complete). Calls of the internal output tool (``generate_response``) are
    not tool events: they are the output (``OutputPartial``, ``Complete``)."""

    id: str
    name: str
    input: Mapping[str, Any]
    type: Literal["tool_use"] = "tool_use"


@slot_init
@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's result, as the model will read it (the agent's tools only,
    as ``ToolUse``).

    ``waiting``: ``None`` for a result to show; for a call the step held
    (``Act.waiting``: it did not run, ``output`` is only its placeholder) the
    stop reason the call pauses with: ``"approval_required"`` (it waits for
    a person's decision, ``agentflow.approvals``) or ``"client_tool_calls"``
    (for the client's result, ``agentflow.client_tools``). Set by the loop
    from the held calls' ids, never from ``output``: a server tool's error
    that reads like a placeholder is ``None``, a result to show.

    ``is_json``: ``output`` is the JSON of the value the tool returned, not
    text it wrote (``ToolResultBlock.is_json``): ``12`` from a tool that
    returned the number, not the string.
    """

    id: str
    name: str
    output: str
    is_error: bool
    waiting: StopReason | None = None
    is_json: bool = False
    type: Literal["tool_result"] = "tool_result"


@slot_init
@dataclass(frozen=True, slots=True)
class ToolProgress:
    """A running tool call's progress, as the tool reports it (an MCP server's
    ``notifications/progress``; a Python tool's ``agentflow.tools.report_progress``),
    streamed while it runs, between its ``ToolUse`` and its ``ToolResult``.

    ``progress`` grows with each report; ``total`` is the amount it grows to,
    when the tool knows it (``None`` otherwise); ``message`` says what is under
    way (through the secret mask, as a tool's result is).
    """

    id: str
    name: str
    progress: float
    total: float | None = None
    message: str | None = None
    type: Literal["tool_progress"] = "tool_progress"


@slot_init
@dataclass(frozen=True, slots=True)
class OutputPartial:
    """The structured output parsed so far while it streams (a dict; fields
    already seen never disappear in later partials; a string grows, a number
    is shown once it is complete: ``6`` never stands for ``64.4``)."""

    data: Any
    type: Literal["output_partial"] = "output_partial"


@slot_init
@dataclass(frozen=True, slots=True)
class OutputRetry:
    """The structured-output engine asks the model again.

    ``reason``: ``forcing`` (the model answered without the output),
    ``validation`` (the output failed the schema), ``multiple`` (several
    outputs at once), ``tools_failed`` (a valid output came with other tool
    calls that failed: end strategy ``safe``) or ``degradation`` (the vendor refused a feature; the
    engine stepped down a strategy). ``attempt`` counts retries of that
    reason from 1; ``message`` says what happened.
    """

    reason: RetryReason
    attempt: int
    message: str
    type: Literal["output_retry"] = "output_retry"


@slot_init
@dataclass(frozen=True, slots=True)
class AttemptDiscarded:
    """What streamed so far in reasoning step ``iteration`` is void.

    ``reason``: ``stream_error`` (the stream broke mid-way and the request is
    sent again), ``degradation`` (the vendor refused a feature after the
    stream began; the request is sent again without it) or ``superseded``
    (a later JSON value in the reply text replaces the one the partials
    showed) or ``empty_reply`` (a text call's reply said nothing: it is
    dropped and the model is asked to answer, or to continue after tool
    results, ``agentflow.middleware.empty_reply``). Every ``ReasoningChunk``/
    ``ThinkingChunk``/``OutputPartial`` of the attempt before this event is
    void for ``stream_error``, ``degradation`` and ``empty_reply``; for
    ``superseded`` only the partial output is.
    ``OutputPartial`` starts again from nothing after it. ``message`` says
    what happened.
    """

    iteration: int
    reason: DiscardReason
    message: str
    type: Literal["attempt_discarded"] = "attempt_discarded"


@slot_init
@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """Tool calls that wait for a person's decision (``agentflow.approvals``):
    the call ends after this step with stop reason ``approval_required``, its
    state holding the calls unrun; a later call resumes it. ``calls`` are the
    pending calls as ``ToolUse`` events (id, name, input)."""

    calls: tuple[ToolUse, ...]
    type: Literal["approval_requested"] = "approval_requested"


@slot_init
@dataclass(frozen=True, slots=True)
class Complete(Generic[OutputT]):
    """The call ended.

    ``message`` is the reply; ``output`` is the validated output (``None``
    when the call asked for none). ``stream()`` never yields a ``Complete``
    without the output it was asked for: it raises the typed
    ``StructuredOutputError`` instead. Generic in the output type for type
    checkers (``stream(msg, Contact)`` yields a ``Complete[Contact]``);
    ``usage`` sums every request of the call; ``stop_reason`` says
    why the loop ended; ``forced_retries``/``validation_retries`` count the
    engine's retries; ``spans`` maps each grounded value's field path to
    its ``[(start, end)]`` offsets in the source (``{}`` when none);
    ``finish_reason`` is the last reply's, as the vendor gave it
    (``agentflow.model.FinishReason``: ``"content_filter"`` for a text
    answer the vendor's filter cut short; ``None`` when unknown).
    """

    message: Msg[OutputT]
    output: OutputT
    usage: Usage
    stop_reason: StopReason
    forced_retries: int = 0
    validation_retries: int = 0
    spans: Mapping[str, list[tuple[int, int]]] = field(default_factory=dict)
    finish_reason: str | None = None
    type: Literal["complete"] = "complete"


Event: TypeAlias = (
    CallStarted
    | ReasoningChunk
    | ThinkingChunk
    | ToolUse
    | ToolProgress
    | ToolResult
    | OutputPartial
    | OutputRetry
    | AttemptDiscarded
    | ApprovalRequested
    | Complete
)
"""Any event of a call (its ``Complete``: ``Complete[Any]``); ``typing.get_args``
lists the event classes."""

TypedEvent: TypeAlias = (
    CallStarted
    | ReasoningChunk
    | ThinkingChunk
    | ToolUse
    | ToolProgress
    | ToolResult
    | OutputPartial
    | OutputRetry
    | AttemptDiscarded
    | ApprovalRequested
    | Complete[OutputT]
)
"""An event of a call whose output type is ``OutputT`` (what
``stream(msg, Contact)`` yields: ``TypedEvent[Contact]``, its ``Complete``
carrying a ``Contact``). For type checkers; ``Event`` is the same union."""
