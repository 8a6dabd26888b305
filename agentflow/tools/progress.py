"""A running tool call's progress: ``report_progress`` inside a tool (a Python
tool's own; an MCP server's ``notifications/progress``, which
``agentflow.mcp`` passes on) becomes a ``ToolProgress`` event of the stream,
sent while the tool runs (a UI shows it; a proxy sees bytes). A call nobody
streams (``agent.call``) reads no progress: ``report_progress`` does nothing
then, and an MCP call asks the server for none (``reporter`` is ``None``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agentflow._arguments import check_finite, check_optional
from agentflow._secrets import mask_secrets

__all__ = ["Reporter", "report_progress", "reporter", "reporting"]

Reporter = Callable[[float, "float | None", "str | None"], None]
"""``(progress, total, message) -> None``: what a tool's report goes to."""

_REPORTER: ContextVar[Reporter | None] = ContextVar("agentflow_tool_progress", default=None)
"""The reporter of the tool call under way in this context (``reporting``)."""


def report_progress(progress: float, total: float | None = None,
                    message: str | None = None) -> None:
    """Report the progress of the tool call under way (call it from the tool,
    sync or async): the stream yields it as a ``ToolProgress`` event.
    ``message`` goes through the secret mask. Nothing happens outside a
    streamed call's tool run.

    Raises:
        TypeError: ``progress`` or ``total`` is not a number (``total`` may be
            ``None``), or ``message`` is not a str or ``None``.
        ValueError: ``progress`` or ``total`` is NaN or infinite.
    """
    check_finite("progress", progress)
    check_finite("total", total, optional=True)
    check_optional("message", message, str, "a str")
    if (report := _REPORTER.get()) is not None:
        report(progress, total, message)


def reporter() -> Reporter | None:
    """The reporter of the tool call under way, or ``None`` when nobody reads
    its progress (an MCP call then asks the server for none)."""
    return _REPORTER.get()


@contextmanager
def reporting(sink: Reporter) -> Iterator[None]:
    """Within the block (one tool call's run), ``report_progress`` goes to
    ``sink`` on this event loop's thread, from a sync tool's worker thread
    too; ``message`` masked."""
    loop = asyncio.get_running_loop()
    owner = threading.get_ident()

    def report(progress: float, total: float | None, message: str | None) -> None:
        shown = mask_secrets(message) if message else None
        if threading.get_ident() == owner:
            sink(progress, total, shown)
        else:  # a sync tool's worker thread: the sink is the loop's
            loop.call_soon_threadsafe(sink, progress, total, shown)

    token = _REPORTER.set(report)
    try:
        yield
    finally:
        _REPORTER.reset(token)
