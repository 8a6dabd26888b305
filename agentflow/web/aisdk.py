"""The Vercel AI SDK's UI message stream protocol (``useChat``,
``readUIMessageStream``) over ``agent.stream``: ``UIMessageEncoder`` turns
agentflow's events into UI message chunks, and ``read_chat_request`` reads
the body ``useChat``'s default transport posts (``{"id", "messages":
[UIMessage...], "trigger", ...}``).

    @app.post("/api/chat")
    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent, run, Contact)

The wire (source: the ``ai`` package's ``uiMessageChunkSchema`` and
``UI_MESSAGE_STREAM_HEADERS``, ai 6.0): SSE frames ``data: <chunk JSON>``,
ended by ``data: [DONE]``, with the header ``x-vercel-ai-ui-message-stream:
v1``. Mapping:

* ``call_started`` -> ``start`` (``messageId``: the call id)
* each reasoning step -> ``start-step`` ... ``finish-step``
* ``thinking_chunk`` -> ``reasoning-start``/``reasoning-delta``/``reasoning-end``
* ``reasoning_chunk`` (the reply text) -> ``text-start``/``text-delta``/``text-end``
* ``tool_use`` -> ``tool-input-start`` + ``tool-input-available``;
  ``tool_result`` -> ``tool-output-available`` (``output``: the result text) or
  ``tool-output-error``. The structured-output engine's own tool is not shown.
* ``output_partial`` -> ``data-output`` with ``id`` ``"output"`` (the client
  replaces the part in place as it grows); the validated output comes last
  in the same part. An output that could not be had -> ``data-output-error``.
* ``approval_requested`` -> ``tool-approval-request`` per call (``approvalId``:
  the tool call id), in the step of its calls (it follows their results);
  the call's placeholder result (``ToolResult.waiting``) is not shown, and
  ``finish`` has ``finishReason`` ``tool-calls``. The client answers with the
  tool part in state ``approval-responded`` (``approval: {id, approved,
  reason}``), which ``read_chat_request`` reads as ``decisions``; the resumed
  stream answers a refused call with ``tool-output-denied`` (the part's
  state ``output-denied``, as the ``ai`` package's own ``streamText`` does),
  not with its result (the model reads ``Refused: <reason>``).
* ``output_retry`` / ``attempt_discarded`` -> transient ``data-output-retry`` /
  ``data-attempt-discarded`` (the wire's JSON of the event). An attempt whose
  text is void (a stream cut and sent again: ``stream_error``,
  ``degradation``) is retracted as far as the protocol lets a server: its
  open text and reasoning parts end with ``providerMetadata``
  ``{"agentflow": {"discarded": <reason>}}`` (the client keeps it on the
  part), the event names every part of the attempt (``part_ids``; a
  reasoning part keeps its id in the message), and the retry's parts take
  new ids (``...-retry<n>``), so they are new parts, never appended to the
  abandoned ones; ``read_chat_request`` leaves flagged parts out of the
  history a client sends back. A part once ended cannot be flagged (the
  client refuses a second ``text-end``, and a text part keeps no id), so a
  step's text parts stay open until its attempt cannot be discarded (its
  tool calls, the next step, the end): a thought between two pieces of text
  leaves the first part open beside the next ones, not ended; a
  ``superseded`` partial output (a later JSON value in the text) voids the
  output so far only, and the text part stays open through it. (``ai`` 7's
  ``reset-step`` chunk, which drops the parts since the step's start, is not
  sent: ``ai`` 6's chunk schema fails the whole stream on a type it does not
  know.)
* client-side tools (``ui_message_stream_response(..., client_tools=...)``,
  ``agentflow.client_tools``): a call of one is ``tool-input-start`` +
  ``tool-input-available`` and the stream finishes (``finishReason``
  ``tool-calls``); the client runs it (``onToolCall``, ``addToolOutput``) and
  sends the messages again (``sendAutomaticallyWhen:
  lastAssistantMessageIsCompleteWithToolCalls``), the tool part in state
  ``output-available``; ``read_chat_request`` reads that as a run that
  continues the same assistant message.
* ``complete`` -> ``finish`` (``finishReason`` as ``finish_reason``
  decides: ``stop``, ``length`` for a text answer the token limit cut,
  ``content-filter`` for one the vendor's filter or the model's refusal
  stopped, ``tool-calls``, ``error`` for ``output_failed``, ``other`` for
  ``max_iters``/``stopped``; the ``messageMetadata`` holds ``stop_reason``
  and ``usage``)
* a failed call -> ``error`` (``errorText`` ``"<ErrorType>: <message>"``;
  only agentflow's own errors carry their message, through ``mask_secrets``),
  the last chunk before ``[DONE]``, with no ``finish``: the ``ai`` package's
  own ``createUIMessageStream`` ends a failed stream so, and its chat then
  has status ``error``. Every failure ends so: one before any event (no
  ``start`` then), a provider error mid-stream (the open text and reasoning
  parts are ended first), a tool past its retries, an output the model never
  got valid, an exception in middleware. A client that goes away gets
  nothing more: the call is cancelled.

A tool's result (``tool-output-available``'s ``output``,
``tool-output-error``'s ``errorText``) is shown cut at ``MAX_SHOWN_RESULT``
characters with a note saying how many more the model read, as AG-UI's
``TOOL_CALL_RESULT`` is (``_frame_caps.shown_result``): the chat keeps every
part in memory and posts the whole history back with each message, so an
MCP server's file read of 100 MB would otherwise reach the page, and come
back, whole. A frame that carries an error (``error``, ``data-output-error``,
and the ``message`` of ``data-output-retry`` / ``data-attempt-discarded``)
is at most ``max_error_bytes`` of JSON: a longer error text is cut with a
marker saying how much is not shown (``_frame_caps``), the frame never left
out. A JSON value the chat keeps in a part, a tool's input
(``tool-input-available``'s ``input``) and the output (``data-output``'s
``data``, each partial and the validated one), is capped by the same
``MAX_SHOWN_RESULT`` characters and never cut: over it, the marker
``{"not_shown": {"characters": N, "limit": MAX_SHOWN_RESULT}}`` stands in
its place (``_frame_caps.shown_json``), and the last ``data-output`` is that
marker, so no partial is left standing for the output. A history the client
sends back holds the marker as the call's input; a stored conversation
(``store``/``key``) keeps the whole. A client-side tool's input is sent
whole (the client runs the tool on it: ``whole_inputs``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Collection, Iterable, Mapping
from typing import Any

from agentflow.agent import ReActAgent
from agentflow.approvals import Refuse
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
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.output.reminders import TOOL_NAME as OUTPUT_TOOL
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.web._aisdk_frames import error_frame as _error_frame
from agentflow.web._aisdk_frames import finish_reason as _finish_reason
from agentflow.web._aisdk_frames import frame as _frame
from agentflow.web._aisdk_input import read_chat_request
from agentflow.web._blocks import discarded as _discarded
from agentflow.web._frame_caps import (
    MAX_ERROR_BYTES,
    MAX_SHOWN_RESULT,
    json_size,
    shown_json,
    shown_result,
)
from agentflow.web.run_input import ClientTool, RunInput, check_stateless, offered_tools
from agentflow.web.sse import EventStreamResponse, Outcome
from agentflow.web.store import StateStore, stream_with_store
from agentflow.web.wire import PING_FRAME, error_to_dict, event_to_dict

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "UIMessageEncoder", "read_chat_request",
           "ui_message_stream_response"]

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {"x-vercel-ai-ui-message-stream": "v1"}

_JSON_PARTS = {"tool-input-available": "input", "data-output": "data"}
"""The chunks that carry a JSON value the chat keeps, and its key."""


class UIMessageEncoder:
    """One UI message stream (one assistant message).

    Args:
        message_id: the assistant message the stream continues (a resumed
            approval, a client tool's result: the client keeps building that
            message only when the ``start`` chunk names it); default: the call id.
        refused: the ids of calls the person refused (a resumed approval's
            ``Refuse`` decisions): their results are ``tool-output-denied``.
        max_error_bytes: the most bytes of JSON of a chunk that carries an
            error (``error``, ``data-output-error``, a retry's ``message``):
            its text is cut to fit.
        whole_inputs: the names of tools whose input is sent whole (the
            client-side tools: the client runs them on it); any other tool's
            input, and the output, over ``MAX_SHOWN_RESULT`` characters of
            JSON is shown as a marker (``_frame_caps.shown_json``).

    A tool result is shown (``tool-output-available`` / ``tool-output-error``)
    unless its call waits (``ToolResult.waiting``, set by the loop from the
    held calls' ids, never read from the result's text): for a person's
    approval (the ``tool-approval-request`` asks) or for the client's output.
    """

    media_type = "text/event-stream"
    headers = UI_MESSAGE_STREAM_HEADERS
    ping = PING_FRAME

    def __init__(self, message_id: str | None = None, *, refused: Collection[str] = (),
                 max_error_bytes: int = MAX_ERROR_BYTES,
                 whole_inputs: Collection[str] = ()) -> None:
        self.message_id = message_id
        self.refused = frozenset(refused)
        self.max_error_bytes = max_error_bytes
        self.whole_inputs = frozenset(whole_inputs)
        self._call = "msg"
        self._step: int | None = None       # the open step's iteration
        self._text: str | None = None       # the open text part's id
        self._reasoning: str | None = None  # the open reasoning part's id
        self._held: list[str] = []          # text parts the attempt's thinking interrupted
        self._hidden: set[str] = set()
        self._results = False               # the open step's tool results came
        self._retries = 0                   # attempts retracted: the retries' ids differ
        self._opened: dict[int, list[str]] = {}  # the parts each step's attempt opened

    def _close_parts(self, out: list[dict[str, Any]], discarded: str | None = None) -> None:
        """End the open parts, the held text parts too (``discarded``:
        flagged so, as void)."""
        flag = {"providerMetadata": _discarded(discarded)} if discarded else {}
        if self._text is not None:
            self._held.append(self._text)
            self._text = None
        out.extend({"type": "text-end", "id": part, **flag} for part in self._held)
        self._held.clear()
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning, **flag})
            self._reasoning = None

    def _open(self, iteration: int, kind: str) -> str:
        """A new part's id for step ``iteration``, remembered as the attempt's
        (unique: the step's text parts may be open at once)."""
        retry = f"-retry{self._retries}" if self._retries else ""
        part_id = f"{self._call}-{iteration}-{kind}{retry}"
        opened = self._opened.setdefault(iteration, [])
        if part_id in opened:
            part_id = f"{part_id}-{sum(p.startswith(part_id) for p in opened) + 1}"
        opened.append(part_id)
        return part_id

    def _enter_step(self, out: list[dict[str, Any]], iteration: int | None) -> None:
        """Open a step for an event of reasoning step ``iteration`` (``None``:
        the current one; after tool results, the next)."""
        if self._step is not None and not self._results and (
                iteration is None or iteration == self._step):
            return
        self._results = False
        if self._step is not None:
            self._close_parts(out)
            out.append({"type": "finish-step"})
        self._step = iteration if iteration is not None else (self._step or 0) + 1
        out.append({"type": "start-step"})

    def _leave_step(self, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        if self._step is not None:
            out.append({"type": "finish-step"})
            self._step = None

    def _frame(self, chunk: dict[str, Any]) -> bytes:
        """``chunk``'s frame, a JSON value in it over ``MAX_SHOWN_RESULT``
        characters shown as a marker (``shown_json``; measured again only
        when the frame is over: a character is one byte of JSON or more)."""
        out = _frame(chunk)
        key = _JSON_PARTS.get(chunk["type"])
        if key is None or json_size(out) <= MAX_SHOWN_RESULT or (
                chunk["type"] == "tool-input-available"
                and chunk["toolName"] in self.whole_inputs):
            return out
        return _frame({**chunk, key: shown_json(chunk[key])})

    def encode(self, event: Event) -> bytes:
        out: list[dict[str, Any]] = []
        if isinstance(event, ReasoningChunk):
            if not event.text:
                return b""
            self._enter_step(out, event.iteration)
            if self._reasoning is not None:  # (its id names it: ended now, held text kept)
                out.append({"type": "reasoning-end", "id": self._reasoning})
                self._reasoning = None
            if self._text is None:
                self._text = self._open(event.iteration, "text")
                out.append({"type": "text-start", "id": self._text})
            out.append({"type": "text-delta", "id": self._text, "delta": event.text})
        elif isinstance(event, ThinkingChunk):
            if not event.text:
                return b""
            self._enter_step(out, event.iteration)
            if self._text is not None:  # held open: this attempt may yet be discarded
                self._held.append(self._text)
                self._text = None
            if self._reasoning is None:
                self._reasoning = self._open(event.iteration, "reasoning")
                out.append({"type": "reasoning-start", "id": self._reasoning})
            out.append({"type": "reasoning-delta", "id": self._reasoning, "delta": event.text})
        elif isinstance(event, OutputPartial):
            self._enter_step(out, None)
            out.append({"type": "data-output", "id": "output",
                        "data": event_to_dict(event)["data"]})
        elif isinstance(event, ToolUse):
            self._enter_step(out, None)
            self._close_parts(out)
            if event.name == OUTPUT_TOOL:
                self._hidden.add(event.id)
            else:
                tool_input = event_to_dict(event)["input"]
                out.append({"type": "tool-input-start", "toolCallId": event.id,
                            "toolName": event.name})
                out.append({"type": "tool-input-available", "toolCallId": event.id,
                            "toolName": event.name, "input": tool_input})
        elif isinstance(event, ApprovalRequested):
            if self._step is None:  # (it follows the step's results: the same step)
                self._enter_step(out, None)
            for call in event.calls:  # the call's input went out with its tool_use
                self._hidden.add(call.id)  # its placeholder result is not shown
                out.append({"type": "tool-approval-request", "approvalId": call.id,
                            "toolCallId": call.id})
        elif isinstance(event, ToolResult):
            if event.waiting is None and event.id not in self._hidden:
                self._results = True
                if event.id in self.refused:
                    out.append({"type": "tool-output-denied", "toolCallId": event.id})
                elif event.is_error:
                    out.append({"type": "tool-output-error", "toolCallId": event.id,
                                "errorText": shown_result(event.output)})
                else:
                    out.append({"type": "tool-output-available", "toolCallId": event.id,
                                "output": shown_result(event.output)})
        elif isinstance(event, CallStarted):
            self._call = event.call_id
            out.append({"type": "start", "messageId": self.message_id or event.call_id})
        elif isinstance(event, Complete):
            wire = event_to_dict(event)
            self._close_parts(out)
            if wire["output"] is not None:
                if self._step is None:
                    self._enter_step(out, None)
                out.append({"type": "data-output", "id": "output", "data": wire["output"]})
            frames = b"".join(map(self._frame, out))
            out = []
            if wire["error"] is not None and event.stop_reason not in SUSPENDED:
                frames += _error_frame({"type": "data-output-error", "id": "output-error",
                                        "data": wire["error"]}, ("data", "message"),
                                       self.max_error_bytes)
            self._leave_step(out)
            out.append({"type": "finish",
                        "finishReason": _finish_reason(event.stop_reason, event.finish_reason),
                        "messageMetadata": {"stop_reason": wire["stop_reason"],
                                            "usage": wire["usage"]}})
            return frames + b"".join(map(self._frame, out))
        else:  # output_retry, attempt_discarded, or an event type newer than this table
            data = event_to_dict(event)
            # (superseded: only the partial output; the text goes on, held open as it was)
            if isinstance(event, AttemptDiscarded) and event.reason != "superseded":
                self._close_parts(out, event.reason)
                data["part_ids"] = self._opened.pop(event.iteration, [])
                self._retries += 1
            name = data.pop("type").replace("_", "-")
            chunk = {"type": f"data-{name}", "data": data, "transient": True}
            if isinstance(data.get("message"), str):  # (output_retry, attempt_discarded)
                return b"".join(map(self._frame, out)) + _error_frame(
                    chunk, ("data", "message"), self.max_error_bytes)
            out.append(chunk)
        return b"".join(map(self._frame, out))

    def failure(self, error: BaseException) -> bytes:
        detail = error_to_dict(error)["error"]
        out: list[dict[str, Any]] = []
        self._close_parts(out)
        return b"".join(map(self._frame, out)) + _error_frame(
            {"type": "error", "errorText": f"{detail['type']}: {detail['message']}"},
            ("errorText",), self.max_error_bytes)

    def end(self) -> bytes:
        return b"data: [DONE]\n\n"


def ui_message_stream_response(
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
    client_tools: bool | Iterable[ClientTool] = True,
    client_tool_limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS,
) -> EventStreamResponse:
    """``agent.stream(run.message, output, state=run.agent_state())`` as a UI
    message stream (or ``events``, e.g. ``stream_with_store(...)``, in its
    place). With ``store`` and ``key`` the call runs on that stored
    conversation and is saved when it completes (``stream_with_store``; a run
    that resumes approvals applies ``run.decisions`` first, one that brings a
    client-side tool's output puts it in place). A client that goes away
    cancels the call.

    ``client_tools``: the client-side tools offered to the model beside the
    agent's (``agentflow.client_tools``). ``True`` (default): the tools the
    request declared (``run.tools``; ``useChat``'s own body declares none);
    ``False``: none; ``ClientTool``s: those (the AI SDK's way: the server
    declares the tools the client runs with ``onToolCall``/``addToolOutput``).
    A call of one streams ``tool-input-start``/``tool-input-available`` and
    the stream finishes (``finishReason`` ``tool-calls``). The tools are
    checked within ``client_tool_limits`` (``ClientToolLimits``: how many,
    how large and deep their schemas, before anything else).

    Raises:
        InvalidInputError: a client tool has the name of a server tool, or a
            bad name or parameters JSON Schema (naming the tool), or the tools
            pass one of ``client_tool_limits`` (naming it); a run that resumes
            approvals (``run.decisions``) without ``store`` and ``key``
            (``check_stateless``).
    """
    offered = offered_tools(run, client_tools)
    agent = with_client_tools(agent, offered, limits=client_tool_limits)
    if store is not None and key is not None:
        events = stream_with_store(agent, store, key, run.message, output, strategy=strategy,
                                   decisions=run.decisions, client_results=run.tool_results())
    elif events is None:
        check_stateless(run)
        events = agent.stream(run.message, output, state=run.agent_state(), strategy=strategy)
    continued = (run.extra.get("message_id")
                 if run.decisions is not None or run.message is None else None)
    refused = [i for i, decision in (run.decisions or {}).items() if isinstance(decision, Refuse)]
    return EventStreamResponse(events, encoder=UIMessageEncoder(
                                   continued if isinstance(continued, str) else None,
                                   refused=refused,
                                   whole_inputs=[tool.name for tool in offered]),
                               ping_interval=ping_interval,
                               headers=headers, on_close=on_close)
