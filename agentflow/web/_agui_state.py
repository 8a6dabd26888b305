"""The client's state as an AG-UI stream updates it: the structured output
set under one key, as it grows and once validated.

The AG-UI state events (``ag_ui.core``): ``STATE_SNAPSHOT`` replaces the
client's state, ``STATE_DELTA`` changes it with a JSON Patch (RFC 6902;
``@ag-ui/client`` applies it). The decision, per update:

==============================  ===========================================
the state to send               sent as
==============================  ===========================================
the run's first                 ``STATE_SNAPSHOT`` (the spec: a snapshot
                                establishes the state)
a later one                     ``STATE_DELTA`` from the last state sent
                                (a partial output grows: a snapshot per
                                chunk was the whole output each time);
                                a snapshot when that is no larger
over ``max_bytes`` either way   not sent: a ``CUSTOM`` event
                                ``agentflow.state_not_shown`` (value:
                                ``key``, ``bytes``, ``limit``) says so, and
                                the next update is a delta from the state
                                the client has
==============================  ===========================================

``max_bytes`` is one row of the stream's caps (``_agui_caps``): no event
the official client cannot read (its SSE reader fails the whole run on one
event over 10 MB); the validated output is also in ``RUN_FINISHED``'s
result, under the same cap.
"""

from __future__ import annotations

from typing import Any

from agentflow._arguments import check_int
from agentflow._clean_text import json_bytes
from agentflow.web._json_patch import json_patch

__all__ = ["MAX_SHOWN_STATE", "StateUpdates"]

MAX_SHOWN_STATE = 8 * 1024 * 1024
"""The most bytes of one ``STATE_SNAPSHOT``/``STATE_DELTA`` event's JSON:
under the 10 MB on which ``@ag-ui/client``'s SSE reader fails a run."""


class StateUpdates:
    """The state events of one run (the module docstring's table).

    Args:
        state: the client's state, as it sent it (other keys sent back unchanged).
        key: the key the output is set under.
        max_bytes: the most bytes of one state event's JSON.
    """

    def __init__(self, state: dict[str, Any], key: str, max_bytes: int = MAX_SHOWN_STATE
                 ) -> None:
        check_int("max_bytes", max_bytes, 1)
        self.state, self.key, self.max_bytes = state, key, max_bytes
        self._sent: dict[str, Any] | None = None  # the client's state, as last sent

    def frame(self, output: Any) -> bytes:
        """The SSE frame that sets the client's ``key`` to ``output``."""
        new = {**self.state, self.key: output}
        snapshot = json_bytes(new)
        frame = b'data: {"type":"STATE_SNAPSHOT","snapshot":%s}\n\n' % snapshot
        if self._sent is not None:
            ops = json_patch(self._sent, new)
            if not ops:
                return b""
            delta = b'data: {"type":"STATE_DELTA","delta":%s}\n\n' % json_bytes(ops)
            frame = delta if len(delta) < len(frame) else frame
        body = len(frame) - 8  # "data: " and the blank line
        if body > self.max_bytes:
            notice = {"key": self.key, "bytes": body, "limit": self.max_bytes}
            return (b'data: {"type":"CUSTOM","name":"agentflow.state_not_shown","value":%s}\n\n'
                    % json_bytes(notice))
        self._sent = new
        return frame
