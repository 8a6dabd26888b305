"""Input documents read lazily, off the event loop, with bounded read-ahead.

    async with contextlib.aclosing(read_ahead(["docs/"], ahead=16)) as docs:
        async for doc in docs:          # a Document, as agentflow.documents.inputs makes it
            ...

Files are found one directory at a time (``agentflow.documents.inputs.iter_sources``)
and read as the consumer takes them: at most ``ahead`` documents are read
but not yet taken, so memory is bounded by ``ahead`` x document size, never
by the corpus. Documents come in input order: a slow read holds back the
ones after it (up to ``ahead`` of them, read meanwhile).

* Every file (plain text, PDF, HTML, ``.gz`` of them) is read in a pool of
  worker processes (``concurrent.futures.ProcessPoolExecutor``): a
  pathological PDF holds the GIL in pure-Python pypdf, so threads would not
  bound it, and a text file can be as costly (a 200 KB ``.gz`` that inflates
  to 200 MB, an encoding guessed over hundreds of megabytes). Each read runs
  under the per-document work budget (``agentflow.documents.budget``, its
  CPU and memory limits included): past a limit, the document is a failed
  one (``DocumentTooComplexError`` naming the limit) and every other input
  carries on.
* JSONL lines (streamed a batch at a time, each line capped by
  ``agentflow.documents.jsonl``) and standard input are read in a thread.

Closing the generator early cancels the reads in flight and stops the pool's
workers (a worker busy on a costly document is killed, not waited for).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import itertools
import multiprocessing
import os
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agentflow._anyio_fast import produced, send_soon
from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget, cpu_budget, memory_budget
from agentflow.documents.inputs import (
    Document,
    Source,
    _failed,
    _file_document,
    iter_sources,
    read_source,
)
from agentflow.documents.kinds import DocumentKind, sniff_kind
from agentflow.documents.reading import _Unusable
from agentflow.documents.routing import PdfMode, pdf_delivery
from agentflow.errors import DocumentError

__all__ = ["BudgetedReader", "PdfDelivery", "read_ahead", "read_in_worker"]


@dataclass(frozen=True, slots=True)
class PdfDelivery:
    """``deliver(has_text)`` for ``agentflow.documents.inputs``: how each PDF reaches the
    model (``agentflow.documents.routing.pdf_delivery``), picklable so a
    worker process can take it."""

    mode: PdfMode
    model_reads_pdf: bool

    def __call__(self, has_text: bool) -> str:
        return pdf_delivery(self.mode, model_reads_pdf=self.model_reads_pdf, has_text=has_text)


def read_in_worker(path: str, fmt: str, deliver: PdfDelivery | None,
                   budget: WorkBudget) -> Document:
    """Read one file (plain text, PDF or HTML, gunzipped by suffix) under
    ``budget`` (its CPU and memory limits included): the function a worker
    process runs. Never raises for a bad file: a reader failing in a way of
    its own (a bug met on untrusted bytes) is that file's failed ``Document``
    too, so it cannot end the run."""
    try:
        with cpu_budget(path, budget.cpu_seconds), memory_budget(path, budget.memory_bytes):
            return _file_document(Path(path), fmt, deliver, budget)
    except DocumentError as exc:  # the CPU or memory limit: raised by the budget
        return Document(path, "", problem=str(exc), kind=_kind(Path(path), fmt),
                        problem_type=type(exc).__name__, reason=exc.reason or None)
    except _Unusable as exc:
        return _failed(exc, path)
    except Exception as exc:  # untrusted input met a reader's bug: this file fails, not the run
        return Document(path, "", problem=f"{path}: the reader failed: {type(exc).__name__}: "
                                          f"{str(exc)[:300]}", problem_type="DocumentError",
                        reason="reading this file raised an error the reader does not "
                               "describe; check the file, or convert it to text first")


def _kind(path: Path, fmt: str) -> DocumentKind:
    """The kind of file ``path`` (``fmt`` forces one), from its first bytes
    and name: what a failed document names when its budget stopped the read."""
    forced: dict[str, DocumentKind] = {"pdf": "pdf", "html": "html", "text": "text"}
    if fmt in forced:
        return forced[fmt]
    try:
        with gzip.open(path) if path.suffix == ".gz" else path.open("rb") as f:
            head = f.read(1024)
    except (OSError, EOFError, ValueError):
        head = b""
    return sniff_kind(head, str(path))


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
    on_skip: Callable[[Path, str], None] | None = None,
) -> AsyncGenerator[Document, None]:
    """Every document ``specs`` name (as ``agentflow.documents.inputs.iter_documents``
    reads them, before ``prepare``), at most ``ahead`` read before they are
    taken; each file read in ``workers`` processes (default: the CPU count, at
    most ``ahead``) under ``budget``. ``exclude`` / ``on_exclude`` (a file
    never read) and ``on_skip`` (an entry left out on purpose), as
    ``agentflow.documents.inputs.iter_sources`` takes them (each called from a
    worker thread).

    Raises:
        InputError: a spec matches nothing (when it is reached).
        ValueError: ``ahead`` < 1.
    """
    if ahead < 1:
        raise ValueError(f"ahead must be >= 1, got {ahead}")
    send, receive = anyio.create_memory_object_stream[Document | BaseException](ahead)
    slots = anyio.Semaphore(ahead, fast_acquire=True)  # no loop trip for a free slot
    pools: list[ProcessPoolExecutor] = []

    def pool() -> ProcessPoolExecutor:
        if not pools:
            size = workers or min(os.cpu_count() or 1, ahead)
            pools.append(ProcessPoolExecutor(
                max_workers=size, mp_context=multiprocessing.get_context("forkserver")))
        return pools[0]

    order_send, order_receive = anyio.create_memory_object_stream[_Pending](ahead)

    async def produce(out: MemoryObjectSendStream[Document | BaseException]) -> None:
        async with out:
            failure: BaseException | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(emit, out)
                async with order_send:
                    sources = iter_sources(specs, fmt, exclude=exclude,
                                           on_exclude=on_exclude, on_skip=on_skip)
                    try:
                        while True:
                            source = await anyio.to_thread.run_sync(next, sources, None)
                            if source is None:
                                break
                            if isinstance(source, Document):
                                await queue([source])
                            elif source.jsonl:
                                lines = read_source(source, fmt=fmt, text_field=text_field,
                                                    id_field=id_field)
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
        for _ in range(pending.slots):
            await slots.acquire()
        if docs is not None:
            pending.ready.set()
        await send_soon(order_send, pending)
        return pending

    async def emit(out: MemoryObjectSendStream[Document | BaseException]) -> None:
        """Send the documents on in input order, as each one's read is done."""
        async with order_receive:
            async for pending in order_receive:
                await pending.ready.wait()
                for doc in pending.docs:
                    await _offer(out, doc)
                for _ in range(pending.slots):
                    slots.release()

    async def read_one(source: Source, pending: _Pending) -> None:
        try:
            if str(source.path) != "-":  # every file, under the budget
                pending.docs.append(await _in_pool(source))
            else:  # standard input cannot be handed to another process
                pending.docs.append(await anyio.to_thread.run_sync(_read_here, source))
        finally:
            pending.ready.set()

    def _read_here(source: Source) -> Document:
        return next(read_source(source, fmt=fmt, text_field=text_field, id_field=id_field,
                                deliver=deliver, budget=budget))

    async def _in_pool(source: Source) -> Document:
        try:
            future = pool().submit(read_in_worker, str(source.path), fmt, deliver, budget)
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:  # a worker died (killed, out of memory): a new pool
            pools.clear()
            return Document(str(source.path), "", problem=(
                f"{source.path}: the process reading it died"), problem_type="DocumentError",
                reason="the worker process parsing this file exited (out of memory, or "
                       "killed); the other inputs went on")

    producer = asyncio.ensure_future(produce(send))
    finished = False
    try:
        async with contextlib.aclosing(produced(receive, producer)) as documents:
            async for item in documents:
                yield item
        finished = True
    finally:
        for executor in pools:
            _stop_pool(executor, kill=not finished)


