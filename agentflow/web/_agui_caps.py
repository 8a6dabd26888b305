"""What an AG-UI stream sends of a value larger than ``@ag-ui/client`` reads
in one event: its SSE reader fails the whole run on one event over 10 MB
("SSE buffer size exceeded maximum limit of 10 MB"). A tool's output (an
MCP server's file read), a tool call's input, the structured output or the
reply text can be larger. The policy, per event:

=========================  ===================================================
the event                  over its cap
=========================  ===================================================
``TOOL_CALL_RESULT``       text: cut at ``MAX_SHOWN_RESULT`` characters, a
                           note saying how many more the model read
                           (``_frame_caps.shown_result``, as the AI SDK's
                           ``tool-output-*``)
``TOOL_CALL_ARGS``         split into several ``TOOL_CALL_ARGS`` of at most
                           ``MAX_SHOWN_RESULT`` characters (the protocol's
                           own way: the client joins the deltas), nothing lost
``STATE_SNAPSHOT`` /       JSON: not sent; a ``CUSTOM``
``STATE_DELTA``            ``agentflow.state_not_shown`` event says so
                           (``_agui_state``)
``RUN_FINISHED``           JSON: ``result["output"]``, then ``result["text"]``,
                           then each interrupt's ``metadata["input"]`` set to
                           ``null`` until the event fits, and named in
                           ``result["not_shown"]``: ``{"fields": [...],
                           "bytes": <the whole event's>, "limit": ...}``
                           (it carries no error: a failed run ends with
                           ``RUN_ERROR``)
``RUN_ERROR``              ``message`` cut with a marker (``_frame_caps``)
``CUSTOM``                 ``value["message"]`` (``agentflow.output_retry``,
                           ``agentflow.attempt_discarded``: a vendor's error
                           quoted) cut with a marker
=========================  ===================================================

JSON is never cut: a value is sent whole or not at all, and whatever is not
sent is named; only an error's text is cut, as the run's last event is
never left out. The JSON caps are ``MAX_SHOWN_STATE`` bytes (8 MiB, the
encoder's ``max_state_bytes``): the state and ``RUN_FINISHED`` both carry the
output. What ``RUN_FINISHED`` leaves out the client has had otherwise (the
text streamed in ``TEXT_MESSAGE_CONTENT``, the inputs in ``TOOL_CALL_ARGS``)
or can have from the server (the output, in a stored conversation).
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import CustomEvent, RunErrorEvent, RunFinishedEvent
from ag_ui.encoder import EventEncoder

from agentflow.web._frame_caps import (
    MAX_SHOWN_RESULT,
    cut_at,
    cut_text,
    frame_within,
    json_size,
    shown_result,
)

__all__ = ["MAX_SHOWN_RESULT", "args_deltas", "custom_frame", "error_frame", "finished_frame",
           "shown_result"]


def args_deltas(arguments: str) -> list[str]:
    """A tool call's JSON arguments as the ``TOOL_CALL_ARGS`` deltas that send
    them (one, unless longer than ``MAX_SHOWN_RESULT`` characters)."""
    return [arguments[i:i + MAX_SHOWN_RESULT]
            for i in range(0, len(arguments), MAX_SHOWN_RESULT)] or [""]


_DROPPED = ("output", "text")
"""The result's fields left out over the cap, in this order."""


def finished_frame(event: RunFinishedEvent, encoder: EventEncoder, max_bytes: int) -> bytes:
    """``event``'s SSE frame, within ``max_bytes`` of JSON as the module
    docstring's table says (``event`` is changed when it is over)."""
    frame = encoder.encode(event).encode()
    if (size := json_size(frame)) <= max_bytes:
        return frame
    result: dict[str, Any] = dict(event.result) if isinstance(event.result, dict) else {}
    fields: list[str] = []
    steps: list[tuple[str, Any]] = [(name, None) for name in _DROPPED
                                    if result.get(name) is not None]
    interrupts = getattr(event.outcome, "interrupts", None) or []
    steps += [("interrupts.metadata.input", interrupt) for interrupt in interrupts
              if isinstance(interrupt.metadata, dict) and "input" in interrupt.metadata]
    for name, interrupt in steps:
        if interrupt is None:
            result[name] = None
        else:
            interrupt.metadata = {**interrupt.metadata, "input": None}
        if name not in fields:
            fields.append(name)
        event.result = {**result, "not_shown": {"fields": fields, "bytes": size,
                                                "limit": max_bytes}}
        frame = encoder.encode(event).encode()
        if json_size(frame) <= max_bytes:
            break
    return frame


def error_frame(event: RunErrorEvent, encoder: EventEncoder, max_bytes: int) -> bytes:
    """``event``'s SSE frame, its ``message`` cut to keep the frame within
    ``max_bytes`` of JSON (``event`` is changed when it is over)."""
    def shorten(over: int) -> bool:
        event.message = cut_text(event.message, over)
        return True

    return frame_within(lambda: encoder.encode(event).encode(), shorten, max_bytes)


def custom_frame(event: CustomEvent, encoder: EventEncoder, max_bytes: int) -> bytes:
    """``event``'s SSE frame, its ``value["message"]`` cut to keep the frame
    within ``max_bytes`` of JSON (``event`` is changed when it is over)."""
    return frame_within(lambda: encoder.encode(event).encode(),
                        lambda over: cut_at(event.value, ("message",), over), max_bytes)
