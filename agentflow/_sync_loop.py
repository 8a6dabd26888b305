"""The one worker event loop every sync call runs on (see ``agentflow.sync``):
a daemon thread started on first use, and ``run_sync``, which runs a
coroutine there and blocks the calling thread for its result."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from agentflow.errors import UsageError

__all__ = ["run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None
_EXIT_WAIT = 10.0
"""Seconds the interpreter's exit waits at most for the worker loop's closers."""


def _worker() -> asyncio.AbstractEventLoop:
    """The shared worker loop, running in a daemon thread (started on first
    use; a daemon, so it never keeps the interpreter from exiting)."""
    global _loop, _loop_thread
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="agentflow-sync",
                                      daemon=True)
            thread.start()
            _loop, _loop_thread = loop, thread
            atexit.register(_finish, loop)
        return _loop


def _finish(loop: asyncio.AbstractEventLoop) -> None:
    """At the interpreter's exit, finish the worker loop's async generators (each
    model's HTTP session closer, ``providers._loop_sessions``), as ``asyncio.run``
    does at the end of its loop: a script that used ``call_sync`` and never
    closed its agent exits without "Unclosed client session" / "Unclosed
    connector" warnings and closes its pooled connections. Bounded by
    ``_EXIT_WAIT``, so a hung close never keeps the interpreter from exiting."""
    if loop.is_closed() or not loop.is_running():
        return
    with contextlib.suppress(Exception):  # exiting: nothing left to tell
        asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(_EXIT_WAIT)


def _wait(future: Future[T]) -> T:
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()  # cancels the task on the worker loop
        raise


def run_sync(func: Callable[[], Awaitable[T]]) -> T:
    """Run ``func()`` (a coroutine factory) on the worker loop and return its
    result, blocking the calling thread.

    Raises:
        UsageError: called from the worker loop's own thread (it would
            deadlock).
        whatever ``func()`` raises.
    """
    loop = _worker()
    if threading.current_thread() is _loop_thread:
        raise UsageError(
            "a sync agentflow call was made from agentflow's own worker loop (for example "
            "inside an async tool of a call_sync call); it would wait for itself: use "
            "'await agent.call(...)' there instead"
        )

    async def run() -> T:
        return await func()

    coroutine: Coroutine[Any, Any, T] = run()
    return _wait(asyncio.run_coroutine_threadsafe(coroutine, loop))
