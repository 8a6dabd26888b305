"""``CallExecution``: everything that lives for one call only.

The agent object holds configuration; every mutable thing a call needs is
here, created fresh per call, so concurrent calls of one agent never share
it. ``memory`` is the call's working copy of the state's memory: the agent
commits it (and ``so_tool_active``) to the ``AgentState`` when the call ends,
and a failed or cancelled call leaves the state exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentflow.errors import StructuredOutputError
from agentflow.events import Event, StopReason
from agentflow.messages import Msg, StructuredResult, new_id
from agentflow.model import ChatModel, GenerateOptions, ResponseFormat, ToolChoice, ToolSpec, Usage

if TYPE_CHECKING:
    import structlog

    from agentflow.state import AgentState
    from agentflow.tools.toolkit import Toolkit

__all__ = ["CallExecution"]

_NO_USAGE = Usage()


@dataclass(eq=False, slots=True)
class CallExecution:
    """Per-call mutable state.

    Attributes:
        call_id: unique id of the call (bound into logs).
        agent_name / agent_id: who runs the call.
        model: the model of the call.
        state: the ``AgentState`` the call runs on (written only at commit).
        memory: the working memory (state memory + this call's messages).
        inputs: the caller's input messages of the call, as given (for a call
            that continues a stored conversation without a new message, those
            of the call that started it: ``call_input.continued_inputs``).
            Set once, before any middleware runs; the text grounded values
            must come from (``agentflow.grounding.output_checks.call_source``),
            whatever the framework adds to ``memory`` around them.
        so_tool_active: working copy of the state's flag.
        options: base request options of the call.
        output_type: the requested output type, or ``None``.
        iteration: reasoning steps taken so far.
        usage: usage summed over every request of the call.
        call_tools: tools declared for this call only (``generate_response``),
            never in the agent's toolkit; the middleware that declares one
            answers its calls (``Act.results``).
        tool_choice: a ``tool_choice`` for the next request only (forcing).
        response_format: the native response format of the call, if any.
        completed: the structured output succeeded; the loop stops.
        output / output_error: the call's structured result.
        reply: the message ``Complete`` and ``call()`` return.
        force_count: forcing retries spent; validation_retries: output retries spent.
        spans: field path -> ``[(start, end)]`` of the output's grounded values.
        discarded: attempts abandoned mid-stream (each announced by ``AttemptDiscarded``).
        stream_retries: requests sent again after a stream broke mid-way.
        tool_failures: error results per tool name (the per-tool retry budget).
        last_finish_reason: finish reason of the latest model reply;
            last_finish_detail: the vendor's words on why it ended (``""``: none).
        waiting: ids of the latest reply's calls that wait for a decision
            outside the loop (``Act.waiting``; the call pauses after acting).
        deltas_read: someone reads the call's delta events (``stream()``);
            ``False`` under ``call()``, where partial outputs are not worked out.
        extra: room for middleware's own per-call data, keyed by middleware.
        toolkit: the agent's tools (``None`` for an execution made outside an
            agent): which of them a tool source gave (``Toolkit.from_sources``).
    """

    model: ChatModel
    state: AgentState
    agent_name: str
    agent_id: str
    base_log: structlog.stdlib.BoundLogger
    options: GenerateOptions = field(default_factory=GenerateOptions)
    output_type: Any = None
    call_id: str = field(default_factory=new_id)
    memory: list[Msg] = field(default_factory=list)
    inputs: tuple[Msg, ...] = ()
    so_tool_active: bool = False
    iteration: int = 0
    usage: Usage = _NO_USAGE  # immutable: a shared zero, replaced per request
    call_tools: dict[str, ToolSpec] = field(default_factory=dict)
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    completed: bool = False
    output: Any = None
    output_error: Exception | None = None
    reply: Msg | None = None
    stop_reason: StopReason | None = None
    force_count: int = 0
    validation_retries: int = 0
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    discarded: int = 0
    stream_retries: int = 0
    tool_failures: dict[str, int] = field(default_factory=dict)
    last_finish_reason: str = "stop"
    last_finish_detail: str = ""
    waiting: tuple[str, ...] = ()
    deltas_read: bool = True
    pending_events: list[Event] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    toolkit: Toolkit | None = None

    _log: structlog.stdlib.BoundLogger | None = field(default=None, init=False, repr=False)

    @property
    def log(self) -> structlog.stdlib.BoundLogger:
        """The call's logger, bound to agent name, agent id and call id (bound
        on first use: a call that logs nothing pays nothing)."""
        if self._log is None:
            self._log = self.base_log.bind(
                agent=self.agent_name, agent_id=self.agent_id, call_id=self.call_id
            )
        return self._log

    @property
    def finish_said(self) -> str:
        """``"; the vendor says: <detail>"`` for the latest reply's finish
        detail (a refusal's category and explanation), else ``""``: what an
        error about that end quotes, so the caller reads why."""
        detail = self.last_finish_detail
        return f"; the vendor says: {detail}" if detail else ""

    def emit(self, event: Event) -> None:
        """Queue an event; the agent yields it after the current hook returns."""
        self.pending_events.append(event)

    def structured_result(self) -> StructuredResult | None:
        """The result to attach to the reply, or ``None`` when no output was asked."""
        if self.output_type is None:
            return None
        if self.completed:
            return StructuredResult(value=self.output, spans=self.spans)
        error = self.output_error
        if not isinstance(error, StructuredOutputError):
            why = (f" within max_iters ({self.iteration} reasoning steps)"
                   if self.stop_reason == "max_iters" else "")
            error = StructuredOutputError(
                f"the model produced no structured output{why}",
                raw_text=self.reply.text if self.reply else "",
                attempts=self.usage.requests,
            )
        error.usage = self.usage  # what the whole call spent, not the tokens when it was made
        return StructuredResult(error=error)
