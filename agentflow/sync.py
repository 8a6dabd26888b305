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
(an async tool or middleware of a sync call calling ``call_sync``): it
would wait for itself forever, so it raises ``UsageError`` at once. (Sync
tools run in threads of their own, so they may call ``call_sync``.) The
thread is a daemon: it never keeps a script from exiting.

``KeyboardInterrupt`` (Ctrl-C) while waiting cancels the call — the state
is left as it was — and is re-raised.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine, Iterable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar, overload

from typing_extensions import Unpack

from agentflow.errors import UsageError

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.batch import ExtractResult, InputLike
    from agentflow.batch_types import ExtractOptions
    from agentflow.model import ChatModel

__all__ = ["extract_many_sync", "run_sync"]

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


OutT = TypeVar("OutT")


@overload
def extract_many_sync(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: type[OutT],
    **options: Unpack[ExtractOptions],
) -> Iterator[ExtractResult[OutT]]: ...


@overload
def extract_many_sync(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    **options: Unpack[ExtractOptions],
) -> Iterator[ExtractResult]: ...


def extract_many_sync(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    **options: Unpack[ExtractOptions],
) -> Iterator[ExtractResult]:
    """The sync twin of ``extract_many``: same arguments (``options`` are its
    keywords: ``concurrency``, ``order``, ``instructions``, ``ground``,
    ``chunking``...), same results, as a plain iterator (lazy: results come
    as the calls finish, in ``order``); ``ExtractResult[Invoice]`` to a type
    checker when ``output`` is the class ``Invoice``.

    Closing the iterator early (``break``) cancels the calls still running.

    Raises: as ``extract_many`` (``ValueError`` for bad ``concurrency`` or
    ``order``, ``TypeError`` for an unknown keyword, on the first ``next``),
    and ``UsageError`` from the worker thread.
    """
    from agentflow.batch import extract_many

    results = extract_many(agent_or_model, inputs, output, **options)
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
