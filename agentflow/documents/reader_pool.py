"""The worker processes that read documents under the work budget.

``read_ahead`` (``agentflow extract``) and ``BudgetedReader`` (``agentflow
report``) read each costly file in a process of this pool: a pathological
PDF holds the GIL in pure-Python pypdf, so a thread would not bound it, and
the budget's CPU and memory limits (``RLIMIT_CPU``, ``RLIMIT_AS``) can only
be set on a whole process (``agentflow.documents.budget``).

**No ``if __name__ == "__main__":`` guard needed.** The pool starts its
processes through ``multiprocessing``'s ``forkserver`` (never ``fork``: the
run's process has threads, and a forked copy of a held lock deadlocks).
``forkserver`` and ``spawn`` import the main module again in the new
processes, by its path (a script) or its name (``python -m``), so objects
defined there can be unpickled; a script without the guard then runs its
whole body again in each of them, starts the pool again, and every document
failed as "the process reading it died". Nothing the pool runs is defined in
the main module (``read_in_worker`` and its arguments are agentflow's), so
its processes are started without it: while one starts, the main module's
``__file__`` and ``__spec__`` are set aside (``_main_unseen``), the two
attributes ``multiprocessing.spawn.get_preparation_data`` reads to tell the
new process what to import. A script with the guard, without it, and
``python -m`` all work alike. The attributes are back as soon as the process
has started; for those few milliseconds they are gone process-wide, so a
``spawn`` or ``forkserver`` process the user's own code starts from another
thread at that moment would not import the main module either.

Standard input cannot be handed to another process: ``spool_stdin`` copies
it to a temporary file a chunk at a time (at most ``MAX_INPUT_BYTES``), and
the pool reads that file under the same budget as any other input.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import shutil
import signal
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from agentflow.documents.budget import (
    DEFAULT_BUDGET,
    WorkBudget,
    cpu_budget,
    memory_budget,
    over_budget,
)
from agentflow.documents.inputs import Document, Source, failed_document, file_document, read_source
from agentflow.documents.kinds import DocumentKind, sniff_kind
from agentflow.documents.reading import (
    MAX_INPUT_BYTES,
    TOO_LARGE,
    Unusable,
    open_input,
    too_large,
)
from agentflow.documents.routing import PdfMode, pdf_delivery
from agentflow.documents.small import INLINE_BYTES, inline_fits, read_small
from agentflow.errors import DocumentError

__all__ = ["BudgetedReader", "PdfDelivery", "ReaderPool", "read_alone", "read_in_worker",
           "spool_stdin"]


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
                   budget: WorkBudget, stdin: bool = False) -> Document:
    """Read one file (plain text, PDF or HTML, gunzipped by suffix) under
    ``budget`` (its CPU and memory limits included): the function a worker
    process runs. ``stdin``: ``path`` is standard input spooled to a file
    (``spool_stdin``), named ``-``. Never raises for a bad file: a reader
    failing in a way of its own (a bug met on untrusted bytes) is that file's
    failed ``Document`` too, so it cannot end the run."""
    shown = "-" if stdin else path
    try:
        with cpu_budget(shown, budget.cpu_seconds), memory_budget(shown, budget.memory_bytes):
            return file_document(Path(path), fmt, deliver, budget, stdin=stdin)
    except DocumentError as exc:  # the CPU or memory limit: raised by the budget
        return Document(shown, "", problem=str(exc), kind=_kind(Path(path), fmt),
                        problem_type=type(exc).__name__, reason=exc.reason or None)
    except Unusable as exc:
        return failed_document(exc, shown)
    except Exception as exc:  # untrusted input met a reader's bug: this file fails, not the run
        return Document(shown, "", problem=f"{shown}: the reader failed: {type(exc).__name__}: "
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
        with open_input(path) as f:
            head = f.read(1024)
    except (OSError, EOFError, ValueError, Unusable):
        head = b""
    return sniff_kind(head, str(path))


_starting = threading.Lock()


@contextlib.contextmanager
def _main_unseen() -> Iterator[None]:
    """While the block runs, the main module has no ``__file__`` and no
    ``__spec__``: a process ``multiprocessing`` starts then does not import it
    again (see the module docstring). Other attributes, and ``sys.modules``,
    are left alone (pickling by reference in another thread still works)."""
    main = sys.modules.get("__main__")
    with _starting:
        if main is None:
            yield
            return
        saved: dict[str, Any] = {name: main.__dict__[name]
                                 for name in ("__file__", "__spec__") if name in main.__dict__}
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        try:
            yield
        finally:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


class ReaderPool:
    """A pool of ``size`` worker processes (``forkserver``), started lazily,
    whose processes never import the main module (``_main_unseen``), and the
    processes that read a file again alone after the pool broke
    (``read_alone``), which ``stop(kill=True)`` ends too. The pool does not
    bound how many re-reads run beside its workers: its caller does
    (``read_ahead`` holds one of ``size`` places for a read and its re-read)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._executor: ProcessPoolExecutor | None = None
        # each read's pool, while its future lives
        self._of: weakref.WeakKeyDictionary[Future[Document], ProcessPoolExecutor] = (
            weakref.WeakKeyDictionary())
        self._alone: set[BaseProcess] = set()  # the re-reads running
        self._alone_lock = threading.Lock()
        self._killed = False  # stop(kill=True) ran: no re-read starts any more

    def submit(self, path: str, fmt: str, deliver: PdfDelivery | None, budget: WorkBudget,
               stdin: bool = False) -> Future[Document]:
        """``read_in_worker(path, ...)`` in a worker; a worker that died (past
        the CPU limit in native code, killed) breaks the pool: the future, and
        every other one in flight, raises ``BrokenProcessPool``; ``broken``
        then, and the next ``submit`` starts a new pool."""
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.size, mp_context=multiprocessing.get_context("forkserver"))
        # a worker process starts inside submit (one per submit, up to size)
        with _main_unseen():
            future = self._executor.submit(read_in_worker, path, fmt, deliver, budget, stdin)
        self._of[future] = self._executor
        return future

    def broken(self, future: Future[Document]) -> None:
        """``future`` raised ``BrokenProcessPool``: its pool's workers are
        stopped, unless a new pool has replaced it since (the other reads
        in flight fail with it; reads started later are left alone)."""
        executor = self._of.pop(future, None)
        if executor is not None and executor is self._executor:
            self._stop_workers(kill=True)

    def read_alone(self, path: str, fmt: str, deliver: PdfDelivery | None, budget: WorkBudget,
                   stdin: bool = False) -> Document:
        """``read_alone`` (the module's), its process one of this pool's:
        ``stop(kill=True)`` kills it (a read asked for after that gets a failed
        document at once). Blocking: call it from a thread."""
        return _read_alone(path, fmt, deliver, budget, stdin, self)

    def _own(self, process: BaseProcess) -> bool:
        """Count ``process`` (started) as one of the pool's re-reads; ``False``
        (and it is killed) when the pool was stopped with ``kill``."""
        with self._alone_lock:
            if not self._killed:
                self._alone.add(process)
                return True
        _kill(process)
        return False

    def _disown(self, process: BaseProcess) -> None:
        with self._alone_lock:
            self._alone.discard(process)

    def stop(self, *, kill: bool) -> None:
        """Stop the workers; ``kill``: without waiting for a costly parse (what
        they were reading is not needed any more), and the re-reads
        (``read_alone``) too, none started after."""
        self._stop_workers(kill=kill)
        if kill:
            with self._alone_lock:
                self._killed = True
                alone, self._alone = list(self._alone), set()
            for process in alone:
                _kill(process)

    def _stop_workers(self, *, kill: bool) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if not kill:
            executor.shutdown(wait=True)
            return
        processes = getattr(executor, "_processes", None)
        executor.shutdown(wait=False, cancel_futures=True)
        if isinstance(processes, dict):
            for process in list(processes.values()):
                _kill(process)


