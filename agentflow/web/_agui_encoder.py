"""The AG-UI event stream's encoder: ``AGUIEncoder`` (re-exported by
``agentflow.web.agui``, whose docstring is the event mapping it follows)
turns agentflow's events into AG-UI events' SSE frames, one stream's state
(the open messages, the interrupts, the frontend tools' calls) held between
them.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from pydantic_core import PydanticSerializationError

from agentflow._arguments import check_int
from agentflow._clean_text import clean_data, json_bytes
from agentflow._secrets import mask_secrets
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
from agentflow.web._agui_caps import (
    args_deltas,
    custom_frame,
    error_frame,
    finished_frame,
    shown_result,
)
from agentflow.web._agui_input import APPROVAL_RESPONSE_SCHEMA
from agentflow.web._agui_state import MAX_SHOWN_STATE, StateUpdates
from agentflow.web._agui_usage import token_usage
from agentflow.web._blocks import discarded as _discarded
from agentflow.web.wire import PING_FRAME, error_to_dict, event_to_dict

__all__ = ["AGUIEncoder"]

_RunOutcome = (RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
              | RunFinishedCancelledOutcome | None)

_CUT_SHORT: frozenset[StopReason] = frozenset({"stopped", "max_iters"})
"""Stop reasons of a call its runner ended before it completed, without a
failure (a middleware's ``post_acting`` stop, the ``max_iters`` limit):
AG-UI 1.0's ``cancelled`` outcome ("stopped before it completed, by whoever
was running it, and did not fail"), never read as a success."""


class _Frames(EventEncoder):
    """The package's ``EventEncoder``, but a frame never fails on a text holding
    a lone UTF-16 surrogate (a tool's output read with ``os.fsdecode``, a
    vendor's error quoting an emoji cut in two; pydantic refuses to write it
    as UTF-8): such an event is written with U+FFFD in its place
    (``json_bytes``), as agentflow's own wire and the AI SDK's are. An
    event that could not be written would fail the run, or, as the run's
    ``RUN_ERROR``, end it silently."""

    def encode(self, event: BaseEvent) -> str:
        try:
            return super().encode(event)
        except PydanticSerializationError:
            return f"data: {json_bytes(event.model_dump(mode='json', by_alias=True)).decode()}\n\n"


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

    Raises:
        ArgumentTypeError / ArgumentValueError: ``max_state_bytes`` is no int
            >= 1 (a ``TypeError`` / ``ValueError``).

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
        check_int("max_state_bytes", max_state_bytes, 1)
        self.thread_id, self.run_id = thread_id, run_id
        # (a client's lone surrogate, "\\ud83d" from an emoji cut in two, repaired once: the
        # package's encoder refuses it in every snapshot)
        self.state = clean_data(dict(state)) if isinstance(state, Mapping) else {}
        self.output_key = output_key
        self._state = StateUpdates(self.state, output_key, max_state_bytes)
        self._sse = _Frames()
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
                    response_schema=dict(APPROVAL_RESPONSE_SCHEMA),
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
            elif (error := result["error"]) is not None:  # no output: a failed run (AG-UI 1.0)
                return self._frames(out) + state + self._run_error(
                    mask_secrets(error["message"]), error["type"], event.usage)
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
        detail = error_to_dict(error)["error"]  # (usage: StructuredOutputError's)
        return self._frames(out) + self._run_error(detail["message"], detail["type"],
                                                   getattr(error, "usage", None))

    def _run_error(self, message: str, code: str, usage: Any) -> bytes:
        return error_frame(RunErrorEvent(message=message, code=code, usage=token_usage(usage)),
                           self._sse, self._state.max_bytes)

    def end(self) -> bytes:
        return b""
