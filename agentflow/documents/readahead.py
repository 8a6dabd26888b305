"""Input documents read lazily, off the event loop, with bounded read-ahead.

    async with contextlib.aclosing(read_ahead(["docs/"], ahead=16)) as docs:
        async for doc in docs:          # a Document, as agentflow.documents.inputs makes it
            ...

Files are found one directory at a time (``agentflow.documents.inputs.iter_sources``)
and read as the consumer takes them: at most ``ahead`` documents are read
but not yet taken, so memory is bounded by ``ahead`` x document size, never
by the corpus. Documents come in input order: a slow read holds back the
ones after it (up to ``ahead`` of them, read meanwhile).

* Every file (plain text, PDF, HTML, ``.gz`` of them), and standard input
  (spooled to a temporary file), is read in a pool of worker processes
  (``agentflow.documents.reader_pool``; a script needs no ``if __name__ ==
  "__main__":`` guard): a pathological PDF holds the GIL in pure-Python
  pypdf, so threads would not bound it, and a text file can be as costly (a
  200 KB ``.gz`` that inflates to 200 MB, an encoding guessed over hundreds
  of megabytes). Each read runs under the per-document work budget
  (``agentflow.documents.budget``, its CPU and memory limits included): past
  a limit, the document is a failed one (``DocumentTooComplexError`` naming
  the limit) and every other input carries on.
* A small plain-text file, which cannot come near the budget, is read in
  the listing thread instead (``agentflow.documents.small``: a round trip to
  the pool costs more than the read), and so is small (or empty) plain text
  on standard input once spooled (starting a worker process for it took
  seconds on a busy machine).
* JSONL lines (streamed a batch at a time, each line capped by
  ``agentflow.documents.jsonl``, each record's text within the budget's
  ``chars``) are read in a thread.

At most ``workers`` processes read at once. A worker that dies (past the
CPU limit in native code, killed) breaks the pool and fails every read in
flight with it: each of those files is read again alone, to say which one
ended the process and why (``reader_pool.read_alone``), and a re-read keeps
the place its read held, so the re-reads and the new pool's workers are
``workers`` processes at most too.

Closing the generator early cancels the reads in flight and stops the pool's
workers and re-reads (a process busy on a costly document is killed, not
waited for).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agentflow._anyio_fast import produced, send_soon
from agentflow._arguments import check_int
from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget
from agentflow.documents.inputs import Document, Source, iter_sources, read_source
from agentflow.documents.reader_pool import BudgetedReader as BudgetedReader  # re-exported
from agentflow.documents.reader_pool import PdfDelivery, ReaderPool, spool_stdin
from agentflow.documents.reader_pool import read_in_worker as read_in_worker  # re-exported
from agentflow.documents.small import (
    INLINE_BYTES,
    inline_fits,
    read_small,
    read_small_stdin,
)

__all__ = ["BudgetedReader", "PdfDelivery", "read_ahead", "read_in_worker"]


@dataclass(slots=True)
class _Pending:
    """Documents queued in input order: read already, or still being read
    (``ready`` is set when ``docs`` holds them)."""

    docs: list[Document]
    slots: int
    ready: anyio.Event = field(default_factory=anyio.Event)


def _take(documents: Iterator[Document], n: int) -> list[Document]:
    return list(itertools.islice(documents, n))


async def read_ahead(
    specs: Sequence[str], *, fmt: str = "auto", text_field: str = "text", id_field: str = "id",
    deliver: PdfDelivery | None = None, ahead: int = 8, budget: WorkBudget = DEFAULT_BUDGET,
    workers: int | None = None, exclude: tuple[int, int] | None = None,
    on_exclude: Callable[[Path], None] | None = None,
    on_skip: Callable[[Path, str], None] | None = None, inline_bytes: int = INLINE_BYTES,
) -> AsyncGenerator[Document, None]:
    """Every document ``specs`` name (as ``agentflow.documents.inputs.iter_documents``
    reads them, before ``prepare``), at most ``ahead`` read before they are
    taken; each file read in ``workers`` processes (default: the CPU count, at
    most ``ahead``) under ``budget``. ``exclude`` / ``on_exclude`` (a file
    never read) and ``on_skip`` (an entry left out on purpose), as
    ``agentflow.documents.inputs.iter_sources`` takes them (each called from a
    worker thread). A plain-text file of at most ``inline_bytes`` is read in
    the listing thread (``agentflow.documents.small``; 0: every file in the
    pool).

    Raises:
        InputError: a spec matches nothing (when it is reached).
        ArgumentValueError: ``ahead`` < 1 (a ``ValueError``; ``ArgumentTypeError``,
            a ``TypeError``, for one that is no int).
    """
    check_int("ahead", ahead, 1)
    # a read's documents go to the consumer together (one JSONL batch: one send and one
    # receive, not one per line), each handed over when the consumer asks for it (no
    # buffer): read and not taken stays what ``slots`` holds plus the batch being taken
    send, receive = anyio.create_memory_object_stream[list[Document] | BaseException](0)
    slots = anyio.Semaphore(ahead, fast_acquire=True)  # no loop trip for a free slot
    pool = ReaderPool(workers or min(os.cpu_count() or 1, ahead))  # started when needed
    readers = anyio.CapacityLimiter(pool.size)  # the pool's reads and re-reads, together
    inline = inline_bytes if inline_fits(budget, inline_bytes) else 0

    def next_source(sources: Iterator[Document | Source]) -> Document | Source | None:
        """The next source, read here when it is a small plain-text file."""
        source = next(sources, None)
        if isinstance(source, Source) and inline:
            return read_small(source, fmt, inline) or source
        return source

    order_send, order_receive = anyio.create_memory_object_stream[_Pending](ahead)

    async def produce(out: MemoryObjectSendStream[list[Document] | BaseException]) -> None:
        async with out:
            failure: BaseException | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(emit, out)
                async with order_send:
                    sources = iter_sources(specs, fmt, exclude=exclude,
                                           on_exclude=on_exclude, on_skip=on_skip)
                    try:
                        while True:
                            source = await anyio.to_thread.run_sync(next_source, sources)
                            if source is None:
                                break
                            if isinstance(source, Document):
                                await queue([source])
                            elif source.jsonl:
                                lines = read_source(source, fmt=fmt, text_field=text_field,
                                                    id_field=id_field, budget=budget)
                                while batch := await anyio.to_thread.run_sync(
                                        _take, lines, ahead):
                                    await queue(batch)
                            else:
                                pending = await queue(None)
                                tg.start_soon(read_one, source, pending)
                    except Exception as exc:  # a spec that matches nothing: after the others
                        failure = exc
            if failure is not None:
                await _offer(out, failure)

    async def queue(docs: list[Document] | None) -> _Pending:
        """Take a slot per document (one for a file still to read) and queue
        them in input order."""
        pending = _Pending(docs or [], max(1, len(docs or ())))
        await slots.acquire()  # (a cancellation is met here, once a batch)
        for _ in range(pending.slots - 1):
            try:  # a free slot taken at once (only this task takes slots)
                slots.acquire_nowait()
            except anyio.WouldBlock:
                await slots.acquire()
        if docs is not None:
            pending.ready.set()
        await send_soon(order_send, pending)
        return pending

    async def emit(out: MemoryObjectSendStream[list[Document] | BaseException]) -> None:
        """Send the documents on in input order, as each one's read is done
        (a read's documents together)."""
        async with order_receive:
            async for pending in order_receive:
                await pending.ready.wait()
                if pending.docs:
                    await _offer(out, pending.docs)
                for _ in range(pending.slots):
                    slots.release()

    async def read_one(source: Source, pending: _Pending) -> None:
        try:
            if str(source.path) != "-":  # every file, under the budget
                pending.docs.append(await _in_pool(str(source.path)))
                return
            # standard input: spooled to a file (a chunk at a time), read as one
            spooled = await anyio.to_thread.run_sync(spool_stdin)
            if isinstance(spooled, Document):  # past MAX_INPUT_BYTES
                pending.docs.append(spooled)
                return
            try:
                small = await anyio.to_thread.run_sync(
                    read_small_stdin, spooled, fmt, inline) if inline else None
                pending.docs.append(small or await _in_pool(str(spooled), stdin=True))
            finally:
                spooled.unlink(missing_ok=True)
        finally:
            pending.ready.set()

    async def _in_pool(path: str, stdin: bool = False) -> Document:
        async with readers:  # one place for the read and, if the pool breaks, its re-read
            future = pool.submit(path, fmt, deliver, budget, stdin)
            try:
                return await asyncio.wrap_future(future)
            except BrokenProcessPool:  # a worker died (past the budget in native code, killed)
                pool.broken(future)  # the next read starts a new pool
                # every read in flight failed with it: each read again alone, to say which and
                # why (killed by pool.stop when the consumer goes)
                return await anyio.to_thread.run_sync(pool.read_alone, path, fmt, deliver,
                                                      budget, stdin, abandon_on_cancel=True)

    producer = asyncio.ensure_future(produce(send))
    finished = False
    try:
        async with contextlib.aclosing(produced(receive, producer)) as batches:
            async for batch in batches:
                for item in batch:
                    yield item
        finished = True
    finally:
        pool.stop(kill=not finished)


async def _offer(out: MemoryObjectSendStream[list[Document] | BaseException],
                 item: list[Document] | BaseException) -> None:
    """Send ``item``; dropped when the consumer has gone."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await send_soon(out, item)
