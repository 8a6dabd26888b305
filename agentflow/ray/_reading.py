"""The Ray engine's reads: each input the listing names read under the work
budget in a Ray task, as the local engine reads it.

A Ray read task (``read_batch``, mapped over the listing's blocks of paths)
reads with a ``BudgetedReader`` (``agentflow.documents.reader_pool``) of its
own: a JSONL file's lines and a small plain-text file in the task, any other
file in a worker process the reader starts, under the whole
``agentflow.documents.budget`` (pages, content-stream operators, characters,
CPU seconds, memory). The CPU and memory limits can only be set on a whole
process, and a parse in native code past its CPU limit ends that process:
done in the Ray task's own process, that would end the task (and with Ray's
retries, the run). Past a limit, the input is a failed row
(``DocumentTooComplexError`` naming the limit) and the task reads on. The
worker process lives as long as the batch: stopped when the task ends, so
none is left behind when Ray ends its worker processes. Ray Data splits the
listing into blocks of a path or two, so a task starts one often: the Ray
worker process's ``forkserver`` imports the reader's modules once
(``PRELOAD``), and each worker process is forked with them (about 0.02 s a
start, 0.7 s without).

Standard input is the driver's (a task's is not the user's): ``read_stdin``
reads it there as one document, spooled to a file and read in a worker
process under the same budget (``BudgetedReader.read``), a Dataset of one row.
It is read when ``read_documents`` is called, not lazily as the local engine
reads it (when the listing reaches ``-``): a Dataset's reads run again each
time it is consumed (``take_all``, a writer, ``count``; ``materialize`` keeps
a copy but leaves the Dataset as it was), and standard input can be read
only once; a read task, which could read it lazily, runs in a worker
process (maybe on another node) that has neither the user's standard input
nor the driver's disk to spool it to. What it holds early is one document
within the budget's ``chars``, in the object store.
"""

from __future__ import annotations

import importlib
import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agentflow.documents.budget import WorkBudget
from agentflow.documents.inputs import Document, Source, is_jsonl, prepared
from agentflow.documents.reader_pool import BudgetedReader
from agentflow.ray.refs import ray_module

if TYPE_CHECKING:
    import ray.data

__all__ = ["OUT_CHARS", "OUT_ROWS", "PRELOAD", "doc_row", "read_batch", "read_stdin"]

OUT_ROWS = 64
"""Most rows in one block a read task yields."""

OUT_CHARS = 64 * 1024 * 1024
"""Characters of text past which a read task yields the rows it holds (a
block stays well below Arrow's limits, and the task's memory bounded)."""

PRELOAD = ("agentflow.documents.reader_pool", "pypdf", "selectolax.lexbor")
"""Modules a Ray worker process's ``forkserver`` imports before it forks the
reader's worker processes (one it cannot import, an extra not installed, is
left out)."""


def doc_row(doc: Document) -> dict[str, Any]:
    """The Dataset row of ``doc`` (the columns ``read_documents`` documents)."""
    return {"id": doc.id, "text": doc.text, "problem": doc.problem, "source_offset": doc.offset,
            "problem_type": doc.problem_type or "", "reason": doc.reason or "",
            "pages": orjson.dumps(doc.pages).decode() if doc.pages is not None else ""}


def _schema() -> Any:
    pa: Any = importlib.import_module("pyarrow")  # (Ray Data's own dependency)
    return pa.schema([("id", pa.string()), ("text", pa.large_string()),
                      ("problem", pa.string()), ("source_offset", pa.int64()),
                      ("problem_type", pa.string()), ("reason", pa.string()),
                      ("pages", pa.string())])


def read_batch(batch: Any, *, fmt: str, text_field: str, id_field: str,
               prepare: Callable[[str], str] | None, budget: WorkBudget) -> Iterator[Any]:
    """The documents of a block of the listing (a pyarrow table: ``path``,
    ``problem``), as pyarrow tables of ``doc_row`` rows, each input read
    under ``budget`` (see the module docstring)."""
    pa: Any = importlib.import_module("pyarrow")
    schema = _schema()
    rows: list[dict[str, Any]] = []
    chars = 0
    # (this process is Ray's worker: its forkserver, when it starts, is the reader's)
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    reader = BudgetedReader(budget)
    try:
        for path, problem in zip(batch.column("path").to_pylist(),
                                 batch.column("problem").to_pylist(), strict=True):
            for doc in _documents(reader, path, problem, fmt, text_field, id_field):
                row = doc_row(prepared(doc, prepare))
                rows.append(row)
                chars += len(row["text"])
                if len(rows) >= OUT_ROWS or chars >= OUT_CHARS:
                    yield pa.Table.from_pylist(rows, schema=schema)
                    rows, chars = [], 0
    finally:
        reader.close()
    if rows:
        yield pa.Table.from_pylist(rows, schema=schema)


def _documents(reader: BudgetedReader, path: str, problem: str | None, fmt: str,
               text_field: str, id_field: str) -> Iterator[Document]:
    """The documents of one listed entry (``problem``: found while listing,
    a directory entry that cannot be read)."""
    if problem:
        yield Document(path, "", problem=problem)
        return
    source = Source(Path(path), is_jsonl(Path(path), fmt))
    yield from reader.documents(source, fmt=fmt, text_field=text_field, id_field=id_field)


def read_stdin(*, fmt: str, prepare: Callable[[str], str] | None,
               budget: WorkBudget) -> ray.data.Dataset:
    """A Dataset of one row: standard input read here (on the driver) as one
    document under ``budget``, as ``agentflow extract`` reads it locally."""
    pa: Any = importlib.import_module("pyarrow")
    reader = BudgetedReader(budget)
    try:
        doc = reader.read("-", fmt)
    finally:
        reader.close()
    table = pa.Table.from_pylist([doc_row(prepared(doc, prepare))], schema=_schema())
    dataset: ray.data.Dataset = ray_module().data.from_arrow(table)
    return dataset
