"""pypdf's warnings about malformed PDFs -> agentflow's log, with the file named.

pypdf reports the robustness fixes it applies to a non-compliant file ("incorrect
startxref pointer", "Ignoring wrong pointing object") through the stdlib logger
``pypdf`` at WARNING (its ``_utils.logger_warning``; its own docstring: "an issue
was handled by pypdf"). With no logging configured, Python's last-resort handler
prints them on stderr, unnamed, in the middle of a progress display. While
agentflow reads a PDF (``pdf_scope``), those records go instead to the structlog
logger ``agentflow.documents`` as the event ``pdf_reader_warning`` at INFO, with
``file`` (the PDF's name), ``message`` and ``source`` (pypdf's module): pypdf read
the file anyway, and a file it could not read is a ``CorruptDocumentError``.
The application's logging configuration decides whether they are shown.

Outside a read, the ``pypdf`` logger is left as the application set it: the
forwarding handler is installed (and the logger's propagation switched off)
only while at least one read is under way, in any thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agentflow._logging import get_logger

__all__ = ["pdf_scope"]

_log = get_logger("agentflow.documents")
_reading: ContextVar[str | None] = ContextVar("agentflow_pdf_reading", default=None)
_lock = threading.Lock()
_active = 0
_saved_propagate = True


class _Forward(logging.Handler):
    """Sends each ``pypdf`` record to ``agentflow.documents`` at INFO, naming the
    file the current context is reading."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format: keep its template
            message = str(record.msg)
        _log.info("pdf_reader_warning", file=_reading.get() or "<unknown>",
                  message=message[:500], source=record.name, level=record.levelname)


_HANDLER = _Forward(level=logging.DEBUG)


@contextmanager
def pdf_scope(name: str) -> Iterator[None]:
    """While inside, pypdf's log records are forwarded (see the module docstring),
    naming ``name`` (``""``: ``<bytes>``). Thread-safe and re-entrant."""
    global _active, _saved_propagate
    token = _reading.set(name or "<bytes>")
    pypdf_logger = logging.getLogger("pypdf")
    with _lock:
        if _active == 0:
            _saved_propagate = pypdf_logger.propagate
            pypdf_logger.addHandler(_HANDLER)
            pypdf_logger.propagate = False
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                pypdf_logger.removeHandler(_HANDLER)
                pypdf_logger.propagate = _saved_propagate
        _reading.reset(token)
