"""The session id a streamable HTTP MCP server gives (``mcp-session-id``)
kept out of every log record: whoever holds it may act in the session, and
the SDK logged it at INFO ("Received session ID: <id>"), httpcore2 at DEBUG
with a response's headers (where the cookie a proxy sets, ``set-cookie``, is
masked too: ``CREDENTIAL_HEADERS``). ``SESSION_IDS`` is a mask that
``agentflow._logging``'s record filter runs (``_transports.HTTPTarget.open``
puts that filter on the loggers that may write one, each with its child
loggers, and tells the mask the ids of its open sessions): the message, a
logged exception's traceback and a record's stack are masked alike."""

from __future__ import annotations

import re

from agentflow._logging import add_record_mask, mask_records
from agentflow._secrets import MASK

__all__ = ["CREDENTIAL_HEADERS", "HEADER_LOGGERS", "SESSION_IDS", "SessionIds"]

HEADER_LOGGERS = ("httpcore2.http11", "httpcore2.http2")
"""The loggers that write a response's headers (at DEBUG: ``receive_response_headers.complete
return_value=(..., [(b'mcp-session-id', b'<id>'), ...])``)."""

CREDENTIAL_HEADERS = ("mcp-session-id", "set-cookie", "cookie", "authorization",
                      "proxy-authorization", "authentication-info", "x-api-key", "api-key")
"""Headers whose value is a credential: a record of headers shows them masked."""

_HEADER_VALUE = re.compile(
    rf"(?i)((?<![\w-])(?:{'|'.join(CREDENTIAL_HEADERS)})['\"]?,\s*b?['\"])[^'\"]*")
"""A credential header's value in a record of headers (httpcore2's DEBUG trace of a
response, logged before the response reaches agentflow: its session id is not held
yet; the cookie an authenticating proxy or a load balancer sets, ``set-cookie``)."""


class SessionIds:
    """A mask of log records' texts: the session ids of the open streamable
    HTTP sessions, and any value of the session header (or of another of
    ``CREDENTIAL_HEADERS``) in a record of headers. The ids are
    a credential of the session, not a key: they are kept here only while
    their session is open, never in the process-wide registry of secrets
    (which masks documents' text too)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        """Each open session's id, and how many open targets hold it."""

    def watch(self, *names: str) -> None:
        """Mask the records of the stdlib loggers ``names`` and
        ``HEADER_LOGGERS``, and of their children (``mask_records``; idempotent)."""
        add_record_mask(self.mask)
        mask_records(*names, *HEADER_LOGGERS)

    def hold(self, session_id: str) -> None:
        """Mask ``session_id`` until as many ``drop`` calls as holds."""
        self.ids[session_id] = self.ids.get(session_id, 0) + 1

    def drop(self, session_id: str) -> None:
        """One holder of ``session_id`` closed its session."""
        if (count := self.ids.get(session_id, 0) - 1) > 0:
            self.ids[session_id] = count
        else:
            self.ids.pop(session_id, None)

    def mask(self, text: str) -> str:
        """``text`` with the open sessions' ids and credential headers' values masked."""
        masked = _HEADER_VALUE.sub(rf"\1{MASK}", text)
        for session_id in list(self.ids):
            masked = masked.replace(session_id, MASK)
        return masked


SESSION_IDS = SessionIds()
