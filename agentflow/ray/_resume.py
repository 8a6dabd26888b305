"""What an output directory of ``write_jsonl`` files already holds, so a run
can resume: ``read_output_dir`` on the driver (done ids, schema fingerprints,
settings, the files read), ``NotDone`` in the workers (the rows still to do,
read from the same files), ``done_ids`` as a plain set."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow.documents.seen import SeenIds

__all__ = ["NotDone", "OutputDir", "done_ids", "read_output_dir"]


@dataclass
class OutputDir:
    """What a directory of ``write_jsonl`` files holds (``read_output_dir``).

    Attributes:
        done: ids of the inputs with an ok record (failed inputs are not
            done), in a ``SeenIds`` (``agentflow.documents.seen``: constant
            memory, whatever the number of ids).
        schemas: schema fingerprint -> records carrying it (``"schema"``, which
            every record of ``extract_dataset`` carries:
            ``agentflow.extraction.fingerprint``; older records without one are
            not counted).
        files: ``(path, size in bytes)`` of each file read, in order: what
            ``NotDone`` reads again in Ray's workers.
        settings: the distinct ``"settings"`` of the records, each with its
            count (``agentflow.extraction.outfile.count_settings``).
    """

    done: SeenIds = field(default_factory=SeenIds)
    schemas: dict[str, int] = field(default_factory=dict)
    files: tuple[tuple[str, int], ...] = ()
    settings: dict[str, tuple[dict[str, str], int]] = field(default_factory=dict)


def read_output_dir(path: str | os.PathLike[str]) -> OutputDir:
    """Read every ``*.jsonl`` file under the directory ``path`` once (a torn
    line is skipped; a missing directory holds nothing). Ray names its files
    at random, so file order says nothing of which run came last: one ok
    record is enough for an id to be done."""
    root = Path(path)
    held = OutputDir()
    files = []
    for file in sorted(root.glob("*.jsonl")) if root.is_dir() else ():
        files.append((str(file), file.stat().st_size))
        _read_done(file, held.done, held.schemas, held.settings)
    held.files = tuple(files)
    return held


def _read_done(file: Path, done: SeenIds, schemas: dict[str, int] | None = None,
               settings: dict[str, tuple[dict[str, str], int]] | None = None) -> None:
    """Add the id of each ok record of ``file`` (``read_records``) to ``done``
    and, with ``schemas``, count each record's schema fingerprint there (with
    ``settings``, its settings: ``count_settings``)."""
    from agentflow.extraction.outfile import count_settings, read_records

    for _, record in read_records(file):
        if record.get("ok") is True:
            done.setdefault(record["id"], None)
        schema = record.get("schema")
        if schemas is not None and isinstance(schema, str):
            schemas[schema] = schemas.get(schema, 0) + 1
        if settings is not None:
            count_settings(record, settings)


@dataclass(frozen=True)
class NotDone:
    """A Ray Data row filter (``Dataset.filter``): the rows whose ``id`` has
    no ok record in the output files ``files`` (``OutputDir.files``, as the
    driver read them).

    What goes to the workers is the file list, not the ids: each worker
    process reads those files once into a ``SeenIds`` of its own (constant
    memory; kept for the next rows and blocks of the same run), so neither
    the driver nor a worker holds a set that grows with the corpus. The
    workers write the output directory, so they can read it too.
    """

    files: tuple[tuple[str, int], ...]

    def __call__(self, row: Mapping[str, Any]) -> bool:
        with _DONE_LOCK:  # a SeenIds serves one thread at a time
            return row["id"] not in _done_in(self.files)


_DONE: dict[tuple[tuple[str, int], ...], SeenIds] = {}
"""The worker process's done ids, for the one file list it last read."""
_DONE_LOCK = threading.Lock()


def _done_in(files: tuple[tuple[str, int], ...]) -> SeenIds:
    """The done ids of ``files`` (read now, or kept from the last call); lock held."""
    done = _DONE.get(files)
    if done is None:
        for old in _DONE.values():  # another run's files: not needed any more
            old.close()
        _DONE.clear()
        done = _DONE[files] = SeenIds()
        for name, _ in files:
            _read_done(Path(name), done)
    return done


def done_ids(path: str | os.PathLike[str]) -> set[str]:
    """Ids of the inputs with an ok record in any ``*.jsonl`` file under the
    directory ``path``, as a ``set`` in memory (``read_output_dir(path).done``
    holds them in constant memory)."""
    return {key for key, _ in read_output_dir(path).done.items()}