async def _offer(out: MemoryObjectSendStream[Document | BaseException],
                 item: Document | BaseException) -> None:
    """Send ``item``; dropped when the consumer has gone."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await send_soon(out, item)


def _stop_pool(executor: ProcessPoolExecutor, *, kill: bool) -> None:
    """Stop ``executor``; ``kill``: without waiting for a costly parse (its
    workers are killed: what they were reading is not needed any more)."""
    if not kill:
        executor.shutdown(wait=True)
        return
    processes = getattr(executor, "_processes", None)
    executor.shutdown(wait=False, cancel_futures=True)
    if isinstance(processes, dict):
        for process in list(processes.values()):
            with contextlib.suppress(Exception):
                process.kill()
                process.join(5)


class BudgetedReader:
    """Reads single files the way ``read_ahead`` does, synchronously: each in
    one worker process under ``budget`` (its CPU and memory limits included).
    What ``agentflow report`` re-reads sources with. ``close()`` stops the
    worker."""

    def __init__(self, budget: WorkBudget = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self._pool: ProcessPoolExecutor | None = None

    def read(self, path: str, fmt: str = "auto") -> Document:
        """The document of file ``path`` (before ``prepare``); never raises
        for a bad file."""
        if path == "-":  # standard input cannot be handed to another process
            return next(read_source(Source(Path(path), False), fmt=fmt, budget=self.budget))
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("forkserver"))
        try:
            return self._pool.submit(read_in_worker, path, fmt, None, self.budget).result()
        except BrokenProcessPool:
            self._pool = None
            return Document(path, "", problem=f"{path}: the process reading it died",
                            problem_type="DocumentError")

    def close(self) -> None:
        """Stop the worker process (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
