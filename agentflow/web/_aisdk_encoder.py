"""The AI SDK UI message stream's encoder: ``UIMessageEncoder`` (re-exported by
``agentflow.web.aisdk``, whose docstring is the chunk mapping it follows)
turns agentflow's events into UI message chunks' SSE frames, one stream's
state (the open text and reasoning parts, the step, the attempt's part ids)
held between them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

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
from agentflow.web._aisdk_frames import error_frame as _error_frame
from agentflow.web._aisdk_frames import finish_reason as _finish_reason
from agentflow.web._aisdk_frames import frame as _frame
from agentflow.web._blocks import discarded as _discarded
from agentflow.web._frame_caps import (
    MAX_ERROR_BYTES,
    MAX_SHOWN_RESULT,
    json_size,
    shown_json,
    shown_output,
    shown_result,
)
from agentflow.web.wire import PING_FRAME, error_to_dict, event_to_dict

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "UIMessageEncoder"]

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
                                "output": shown_output(event.output, event.is_json)})
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
