"""The one worker event loop every sync call runs on (see ``agentflow.sync``):
a daemon thread started on first use, and ``run_sync``, which runs a
coroutine there and blocks the calling thread for its result."""

from __future__ import annotations

import asyncio
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
        return _loop


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
