"""The AG-UI protocol (CopilotKit and other AG-UI frontends) over
``agent.stream``: ``AGUIEncoder`` turns agentflow's events into AG-UI
events (the ``ag-ui-protocol`` package's own types and SSE encoder), and
``read_run_input`` (``_agui_input``, re-exported here) reads a
``RunAgentInput`` request body.

    @app.post("/agui")
    async def run(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(agent, run, Contact)

Event mapping (AG-UI event types as in the protocol's ``ag_ui.core``):

* ``call_started`` -> ``RUN_STARTED`` (the request's ``threadId``/``runId``)
* ``thinking_chunk`` -> ``REASONING_START``, ``REASONING_MESSAGE_START``,
  ``REASONING_MESSAGE_CONTENT``... (ended by ``REASONING_MESSAGE_END``,
  ``REASONING_END`` when something else comes)
* ``reasoning_chunk`` (the reply text) -> ``TEXT_MESSAGE_START``,
  ``TEXT_MESSAGE_CONTENT``..., ``TEXT_MESSAGE_END``; one assistant message per
  reasoning step, ``messageId`` ``"<call_id>-<step>"``
* ``tool_use`` -> ``TOOL_CALL_START`` (``parentMessageId``: the step's text
  message, or one id for a step of calls only, so a client keeps one
  assistant message per step), ``TOOL_CALL_ARGS`` (the whole JSON input),
  ``TOOL_CALL_END``; ``tool_result`` -> ``TOOL_CALL_RESULT`` (unless the call
  waits: ``ToolResult.waiting``). The
  structured-output engine's own tool (``generate_response``) is not shown.
* ``output_partial`` -> the client's state with ``"output"`` (``output_key``)
  set to the partial object (a frontend renders ``agent.state.output`` as it
  grows): a ``STATE_SNAPSHOT`` first, then ``STATE_DELTA``s (JSON Patch);
  the validated output comes in a last update too; an update over
  ``MAX_SHOWN_STATE`` bytes is not sent, a ``CUSTOM``
  ``agentflow.state_not_shown`` event says so (``_agui_state``). The client's
  other state keys are sent back unchanged; an app whose state already uses
  ``"output"`` names another key
* ``output_retry`` / ``attempt_discarded`` -> ``CUSTOM`` events named
  ``agentflow.output_retry`` / ``agentflow.attempt_discarded`` (value: the
  wire's JSON of the event); a discarded attempt's open messages are ended.
  An attempt whose text is void (a stream cut and sent again:
  ``stream_error``, ``degradation``) is retracted: its open messages end
  with ``metadata`` ``{"agentflow": {"discarded": <reason>}}`` (the client
  keeps it on the message), the event's value names every message of the
  attempt (``message_ids``), and the retry's messages take new ids
  (``<call>-<step>-retry<n>``), so a client never appends the retry's text
  to the abandoned one; ``read_run_input`` leaves such messages out of the
  history a client sends back. A message once ended cannot be flagged, so a
  step's text message stays open until its attempt cannot be discarded (its
  tool calls, the next step, the end): a thought between two pieces of text
  is a reasoning message beside it, and the text after continues it; a
  ``superseded`` partial output (a later JSON value in the text) voids the
  output so far only, and the text message stays open through it
* ``complete`` -> ``RUN_FINISHED`` with ``result`` ``{"output", "text",
  "stop_reason", "usage", "error"}`` (as in ``agentflow.web.wire``), plus
  ``"pending_tool_call_ids"`` when frontend tool calls wait for the client;
  ``outcome`` absent (a success) unless the run waits (below), or was cut
  short without failing (``stop_reason`` ``stopped``: a middleware stopped
  it; ``max_iters``: the loop's limit): ``{"type": "cancelled"}`` (AG-UI 1.0:
  "stopped before it completed, by whoever was running it, and did not
  fail"; a consumer reads an outcome it does not know as a success);
  and the protocol's own ``usage`` (``[{"inputTokens", "outputTokens",
  "totalTokens", ...}]``; ``_agui_usage``), also on a ``RUN_ERROR`` whose
  error knows the call's usage
* ``approval_requested`` -> the run ends with an interrupt: ``RUN_FINISHED``'s
  ``outcome`` ``{"type": "interrupt", "interrupts": [{"id": <tool call id>,
  "reason": "tool_approval", "toolCallId", "message", "metadata": {"name",
  "input"}}]}`` (the calls' placeholder results are not shown). The client
  resumes with ``resume: [{"interruptId", "status": "resolved", "payload":
  {"approved": bool, "input"?: object, "reason"?: str}}]`` (``cancelled``:
  refused), which ``read_run_input`` reads as ``decisions``.
* a failed call -> ``RUN_ERROR`` (``code``: the error's class name; only
  agentflow's own errors carry their message, through ``mask_secrets``), the
  run's last event (AG-UI 1.0 lifecycle: a run ends with ``RUN_FINISHED`` or
  ``RUN_ERROR``; a run that fails before it starts sends ``RUN_ERROR``
  first); the open text or reasoning message is ended first, so the client
  completes it. Every failure ends so: a provider error before or after chunks, a
  tool past its retries, an output the model never got valid, an exception
  in middleware. A client that goes away gets nothing more: the call is
  cancelled.

No event is larger than the official client reads (it fails a run on one
event over 10 MB): a tool result is shown cut, a tool call's input split
across ``TOOL_CALL_ARGS`` deltas, a state update or a ``RUN_FINISHED``
value over ``MAX_SHOWN_STATE`` bytes left out and named, and an error's
text (the run's last event, a retry's message) cut with a marker to fit
(``_agui_caps``).

Frontend tools (``RunAgentInput.tools``: CopilotKit's ``useFrontendTool``,
``useCopilotAction``) are offered to the model beside the server's tools
(``agui_response(..., client_tools=True)``, the default;
``agentflow.client_tools``). A call of one goes out as ``TOOL_CALL_START``,
``TOOL_CALL_ARGS``, ``TOOL_CALL_END`` and the run finishes there
(``RUN_FINISHED`` with ``outcome`` ``{"type": "success", "pendingToolCallIds":
[...]}`` and ``result.stop_reason`` ``"client_tool_calls"``); the
frontend runs the tool and starts the next run with the messages ending in
the ``tool`` message (``toolCallId``, ``content``), which ``read_run_input``
reads as a run with no new user message: the model continues.

A step that calls both (a call waiting for approval, a frontend tool's call)
ends with the interrupt outcome (AG-UI 1.0: a run that stopped to ask is
never reported as a success, and that outcome has no ``pendingToolCallIds``):
the frontend calls are the ones streamed without a ``TOOL_CALL_RESULT`` and
bound to no interrupt, named in ``result["pending_tool_call_ids"]``. The
client resumes with both at once: ``resume`` answering the interrupts and
the messages ending with the frontend tools' ``tool`` messages (a stored
conversation, ``store``/``key``, takes both; a run missing either is refused
with ``InvalidInputError``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from agentflow._clean_text import clean_data, json_bytes
from agentflow.agent import ReActAgent
from agentflow.client_tool_checks import DEFAULT_CLIENT_TOOL_LIMITS
from agentflow.client_tools import ClientToolLimits, with_client_tools
from agentflow.events import (
    SUSPENDED,
    ApprovalRequested,
    AttemptDiscarded,
    CallStarted,
    Complete,
    Event,
    OutputPartial,
    OutputRetry,
    ReasoningChunk,
    StopReason,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.output.reminders import TOOL_NAME as OUTPUT_TOOL
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.web._agui_caps import (
    MAX_SHOWN_RESULT,
    args_deltas,
    custom_frame,
    error_frame,
    finished_frame,
    shown_result,
)
from agentflow.web._agui_input import read_run_input
from agentflow.web._agui_state import MAX_SHOWN_STATE, StateUpdates
from agentflow.web._agui_usage import token_usage
from agentflow.web._blocks import discarded as _discarded
from agentflow.web.run_input import ClientTool, RunInput, check_stateless, offered_tools
from agentflow.web.sse import EventStreamResponse, Outcome
from agentflow.web.store import StateStore, stream_with_store
from agentflow.web.wire import PING_FRAME, error_to_dict, event_to_dict

__all__ = ["MAX_SHOWN_RESULT", "MAX_SHOWN_STATE", "AGUIEncoder", "agui_response",
           "read_run_input"]

_RunOutcome = (RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
              | RunFinishedCancelledOutcome | None)

_CUT_SHORT: frozenset[StopReason] = frozenset({"stopped", "max_iters"})
"""Stop reasons of a call its runner ended before it completed, without a
failure (a middleware's ``post_acting`` stop, the ``max_iters`` limit):
AG-UI 1.0's ``cancelled`` outcome ("stopped before it completed, by whoever
was running it, and did not fail"), never read as a success."""


def _content_frame(kind: bytes, message_id: str, delta: str) -> bytes:
    """A ``*_CONTENT`` event's SSE frame, byte for byte what ``EventEncoder``
    makes of ``TextMessageContentEvent``/``ReasoningMessageContentEvent``
    (tests/test_web_adapters.py checks), without building the model: the
    per-chunk path of a stream."""
    return b'data: {"type":"%s","messageId":%s,"delta":%s}\n\n' % (
        kind, json_bytes(message_id), json_bytes(delta))


class AGUIEncoder:
    """One AG-UI event stream (``text/event-stream``, ``data: <event JSON>``).

    Args:
        thread_id / run_id: the request's ids (``RUN_STARTED``/``RUN_FINISHED``).
        state: the client's state, the base of the ``STATE_SNAPSHOT``s.
        output_key: the state key the structured output is set under
            (default ``"output"``).
        max_state_bytes: the most bytes of one state event, and of the
            run's last (``RUN_FINISHED``, ``RUN_ERROR``) (``MAX_SHOWN_STATE``;
            ``_agui_state``, ``_agui_caps``).

    A tool result is shown (``TOOL_CALL_RESULT``) unless its call waits
    (``ToolResult.waiting``, set by the loop from the held calls' ids, never
    read from the result's text): a call waiting for approval becomes an
    interrupt, a frontend tool's call is left for the client (named in
    ``pendingToolCallIds``).
    """

    media_type = "text/event-stream"
    headers: Mapping[str, str] = {}
    ping = PING_FRAME

    def __init__(self, thread_id: str, run_id: str, *, state: Any = None,
                 output_key: str = "output", max_state_bytes: int = MAX_SHOWN_STATE) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        # (a client's lone surrogate, "\\ud83d" from an emoji cut in two, repaired once: the
        # package's encoder refuses it in every snapshot)
        self.state = clean_data(dict(state)) if isinstance(state, Mapping) else {}
        self.output_key = output_key
        self._state = StateUpdates(self.state, output_key, max_state_bytes)
        self._sse = EventEncoder()
        self._call = run_id
        self._text: str | None = None       # the open text message's id
        self._reasoning: str | None = None  # the open reasoning message's id
        self._hidden: set[str] = set()      # ids of calls whose results are not shown
        self._interrupts: list[Interrupt] = []
        self._pending: list[str] = []       # ids of the client tools' calls
        self._step: str | None = None       # the assistant message of the step's calls
        self._calls = 0
        self._retries = 0                   # attempts retracted: the retries' ids differ
        self._opened: dict[int, list[str]] = {}  # the messages each step's attempt opened

    def _frames(self, events: list[BaseEvent]) -> bytes:
        return "".join(map(self._sse.encode, events)).encode()

    def _close(self, events: list[BaseEvent], discarded: str | None = None) -> None:
        """End the open messages (``discarded``: flagged so, as void)."""
        flag = _discarded(discarded) if discarded else None
        if self._text is not None:
            events.append(TextMessageEndEvent(message_id=self._text, metadata=flag))
            self._text = None
        self._end_reasoning(events, flag)

    def _end_reasoning(self, events: list[BaseEvent], flag: dict[str, Any] | None = None) -> None:
        if self._reasoning is not None:
            events.append(ReasoningMessageEndEvent(message_id=self._reasoning, metadata=flag))
            events.append(ReasoningEndEvent(message_id=self._reasoning))
            self._reasoning = None

    def _open(self, iteration: int, kind: str) -> str:
        """A new message's id for step ``iteration`` (``kind``: ``""`` text,
        ``"-reasoning"``), remembered as the attempt's."""
        retry = f"-retry{self._retries}" if self._retries else ""
        message_id = f"{self._call}-{iteration}{kind}{retry}"
        opened = self._opened.setdefault(iteration, [])
        if message_id not in opened:  # (a step's text after a thought: the same message)
            opened.append(message_id)
        return message_id

    def encode(self, event: Event) -> bytes:
        out: list[BaseEvent] = []
        if isinstance(event, ReasoningChunk):
            if not event.text:
                return b""
            if self._reasoning is not None:  # (the step's text message is still open)
                self._end_reasoning(out)
            if self._text is None:
                self._text = self._step = self._open(event.iteration, "")
                out.append(TextMessageStartEvent(message_id=self._text, role="assistant"))
            elif not out:  # the hot path: one content event, encoded directly
                return _content_frame(b"TEXT_MESSAGE_CONTENT", self._text, event.text)
            out.append(TextMessageContentEvent(message_id=self._text, delta=event.text))
        elif isinstance(event, ThinkingChunk):
            if not event.text:
                return b""
            # (an open text message stays open: the attempt may yet be discarded, and
            # an ended message cannot be flagged; the step's next text continues it)
            if self._reasoning is None:
                self._reasoning = self._open(event.iteration, "-reasoning")
                out.append(ReasoningStartEvent(message_id=self._reasoning))
                out.append(ReasoningMessageStartEvent(message_id=self._reasoning,
                                                      role="reasoning"))
            elif not out:
                return _content_frame(b"REASONING_MESSAGE_CONTENT", self._reasoning, event.text)
            out.append(ReasoningMessageContentEvent(message_id=self._reasoning,
                                                    delta=event.text))
        elif isinstance(event, OutputPartial):  # per chunk: encoded directly
            return self._state.frame(event_to_dict(event)["data"])
        elif isinstance(event, ToolUse):
            if self._step is None:  # a step of calls only: its own assistant message
                self._calls += 1
                self._step = f"{self._call}-calls-{self._calls}"
            parent = self._step
            self._close(out)
            if event.name == OUTPUT_TOOL:
                self._hidden.add(event.id)
            else:
                out.append(ToolCallStartEvent(tool_call_id=event.id, tool_call_name=event.name,
                                              parent_message_id=parent))
                out.extend(ToolCallArgsEvent(tool_call_id=event.id, delta=delta) for delta in
                           args_deltas(json_bytes(event_to_dict(event)["input"]).decode()))
                out.append(ToolCallEndEvent(tool_call_id=event.id))
        elif isinstance(event, ApprovalRequested):
            for call in event.calls:
                self._hidden.add(call.id)  # its placeholder result is not shown
                self._interrupts.append(Interrupt(
                    id=call.id, reason="tool_approval", tool_call_id=call.id,
                    message=f"Approve the call to {call.name}?",
                    metadata={"name": call.name, "input": event_to_dict(call)["input"]}))
        elif isinstance(event, ToolResult):
            self._step = None  # the step's calls are made: the next ones are another step's
            if event.waiting == "client_tool_calls":
                self._pending.append(event.id)  # the client's to answer: no result shown
            elif event.waiting is None and event.id not in self._hidden:
                out.append(ToolCallResultEvent(message_id=f"{event.id}-result",
                                               tool_call_id=event.id,
                                               content=shown_result(event.output), role="tool"))
        elif isinstance(event, CallStarted):
            self._call = event.call_id
            out.append(RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id))
        elif isinstance(event, Complete):
            self._close(out)
            wire = event_to_dict(event)
            state = self._state.frame(wire["output"]) if wire["output"] is not None else b""
            result = {k: wire[k] for k in ("output", "text", "stop_reason", "usage", "error")}
            if event.stop_reason in SUSPENDED:  # the output is yet to come, not failed
                result["error"] = None
            if self._pending:  # frontend tool calls left for the client to answer
                result["pending_tool_call_ids"] = list(self._pending)
            outcome: _RunOutcome = None
            if self._interrupts:  # the run stopped to ask: never a success (AG-UI 1.0)
                outcome = RunFinishedInterruptOutcome(interrupts=self._interrupts)
            elif self._pending:
                outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=self._pending)
            elif event.stop_reason in _CUT_SHORT:  # stopped before it completed, not failed
                outcome = RunFinishedCancelledOutcome()
            return self._frames(out) + state + finished_frame(RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome,
                usage=token_usage(event.usage)), self._sse, self._state.max_bytes)
        elif isinstance(event, OutputRetry | AttemptDiscarded):
            data = event_to_dict(event)
            # (superseded: only the partial output; the text goes on, held open as it was)
            if isinstance(event, AttemptDiscarded) and event.reason != "superseded":
                self._close(out, event.reason)
                data["message_ids"] = self._opened.pop(event.iteration, [])
                self._retries += 1
                self._step = None
            return self._frames(out) + custom_frame(CustomEvent(
                name=f"agentflow.{data.pop('type')}", value=data), self._sse, self._state.max_bytes)
        else:  # an event type newer than this table: a custom event
            data = event_to_dict(event)
            out.append(CustomEvent(name=f"agentflow.{data.pop('type')}", value=data))
        return self._frames(out)

    def failure(self, error: BaseException) -> bytes:
        """``RUN_ERROR``, after the end of the open text or reasoning message
        (a client completes a message, ``onNewMessage``, at its end event;
        tool calls are never left open: each is sent whole)."""
        out: list[BaseEvent] = []
        self._close(out)
        detail = error_to_dict(error)["error"]
        return self._frames(out) + error_frame(RunErrorEvent(  # (usage: StructuredOutputError's)
            message=detail["message"], code=detail["type"],
            usage=token_usage(getattr(error, "usage", None))), self._sse, self._state.max_bytes)

    def end(self) -> bytes:
        return b""


