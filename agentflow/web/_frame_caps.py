"""The bound on a frame that carries an error, on either UI protocol: an
error's text (a tool's or a server's message quoted whole, a provider's
error body) can be larger than a client reads in one event
(``@ag-ui/client``'s SSE reader fails the whole run on one event over 10
MB), and the event that carries it is often the stream's last: it is never
left out, its text is cut with a marker saying how much is not shown.

====================================  ======================================
the frame                             over the cap
====================================  ======================================
AG-UI ``RUN_FINISHED``                what ``_agui_caps.finished_frame``
                                      leaves out first, then
                                      ``result.error.message`` cut
AG-UI ``RUN_ERROR``                   ``message`` cut
AI SDK ``error``                      ``errorText`` cut
AI SDK ``data-output-error``          ``data.message`` cut
AG-UI ``CUSTOM``, AI SDK ``data-*``   a retry's or a discarded attempt's
                                      ``message`` (a vendor's error quoted)
                                      cut
====================================  ======================================
"""

from __future__ import annotations

__all__ = ["MAX_ERROR_BYTES", "cut_text"]

MAX_ERROR_BYTES = 8 * 1024 * 1024
"""The most bytes of a frame that carries an error (under the 10 MB on which
``@ag-ui/client``'s SSE reader fails a run; the same as ``MAX_SHOWN_STATE``)."""

_MARKER_BYTES = 64
"""At most the JSON bytes of the marker ``cut_text`` ends a text with."""


def cut_text(text: str, over: int) -> str:
    """``text`` made at least ``over`` bytes shorter as JSON (every character is
    one byte of JSON or more): its end cut, and a marker saying how many
    characters are not shown put in its place. ``over <= 0``: ``text`` as it
    is. A text shorter than ``over`` plus the marker becomes the marker only."""
    if over <= 0:
        return text
    cut = min(len(text), over + _MARKER_BYTES)
    return f"{text[:len(text) - cut]}\n[... {cut:,} more characters not shown]"
