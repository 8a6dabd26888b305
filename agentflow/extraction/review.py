"""A results file back into a review page: the records, and their sources re-read.

    stats = write_review(Path("out.jsonl"), Path("out.html"), inputs=["docs/*.txt"],
                         prepare=module.prepare)

The ``agentflow report`` command is this function. Records are read from the
JSONL file ``agentflow extract`` wrote (``results_file.ResultsFile``, re-exported
here); each record's source is re-read the way ``extract`` read it
(``agentflow.documents.inputs``: the file, gunzipped by suffix, read by its
kind, so a PDF shows its text layer and an HTML page its text; or the line of
a JSONL input, for ids ``path#id``), then put through the schema module's
``prepare``, so the record's spans line up with the text shown. Nothing is
cut: when the record's ``truncated`` says the model read only the first
``kept_chars``, the page shades the rest. Without ``prepare`` the whole
decoded file is shown and the spans are shifted by the record's
``source_offset``. Relative paths are resolved against the current directory,
as ``extract`` did: run ``report`` from the same directory.

Only named sources are read. A results file is data (it may come from someone
else), and its ids are paths: read blindly, an id ``/etc/shadow`` or
``~/.ssh/id_rsa`` would pull that file into a page meant to be shared. So a
source is re-read only when its file (or, for ``path#id``, its JSONL file) is
one of the files the ``inputs`` name (files, globs, directories, expanded as
``extract --input`` expands them; compared by device and inode, so ``./x``,
``x`` and a link are one file). Any other id gets a per-document note, never
its content; with no ``inputs`` no source is read.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow._exc_text import exception_text
from agentflow.documents.budget import DEFAULT_BUDGET
from agentflow.documents.inputs import Document, InputError, iter_documents, prepared
from agentflow.documents.listing import is_named, named_files
from agentflow.documents.reader_pool import BudgetedReader
from agentflow.documents.seen import SeenIds
from agentflow.errors import InvalidRecordError
from agentflow.extraction.outfile import MAX_LINE, count_settings
from agentflow.extraction.report import ReportStats, Source, write_report
from agentflow.extraction.results_file import ResultsFile
from agentflow.extraction.settings_changes import setting_changes, words

__all__ = ["ResultsFile", "SourceReader", "read_records", "write_review"]


@dataclass(frozen=True, slots=True)
class RecordsFile:
    """The records of a results file, in file order, and notes on lines skipped."""

    records: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def read_records(path: Path, *, max_line: int = MAX_LINE) -> RecordsFile:
    """Every record of a JSONL results file, line by line; for a directory (what
    ``extract --engine ray`` writes), of every ``*.jsonl`` file in it, oldest
    file first (by modification time, then name), so newer records come later.
    All are held: ``ResultsFile`` reads them without holding them.

    A line that is the cut-off beginning of a record (a write interrupted by a
    crash or Ctrl-C; ``extract`` resumes after it on a new line), NUL bytes
    after it or on a line of their own included (blocks a crash left
    unwritten: a file system may show them zeroed), is skipped with a note.
    Blank lines are ignored, and a line longer than ``max_line`` bytes (longer
    than any record ``extract`` reads back) is skipped with a note, a chunk at
    a time: never held.

    Raises:
        InvalidRecordError: a line that is not JSON, or not a record (a JSON
            object with a string ``id`` and a boolean ``ok``), naming file and line;
            a directory without ``*.jsonl`` files (one that is no regular file,
            such as a pipe, is skipped with a note); a path that is neither a
            regular file nor a directory; records of more than one schema.
        OSError: a file cannot be read.
    """
    results = ResultsFile(path, max_line=max_line)
    records = list(results)
    _one_schema(path, records)
    return RecordsFile(records, results.notes)


def _one_schema(path: Path, records: Iterable[dict[str, Any]],
                ids: SeenIds | None = None) -> None:
    """Refuse records of more than one schema (their ``"schema"`` fingerprints,
    ``agentflow.extraction.fingerprint``), or of one schema made with other
    settings (``agentflow.extraction.settings_changes``): one page shows one run's.
    One pass over ``records``; ``ids``: each record's id is added to it.

    Raises:
        InvalidRecordError: two fingerprints or more, each named with its count;
            settings that differ, each difference named with its values.
    """
    counts: dict[str, int] = {}
    settings: dict[str, tuple[dict[str, str], int]] = {}
    for record in records:
        schema = record.get("schema")
        if isinstance(schema, str):
            counts[schema] = counts.get(schema, 0) + 1
        count_settings(record, settings)
        if ids is not None:
            ids[record["id"]] = None
    if len(counts) > 1:
        held = ", ".join(f"{fp} ({n} records)" for fp, n in sorted(counts.items()))
        raise InvalidRecordError(
            f"{path}: records of {len(counts)} schemas ({held}); a review page shows one. "
            "Write each schema's run to its own --out file (agentflow extract "
            "--schema-changed new)")
    # one schema, made with other examples, instructions, another model... (records
    # written before agentflow kept a setting are not compared on it: settings_changes)
    kinds = [s for s, _ in settings.values()]
    pairs = ((a, b) for i, a in enumerate(kinds) for b in kinds[i + 1:])
    # a few are enough to say what differs (a distinct pair is unlike but for defaults
    # written out and settings not recorded, so the search ends soon)
    unlike = list(itertools.islice(((a, b) for a, b in pairs if setting_changes(a, b)), 10))
    if unlike:
        raise InvalidRecordError(
            f"{path}: records of one schema made with {len(kinds)} different settings "
            f"({'; '.join(words(unlike, 'in some records', 'in others'))}); a review page "
            "shows one run's. Write each run to its own --out file (agentflow extract "
            "--schema-changed new)")


class SourceReader:
    """``record -> Source``: re-reads a record's input the way ``extract`` read it.

    Ids: a file path (the file's text, read by its kind as ``extract`` read it:
    a PDF's text layer, an HTML page's text; ``fmt`` forces a kind as
    ``extract --format`` did); ``path#id`` or ``path#line`` (a record of
    a JSONL input, read with ``text_field``/``id_field``; each JSONL input is
    read once and only the texts of ``wanted`` ids are kept, on disk:
    ``agentflow.documents.seen``); ``-#hash``
    (standard input: cannot be re-read). Anything that cannot be read (gone,
    unreadable, corrupt, binary, empty, ``prepare`` raising) is a ``Source``
    with its ``problem`` set, never an exception.

    Only files among those ``inputs`` name are read (see the module docstring):
    any other id is a ``Source`` whose ``problem`` says it was not read.

    Args:
        inputs: the files, globs and directories whose files may be re-read
            (``extract``'s ``--input``s); empty: none is read.
        prepare: the schema module's ``prepare`` (``None``: the whole file is
            shown and spans are shifted by the record's ``source_offset``).
        wanted: the ids to keep texts of when reading a JSONL input (default: all).

    Raises:
        InputError: one of ``inputs`` matches no file.
    """

    def __init__(self, *, inputs: Sequence[str] = (),
                 prepare: Callable[[str], str] | None = None,
                 text_field: str = "text",
                 id_field: str = "id", wanted: Container[str] | None = None,
                 fmt: str = "auto") -> None:
        self._named = named_files(inputs)
        self._files = BudgetedReader(DEFAULT_BUDGET)
        self._given = bool(inputs)
        self._prepare = prepare
        self._fmt = fmt
        self._fields = (text_field, id_field)
        self._wanted = wanted
        self._jsonl: dict[str, SeenIds | str] = {}  # JSONL input -> its texts, or why none

    def __call__(self, record: Mapping[str, Any]) -> Source:
        rid: str = record["id"]
        if rid.startswith("-#"):
            return Source(None, problem="read from standard input; it cannot be read again")
        base, sep, _ = rid.rpartition("#")
        if is_named(rid, self._named):  # by its kind: a PDF's text layer, an HTML page's text
            # under extract's work budget: a costly PDF is a problem here too, not a stall
            doc = prepared(self._files.read(rid, "auto" if self._fmt == "jsonl" else self._fmt),
                           None)
        elif sep and is_named(base, self._named):
            doc = self._from_jsonl(base, rid)
        elif not self._given:
            return Source(None, problem="not read: no --input given (only the files --input "
                                        "names are read)")
        else:  # never say whether a file not named exists
            return Source(None, problem=f"not read: {rid!r} is not a file --input names "
                                        "(moved or deleted since extraction, or run from "
                                        "another directory?)")
        if doc.problem:
            return Source(None, problem=doc.problem)
        return self._shown(doc.text, record)

    def close(self) -> None:
        """Stop the worker process that parses PDF and HTML sources, and drop
        the names of the files it may read and the JSONL inputs' texts."""
        self._files.close()
        self._named.close()
        for table in self._jsonl.values():
            if isinstance(table, SeenIds):
                table.close()
        self._jsonl.clear()

    def _from_jsonl(self, base: str, rid: str) -> Document:
        table = self._jsonl.get(base)
        if table is None:
            table = self._jsonl[base] = self._jsonl_texts(base)
        if isinstance(table, str):
            return Document(rid, "", problem=table)
        text = table.get(rid)
        if not isinstance(text, str):
            return Document(rid, "", problem=f"{base} holds no record for {rid!r}")
        return Document(rid, text)

    def _jsonl_texts(self, base: str) -> SeenIds | str:
        """The texts of JSONL input ``base``'s records whose ids are wanted,
        by id, read in one pass and held on disk (``SeenIds``: memory does
        not grow with the file); why none can be had, if so."""
        text_field, id_field = self._fields
        texts = SeenIds()
        try:
            for doc in iter_documents([base], fmt="jsonl", text_field=text_field,
                                      id_field=id_field):
                if not doc.problem and (self._wanted is None or doc.id in self._wanted):
                    texts.setdefault(doc.id, doc.text)
        except (InputError, OSError) as exc:
            texts.close()
            return str(exc)
        return texts

    def _shown(self, text: str, record: Mapping[str, Any]) -> Source:
        if self._prepare is None:
            offset = record.get("source_offset", 0)
            offset = offset if isinstance(offset, int) and offset >= 0 else 0
            note = (f"the whole file; the model saw the text from character {offset}"
                    if offset else None)
            return Source(text, offset=offset, note=note)
        try:
            text = self._prepare(text)
        except Exception as exc:  # a user's prepare: report it, keep going
            return Source(None, problem=f"prepare() raised {type(exc).__name__}: "
                                        f"{exception_text(exc)}")
        if not isinstance(text, str):
            return Source(None, problem=f"prepare() returned {type(text).__name__}, not str")
        return Source(text, note="the text the model saw (re-read through prepare)")


def write_review(results: Path, out: Path | None, *, inputs: Sequence[str] = (),
                 prepare: Callable[[str], str] | None = None,
                 text_field: str = "text", id_field: str = "id",
                 title: str | None = None, stdout: Callable[[str], object] | None = None,
                 fmt: str = "auto") -> ReportStats:
    """Write the review page of ``results`` to ``out`` (``None``: through ``stdout``).

    The page is written to ``out`` plus ``.tmp`` and renamed when complete, so a
    failure never leaves half a page. Sources are re-read only from the files
    ``inputs`` name (``SourceReader``).

    Raises:
        InputError: one of ``inputs`` matches no file.
        InvalidRecordError: a line of ``results`` that is not a record.
        OSError: ``results`` cannot be read or ``out`` written.
    """
    loaded = ResultsFile(results)
    ids = SeenIds()  # every id, on disk: the texts of a JSONL input worth keeping
    try:
        _one_schema(results, loaded, ids)  # a pass that also checks every line
        return _write_review(loaded, ids, out, inputs=inputs, prepare=prepare,
                             text_field=text_field, id_field=id_field, title=title,
                             stdout=stdout, fmt=fmt)
    finally:
        ids.close()


def _write_review(loaded: ResultsFile, ids: SeenIds, out: Path | None, *, inputs: Sequence[str],
                  prepare: Callable[[str], str] | None, text_field: str, id_field: str,
                  title: str | None, stdout: Callable[[str], object] | None,
                  fmt: str) -> ReportStats:
    """``write_review`` once the results are checked (``ids``: theirs)."""
    reader = SourceReader(inputs=inputs, prepare=prepare, text_field=text_field, id_field=id_field,
                          wanted=ids, fmt=fmt)
    page_title = title or f"agentflow review: {loaded.path.name}"
    notes = loaded.notes  # of the pass that checked them
    try:
        if out is None:
            if stdout is None:
                raise ValueError("write_review needs out or stdout")
            return write_report(loaded, reader, stdout, title=page_title, notes=notes)
        partial = out.with_name(out.name + ".tmp")
        try:
            with partial.open("w", encoding="utf-8", errors="replace", newline="\n") as sink:
                stats = write_report(loaded, reader, sink.write, title=page_title,
                                     notes=notes)
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
        return stats
    finally:
        reader.close()
