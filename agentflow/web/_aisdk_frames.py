"""The UI message stream's frames (``aisdk.UIMessageEncoder``'s): one
chunk as an SSE ``data:`` frame, a chunk that carries an error bounded by the
frame cap (``_frame_caps``), and the ``finish`` chunk's ``finishReason``.
"""

from __future__ import annotations

from typing import Any

from agentflow._clean_text import json_bytes
from agentflow.web._frame_caps import cut_at, frame_within

__all__ = ["error_frame", "finish_reason", "frame"]

_FINISH = {"completed": "stop", "structured_output": "stop", "output_failed": "error",
           "max_iters": "other", "stopped": "other", "approval_required": "tool-calls",
           "client_tool_calls": "tool-calls"}


def finish_reason(stop_reason: str, last_reply: str | None) -> str:
    """The ``finish`` chunk's ``finishReason`` for a call that ended with
    ``stop_reason``, its last reply with ``last_reply``
    (``Complete.finish_reason``), as the ``ai`` package's own providers map
    their vendors' reasons:

    ===========================  ====================  ===================
    ``last_reply``               ``stop_reason``       ``finishReason``
    ===========================  ====================  ===================
    ``content_filter``,          any                   ``content-filter``
    ``refusal``
    ``length``                   one that is ``stop``  ``length``
    anything else                (``_FINISH``)         ``stop``,
                                                       ``tool-calls``,
                                                       ``error``, ``other``
    ===========================  ====================  ===================
    """
    if last_reply in ("content_filter", "refusal"):
        return "content-filter"
    finish = _FINISH.get(stop_reason, "other")
    return "length" if finish == "stop" and last_reply == "length" else finish


def frame(chunk: dict[str, Any]) -> bytes:
    """``chunk`` as one SSE frame: ``data: <JSON>`` and a blank line."""
    return b"data: " + json_bytes(chunk) + b"\n\n"


def error_frame(chunk: dict[str, Any], text: tuple[str, ...], max_bytes: int) -> bytes:
    """``chunk``'s frame, the error text at the key path ``text`` cut to keep
    its JSON within ``max_bytes`` (``chunk`` is changed when it is over)."""
    return frame_within(lambda: frame(chunk), lambda over: cut_at(chunk, text, over), max_bytes)