def _kill(process: Any) -> None:
    """Kill ``process`` and wait (at most 5 s) until it is gone."""
    with contextlib.suppress(Exception):
        process.kill()
        process.join(5)


def _read_to(conn: Connection, path: str, fmt: str, deliver: PdfDelivery | None,
             budget: WorkBudget, stdin: bool) -> None:
    """``read_in_worker``'s document sent on ``conn``: what ``read_alone``'s
    process runs."""
    with conn:
        conn.send(read_in_worker(path, fmt, deliver, budget, stdin))


def read_alone(path: str, fmt: str, deliver: PdfDelivery | None, budget: WorkBudget,
               stdin: bool = False) -> Document:
    """``read_in_worker`` in a process of its own (``forkserver``, without the
    main module), to tell why a pool's worker died while it held this file:
    a file the pool's breakage took down with another gets its document; the
    file that ended its process gets a failed one naming why, from the exit
    code (past the CPU limit in native code, ``SIGPROF``: the budget's
    ``cpu_seconds``; ``SIGKILL``: killed, as the kernel does out of memory;
    else a crash). Blocking: call it from a thread."""
    return _read_alone(path, fmt, deliver, budget, stdin, None)


def _read_alone(path: str, fmt: str, deliver: PdfDelivery | None, budget: WorkBudget,
                stdin: bool, pool: ReaderPool | None) -> Document:
    """``read_alone``, its process one of ``pool``'s re-reads (``ReaderPool.read_alone``)."""
    context = multiprocessing.get_context("forkserver")
    receive, send = context.Pipe(duplex=False)
    with _main_unseen():
        process = context.Process(target=_read_to, daemon=True,
                                  args=(send, path, fmt, deliver, budget, stdin))
        process.start()
    send.close()
    if pool is not None and not pool._own(process):
        receive.close()
        return _died("-" if stdin else path, process.exitcode, budget)
    try:
        doc: Document | None = None
        with receive, contextlib.suppress(EOFError, OSError):  # it died before sending
            doc = receive.recv()
        process.join()
    finally:
        if pool is not None:
            pool._disown(process)
    return doc if doc is not None else _died("-" if stdin else path, process.exitcode, budget)


