"""The sync twin: run agentflow's async API from plain synchronous code.

For scripts and notebooks::

    reply = agent.call_sync("Extract the contact from: ...", Contact)
    for result in extract_many_sync(agent, documents, Invoice, concurrency=8):
        print(result.id, result.ok)
    agent.close()

Every sync call runs on **one event loop in one daemon worker thread**
("agentflow-sync", started on first use and shared by every agent), and the
calling thread blocks until the result is there. One loop for every sync
call means a model's HTTP session (bound to the loop that made it) is made
once and reused, as in async code.

Inside a running event loop (a notebook cell, an ``async def``) the same
worker-thread path is taken: the call works, but it blocks the calling
loop for its whole duration — in async code ``await agent.call(...)``
instead. The one place a sync call cannot work is the worker thread itself
(a sync tool or callback that runs on that loop calling ``call_sync``): it
would wait for itself forever, so it raises ``UsageError`` at once.

``KeyboardInterrupt`` (Ctrl-C) while waiting cancels the call — the state
is left as it was — and is re-raised.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from agentflow.errors import UsageError

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.batch import ExtractResult, InputLike
    from agentflow.model import ChatModel

__all__ = ["extract_many_sync", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_portal: BlockingPortal | None = None
_portal_cm: AbstractContextManager[BlockingPortal] | None = None
_loop_thread: threading.Thread | None = None


def _worker() -> BlockingPortal:
    """The shared worker loop's portal (started on first use)."""
    global _portal, _portal_cm, _loop_thread
    with _lock:
        if _portal is None:
            cm = start_blocking_portal("asyncio")
            portal = cm.__enter__()
            _loop_thread = portal.call(threading.current_thread)
            _portal, _portal_cm = portal, cm
        return _portal


@atexit.register
def _stop_worker() -> None:
    """Stop the worker loop at interpreter exit, while its thread can still run:
    left to garbage collection during finalization, the portal's exit waits for
    a daemon thread that no longer runs, and the process never exits."""
    global _portal, _portal_cm, _loop_thread
    with _lock:
        cm, _portal, _portal_cm, _loop_thread = _portal_cm, None, None, None
    if cm is not None:
        cm.__exit__(None, None, None)


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
    portal = _worker()
    if threading.current_thread() is _loop_thread:
        raise UsageError(
            "a sync agentflow call was made from agentflow's own worker loop (for example "
            "inside a sync tool of a call_sync call); it would wait for itself: use "
            "'await agent.call(...)' there instead"
        )

    async def run() -> T:
        return await func()

    return _wait(portal.start_task_soon(run))


def extract_many_sync(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    *,
    concurrency: int = 8,
    order: Literal["input", "completed"] = "input",
    instructions: str | None = None,
) -> Iterator[ExtractResult]:
    """The sync twin of ``extract_many``: same arguments, same results, as a
    plain iterator (lazy: results come as the calls finish, in ``order``).

    Closing the iterator early (``break``) cancels the calls still running.

    Raises: as ``extract_many`` (``ValueError`` for bad ``concurrency`` or
    ``order`` on the first ``next``), and ``UsageError`` from the worker thread.
    """
    from agentflow.batch import extract_many

    results = extract_many(
        agent_or_model, inputs, output,
        concurrency=concurrency, order=order, instructions=instructions,
    )
    try:
        while True:
            try:
                yield run_sync(results.__anext__)
            except StopAsyncIteration:
                return
    finally:
        run_sync(lambda: _aclose(results))


async def _aclose(iterator: Any) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()