def agui_response(
    agent: ReActAgent,
    run: RunInput,
    output: Any = None,
    *,
    strategy: OutputStrategy | StrategyName | None = None,
    store: StateStore | None = None,
    key: str | None = None,
    events: AsyncIterable[Event] | None = None,
    ping_interval: float = 15.0,
    headers: Mapping[str, str] | None = None,
    on_close: Callable[[Outcome], Awaitable[None]] | None = None,
    output_key: str = "output",
    client_tools: bool | Iterable[ClientTool] = True,
    client_tool_limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS,
) -> EventStreamResponse:
    """``agent.stream(run.message, output, state=run.agent_state())`` as an
    AG-UI event stream (or ``events``, e.g. ``stream_with_store(...)``, in its
    place). With ``store`` and ``key`` the call runs on that stored
    conversation and is saved when it completes (``stream_with_store``; a run
    that resumes approvals applies ``run.decisions`` first, one that brings a
    frontend tool's result puts it in place). A client that goes away cancels
    the call (``EventStreamResponse``). The structured output is set in the
    client's state under ``output_key``.

    ``client_tools``: ``True`` (default) offers the frontend's tools
    (``run.tools``) to the model, as AG-UI frontends expect; ``False`` offers
    none; ``ClientTool``s offer those instead (``agentflow.client_tools``),
    within ``client_tool_limits`` (``ClientToolLimits``: how many tools, how
    large and deep their schemas, checked before anything else).

    Raises:
        InvalidInputError: a frontend tool has the name of a server tool, or
            a bad name or parameters JSON Schema (naming the tool), or the
            tools pass one of ``client_tool_limits`` (naming it); a run
            that resumes approvals (``run.decisions``) without ``store`` and
            ``key`` (``check_stateless``).
    """
    offered = offered_tools(run, client_tools)
    agent = with_client_tools(agent, offered, limits=client_tool_limits)
    if store is not None and key is not None:
        events = stream_with_store(agent, store, key, run.message, output, strategy=strategy,
                                   decisions=run.decisions, client_results=run.tool_results())
    elif events is None:
        check_stateless(run)
        events = agent.stream(run.message, output, state=run.agent_state(), strategy=strategy)
    return EventStreamResponse(events, encoder=AGUIEncoder(
                                   run.thread_id, run.run_id, state=run.state,
                                   output_key=output_key),
                               ping_interval=ping_interval, headers=headers,
                               on_close=on_close)
