"""The caps both UI protocols share (each protocol's own table is in its
module: ``_agui_caps``, ``aisdk``). A value can be larger than a client
takes in one event (``@ag-ui/client``'s SSE reader fails the whole run on
one event over 10 MB; the ``ai`` package's chat keeps every part in memory
and posts the whole history back with each message), so:

====================================  ======================================
the value                             over its cap
====================================  ======================================
a tool's result (AG-UI                text: cut at ``MAX_SHOWN_RESULT``
``TOOL_CALL_RESULT``; AI SDK          characters, a note saying how many
``tool-output-available``,            more the model read (``shown_result``)
``tool-output-error``)
an error's text, in the frame that    cut with a marker saying how much is
carries it (AG-UI ``RUN_ERROR``, a    not shown, to keep the frame within
``CUSTOM`` retry's ``message``; AI    ``MAX_ERROR_BYTES`` of JSON
SDK ``error``'s ``errorText``,        (``frame_within``, ``cut_text``): the
``data-output-error``'s and a         frame is often the stream's last and
``data-*`` retry's ``message``)       is never left out
a JSON value the AI SDK chat keeps    JSON is never cut: over
in a part (``tool-input-available``'s ``MAX_SHOWN_RESULT`` characters, the
``input``, ``data-output``'s          value is a marker in its place,
``data``)                             ``{"not_shown": {"characters": N,
                                      "limit": ...}}`` (``shown_json``)
====================================  ======================================

Both protocols frame an event as SSE ``data: <JSON>`` and a blank line:
``frame_within`` measures the JSON, whatever made it (the ``ag-ui-protocol``
package's encoder, or ours for the AI SDK's chunks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agentflow._clean_text import json_bytes
from agentflow.documents.names import printable

__all__ = ["MAX_ERROR_BYTES", "MAX_SHOWN_RESULT", "cut_at", "cut_text", "frame_within",
           "json_size", "shown_input", "shown_json", "shown_result"]

MAX_ERROR_BYTES = 8 * 1024 * 1024
"""The most bytes of a frame that carries an error (under the 10 MB on which
``@ag-ui/client``'s SSE reader fails a run; the same as ``MAX_SHOWN_STATE``)."""

MAX_SHOWN_RESULT = 1_000_000
"""The most characters of a tool result a client is shown, and of one AG-UI
``TOOL_CALL_ARGS`` delta (at most 6 bytes a character in JSON: under
``@ag-ui/client``'s 10 MB); the model reads the whole result."""

_MARKER_BYTES = 64
"""At most the JSON bytes of the marker ``cut_text`` ends a text with."""

_SSE_FRAMING = len(b"data: ") + len(b"\n\n")
"""The bytes of a ``data:`` frame around its JSON."""


def shown_result(output: str) -> str:
    """A tool's result as a client is shown it: at most ``MAX_SHOWN_RESULT``
    characters, a longer one cut with a note saying how much is not shown."""
    if len(output) <= MAX_SHOWN_RESULT:
        return output
    return (f"{output[:MAX_SHOWN_RESULT]}\n[... {len(output) - MAX_SHOWN_RESULT:,} more "
            "characters not shown here; the model read the whole result when the tool ran, "
            "but a history the client sends back holds only this]")


def shown_input(value: Any, limit: int = 200) -> str:
    """A value a client sent (a header, a payload), quoted for an error
    message: its JSON through ``agentflow.documents.names.printable`` (a
    control or bidi character, a line separator escaped: the message is
    logged and shown), cut to ``limit`` characters and ``...``."""
    text = printable(json.dumps(value, ensure_ascii=False, default=repr))
    return text if len(text) <= limit else text[:limit] + "..."


def shown_output(output: str, is_json: bool = False) -> Any:
    """A tool's result as an AI SDK part's ``output``, as a ``streamText``
    tool's is the value its ``execute`` returned: a result that is the JSON of
    the value the tool returned (``is_json``: a Python tool's number, dict,
    model or ``None``, an MCP server's structured content) is that value, so
    a UI reads ``part.output.field`` and a number stays a number; a text that
    is a JSON object or array (a tool that wrote its JSON) is that object or
    array; any other text (``"12"`` from a tool that returned the string) as
    it is, through ``shown_result``, as is a value over ``MAX_SHOWN_RESULT``
    characters. A history sent back gives the model that value as JSON text
    again (``_blocks.tool_result_msg``)."""
    if len(output) <= MAX_SHOWN_RESULT and (is_json or output.lstrip()[:1] in ("{", "[")):
        try:
            value = json.loads(output)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            return output
        if is_json or isinstance(value, dict | list):
            return value
    return shown_result(output)


def shown_json(value: Any) -> Any:
    """A JSON value as a client is shown it: ``value`` itself when its JSON is
    at most ``MAX_SHOWN_RESULT`` characters, else the marker ``{"not_shown":
    {"characters": <its JSON's>, "limit": MAX_SHOWN_RESULT}}`` in its place
    (JSON cut anywhere is no longer JSON)."""
    characters = len(json_bytes(value).decode())
    if characters <= MAX_SHOWN_RESULT:
        return value
    return {"not_shown": {"characters": characters, "limit": MAX_SHOWN_RESULT}}


def cut_text(text: str, over: int) -> str:
    """``text`` made at least ``over`` bytes shorter as JSON (every character is
    one byte of JSON or more): its end cut, and a marker saying how many
    characters are not shown put in its place. ``over <= 0``: ``text`` as it
    is. A text shorter than ``over`` plus the marker becomes the marker only."""
    if over <= 0:
        return text
    cut = min(len(text), over + _MARKER_BYTES)
    return f"{text[:len(text) - cut]}\n[... {cut:,} more characters not shown]"


def cut_at(holder: Any, path: Sequence[str], over: int) -> bool:
    """Cut the text at the key path ``path`` in ``holder`` (nested dicts, in
    place) at least ``over`` bytes shorter (``cut_text``); ``False`` when
    there is no text there (nothing is changed)."""
    *keys, last = path
    for key in keys:
        holder = holder.get(key) if isinstance(holder, dict) else None
    if not (isinstance(holder, dict) and isinstance(holder.get(last), str)):
        return False
    holder[last] = cut_text(holder[last], over)
    return True


def json_size(frame: bytes) -> int:
    """The bytes of JSON in an SSE ``data:`` frame."""
    return len(frame) - _SSE_FRAMING


def frame_within(encode: Callable[[], bytes], shorten: Callable[[int], bool],
                 max_bytes: int, frame: bytes | None = None) -> bytes:
    """The SSE frame ``encode()`` makes (``frame``: the one it made already),
    within ``max_bytes`` of JSON: when it is over, ``shorten(over)`` cuts the
    event's error text by at least ``over`` bytes (``cut_text``, ``cut_at``;
    in place) and the frame is made again; ``shorten`` returns ``False``
    when the event holds no such text (the frame is sent as it is)."""
    if frame is None:
        frame = encode()
    if (over := json_size(frame) - max_bytes) > 0 and shorten(over):
        frame = encode()
    return frame