def _died(name: str, code: int | None, budget: WorkBudget) -> Document:
    """The failed document of file ``name`` whose reading process ended with
    exit code ``code`` (``-N``: signal N) without a document."""
    if code == -signal.SIGPROF and budget.cpu_seconds is not None:
        exc = over_budget(name, "cpu_seconds", budget.cpu_seconds, budget.cpu_seconds)
        return Document(name, "", problem=str(exc), problem_type=type(exc).__name__,
                        reason=f"{exc.reason} (its parser ran on in native code, where the "
                               "limit cannot interrupt it, so its process was ended)")
    how = ("was killed (SIGKILL: the kernel does so when memory runs out)"
           if code == -signal.SIGKILL else f"exited with code {code}")
    return Document(name, "", problem=f"{name}: the process reading it died", kind="text",
                    problem_type="DocumentError",
                    reason=f"the worker process reading this file {how}; the other inputs "
                           "went on")


_SPOOL_CHUNK = 1 << 20


def spool_stdin(limit: int = MAX_INPUT_BYTES) -> Path | Document:
    """Standard input copied to a temporary file (the caller deletes it), a
    chunk at a time, so its bytes are never all in memory; more than
    ``limit`` bytes: a failed ``Document`` (``-``, ``UnreadableDocumentError``
    naming the limit), the rest left unread."""
    stdin = getattr(sys.stdin, "buffer", None)
    handle, name = tempfile.mkstemp(prefix="agentflow-stdin-")
    path = Path(name)
    try:
        with open(handle, "wb") as out:
            if stdin is None:  # a text stream (replaced sys.stdin): its characters' bytes
                got = 0
                while got <= limit and (chunk := sys.stdin.read(_SPOOL_CHUNK)):
                    data = chunk.encode("utf-8", "surrogateescape")
                    out.write(data)
                    got += len(data)
            else:
                shutil.copyfileobj(_Capped(stdin, limit + 1), out, _SPOOL_CHUNK)
                got = out.tell()
    except OSError as exc:
        path.unlink(missing_ok=True)
        return failed_document(Unusable(f"-: cannot read: {exc}"), "-")
    if got > limit:
        path.unlink(missing_ok=True)
        return failed_document(Unusable(too_large(Path("-"), limit=limit), reason=TOO_LARGE), "-")
    return path


class _Capped:
    """A binary stream read up to ``left`` bytes (``read`` only)."""

    def __init__(self, stream: Any, left: int) -> None:
        self._stream, self._left = stream, left

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        data: bytes = self._stream.read(self._left if n < 0 else min(n, self._left))
        self._left -= len(data)
        return data


class BudgetedReader:
    """Reads single files the way ``read_ahead`` does, synchronously: each in
    one worker process under ``budget`` (its CPU and memory limits included).
    What ``agentflow report`` re-reads sources with, and the Ray engine's read
    tasks read their inputs with (``documents``). ``close()`` stops the
    worker."""

    def __init__(self, budget: WorkBudget = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self._pool = ReaderPool(1)

    def read(self, path: str, fmt: str = "auto") -> Document:
        """The document of file ``path`` (``-``: standard input, spooled to a
        file first) before ``prepare``; never raises for a bad file."""
        spooled = spool_stdin() if path == "-" else None
        if isinstance(spooled, Document):
            return spooled
        name, stdin = str(spooled or path), spooled is not None
        try:
            future = self._pool.submit(name, fmt, None, self.budget, stdin)
            try:
                return future.result()
            except BrokenProcessPool:  # its worker died: read alone, to say why
                self._pool.broken(future)
                return self._pool.read_alone(name, fmt, None, self.budget, stdin)
        finally:
            if spooled is not None:
                spooled.unlink(missing_ok=True)

    def documents(self, source: Source, *, fmt: str = "auto", text_field: str = "text",
                  id_field: str = "id", inline_bytes: int = INLINE_BYTES) -> Iterator[Document]:
        """The documents of ``source`` (before ``prepare``) as ``read_ahead``
        reads them, one after another: a JSONL file's lines here (each line
        capped, each record within the budget's ``chars``), a plain-text file
        of at most ``inline_bytes`` here (``agentflow.documents.small``), any
        other file in the worker process under the whole budget (``read``).
        Never raises for a bad file."""
        if source.jsonl:
            yield from read_source(source, fmt=fmt, text_field=text_field, id_field=id_field,
                                   budget=self.budget)
            return
        small = (read_small(source, fmt, inline_bytes)
                 if inline_bytes and inline_fits(self.budget, inline_bytes) else None)
        yield small if small is not None else self.read(str(source.path), fmt)

    def close(self) -> None:
        """Stop the worker process (idempotent)."""
        self._pool.stop(kill=False)
