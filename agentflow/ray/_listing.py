"""The Ray engine's input listing, lazy: what ``--input`` names is listed in a
Ray read task as the pipeline runs, a block of ``BLOCK_ROWS`` paths at a time,
so the first documents are read (and sent) before the listing of a folder of
a million files ends, and the driver never holds the list.

    listing = input_listing(["/data/corpus"], exclude="/data/out")
    ds = ray.data.read_datasource(listing)     # columns path, problem
    ...                                        # after the run:
    tell_listing_notes()                       # on_exclude / on_skip, on the driver

The order is the walk's (``agentflow.documents.listing``: files by name, then
folders), one task lists them all, so it is the same at every run. Entries left
out on purpose (a file of the ``--out`` folder met through a link, a link to a
folder: not followed) cannot be told to the driver from the task as they are
met: they are kept by a small actor and told by ``tell_listing_notes``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentflow._logging import get_logger
from agentflow.documents.listing import Skipped, expand
from agentflow.documents.named import within
from agentflow.ray.refs import ray_module

__all__ = ["BLOCK_ROWS", "input_listing", "tell_listing_notes"]

BLOCK_ROWS = 256
"""Paths per block the listing task yields (its read-ahead is Ray Data's)."""

_pending: list[tuple[str, Any, Callable[[Path], None] | None,
                    Callable[[Path, str], None] | None]] = []
"""The listings whose notes are still to tell: ``(session, notes actor, on_exclude,
on_skip)``; the session (``_job_id``) is the ``ray.init`` that holds the actor."""


def _job_id() -> str:
    """The current Ray session: its job id on the driver's node id (a new
    cluster numbers its jobs from 1 again, and its node has a new id)."""
    context = ray_module().get_runtime_context()
    return f"{context.get_job_id()}@{context.get_node_id()}"


def _notes_actor() -> Any:
    """An actor that keeps the entries the listing left out (``(kind, path, why)``)."""
    rt = ray_module()

    @rt.remote(num_cpus=0)
    class ListingNotes:
        def __init__(self) -> None:
            self.notes: dict[tuple[str, str], str] = {}  # a retried task: told once

        def add(self, kind: str, path: str, why: str) -> None:
            self.notes.setdefault((kind, path), why)

        def take(self) -> list[tuple[str, str, str]]:
            return [(kind, path, why) for (kind, path), why in self.notes.items()]

    return ListingNotes.remote()  # type: ignore[attr-defined]


def _blocks(specs: Sequence[str], out: str | None, notes: Any) -> Iterator[Any]:
    """The listing's blocks (pyarrow tables: ``path``, ``problem``), as the walk
    goes. The entries left out are given to ``notes`` and kept there before the
    last block is out: the driver asks the actor only after the run, from
    another caller, whose call Ray may run before this task's."""
    pa: Any = importlib.import_module("pyarrow")  # (Ray Data's own dependency)
    schema = pa.schema([("path", pa.string()), ("problem", pa.string())])
    rows: list[dict[str, str | None]] = []
    told: list[Any] = []  # the notes actor's calls, awaited at the end
    for spec in specs:
        for path, problem in expand(spec):
            if isinstance(problem, Skipped):  # a link to a folder, not followed
                if notes is not None:
                    told.append(notes.add.remote("skip", str(path), str(problem)))
                continue
            if out is not None and within(os.path.realpath(path), out):
                if notes is not None:
                    told.append(notes.add.remote("exclude", str(path), ""))
                continue
            rows.append({"path": str(path), "problem": problem})
            if len(rows) == BLOCK_ROWS:
                yield pa.Table.from_pylist(rows, schema=schema)
                rows = []
    if told:
        ray_module().get(told)
    if rows:
        yield pa.Table.from_pylist(rows, schema=schema)


def input_listing(specs: Sequence[str], *, exclude: str | os.PathLike[str] | None = None,
                  on_exclude: Callable[[Path], None] | None = None,
                  on_skip: Callable[[Path, str], None] | None = None) -> Any:
    """A Ray Data datasource (``ray.data.read_datasource``) of the paths ``specs``
    name, listed lazily in one read task (see the module docstring). A spec
    that names nothing is refused here, from its first entry (a folder's first
    entry needs only that folder listed).

    Args:
        exclude: a folder whose files are never inputs (each one met is told
            to ``on_exclude``).
        on_skip: told each entry left out on purpose and why.

    Raises:
        InputError: a spec matches no file.
    """
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    for spec in specs:  # refused now, not in a task: listed up to its first entry
        next(iter(expand(spec)), None)
    out = os.path.realpath(exclude) if exclude is not None else None
    notes = _notes_actor() if on_exclude is not None or on_skip is not None else None
    if notes is not None:
        _pending.append((_job_id(), notes, on_exclude, on_skip))
    names = list(specs)

    class InputListing(Datasource):
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[Any]:
            return [ReadTask(lambda: _blocks(names, out, notes),
                             BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None))]

    return InputListing()


def tell_listing_notes() -> None:
    """Tell the ``on_exclude`` and ``on_skip`` of every ``input_listing`` whose
    pipeline has run what its listing left out, on this (the driver's) process,
    and drop their actors.

    A listing made under an earlier Ray session of this process (``ray.shutdown``
    then ``ray.init``) is dropped untold, with a ``listing_notes_dropped``
    warning: its actor, and what it kept, ended with that session's cluster."""
    rt = ray_module()
    job = _job_id()
    while _pending:
        made_in, notes, on_exclude, on_skip = _pending.pop(0)
        if made_in != job:
            get_logger("agentflow.ray").warning(
                "listing_notes_dropped", reason="made under an earlier Ray session",
                untold=[name for name, told in (("on_exclude", on_exclude),
                                                ("on_skip", on_skip)) if told is not None])
            continue
        for kind, path, why in rt.get(notes.take.remote()):
            if kind == "exclude" and on_exclude is not None:
                on_exclude(Path(path))
            elif kind == "skip" and on_skip is not None:
                on_skip(Path(path), why)
        rt.kill(notes)
