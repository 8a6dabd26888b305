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

from collections.abc import AsyncIterable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, overload

from typing_extensions import Unpack

from agentflow._sync_loop import run_sync

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.batch import ExtractResult, InputLike
    from agentflow.batch_types import ExtractOptions
    from agentflow.model import ChatModel

__all__ = ["extract_many_sync", "run_sync"]


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
