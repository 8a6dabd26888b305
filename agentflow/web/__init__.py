"""agentflow in a web backend (extra ``web``; ``postgres`` for the
PostgreSQL store).

* ``sse_response(agent, msg, Schema)`` — a Starlette/FastAPI response that
  streams the call as Server-Sent Events of typed JSON events with ids
  (wire format: ``agentflow.web.wire``); a client that goes away cancels
  the call and leaves its state as it was.
* ``StateStore`` — conversations between requests, with optimistic
  concurrency (``StateConflictError``): ``SQLiteStateStore`` (embedded
  default) and ``PostgresStateStore``; ``stream_with_store`` /
  ``call_with_store`` run load -> stream -> save, and save only a call that
  completed; a save is all or nothing, even cancelled or killed mid-way.
* ``agentflow.web.requests`` — bounded, well-formed requests: ``read_json``
  (413/415/400 naming the problem) and ``check_request`` (Host, Origin).
* ``agentflow.web.agui`` / ``agentflow.web.aisdk`` — the AG-UI and Vercel AI
  SDK UI message stream protocols over the same events, with their run
  input readers; approvals (``agentflow.approvals``) and frontend tools
  (``agentflow.client_tools``: tools the browser runs, offered to the model)
  through both.
"""

from agentflow.errors import StateConflictError
from agentflow.web.postgres import PostgresStateStore
from agentflow.web.sqlite import SQLiteStateStore
from agentflow.web.sse import EventStreamResponse, Outcome, sse_response
from agentflow.web.store import StateStore, StoredState, call_with_store, stream_with_store
from agentflow.web.wire import event_to_dict, sse_frame

__all__ = [
    "EventStreamResponse",
    "Outcome",
    "PostgresStateStore",
    "SQLiteStateStore",
    "StateConflictError",
    "StateStore",
    "StoredState",
    "call_with_store",
    "event_to_dict",
    "sse_frame",
    "sse_response",
    "stream_with_store",
]
