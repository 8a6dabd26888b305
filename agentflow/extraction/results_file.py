"""A results file read back, record by record: the JSONL file (or directory of
them) ``agentflow extract`` wrote, a line at a time and never held whole, with a
note for each line skipped (cut off by an interrupted write, NUL blocks a crash
left, longer than any record). ``agentflow.extraction.review`` builds the
review page on it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentflow._nesting import nesting_depth
from agentflow.documents.names import loads_record
from agentflow.errors import InvalidRecordError
from agentflow.extraction.outfile import MAX_LINE

__all__ = ["MAX_RECORD_DEPTH", "ResultsFile"]

MAX_RECORD_DEPTH = 200
"""Deepest nesting of a record read back (the record object is depth 1): a
line nested deeper is skipped with a note, as a line too long is. JSON
parsers read 1,024 levels, past what the review page's walks over a record
(and Python's recursion limit) can take; extract's records nest as deep as
their schema, far less."""


def _torn(line: bytes) -> bool:
    """Whether ``line`` is the cut-off beginning of a JSON object (an interrupted write)."""
    if not line.lstrip().startswith(b"{"):
        return False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return exc.pos >= len(text)
    return False


class ResultsFile:
    """The records of a JSONL results file, or of a directory of them (what
    ``extract --engine ray`` writes: every ``*.jsonl`` file in it, oldest file
    first, by modification time then name, so newer records come later),
    read from disk at each pass: iterating gives each record in file order,
    and none is held (``write_report`` reads it in passes). ``notes``: the
    lines the last complete pass skipped (see ``review.read_records``).

    Raises:
        InvalidRecordError: (here) a directory without ``*.jsonl`` files, a path
            that is neither a regular file nor a directory; (iterating) a line
            that is not JSON or not a record, naming file and line.
        OSError: a file cannot be read.
    """

    def __init__(self, path: Path, *, max_line: int = MAX_LINE) -> None:
        self.path, self.max_line = path, max_line
        self._listing: list[str] = []
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"), key=lambda f: (f.stat().st_mtime, f.name))
            self.files = [f for f in found if f.is_file()]  # (a pipe would block the read)
            self._listing += [f"{f}: not a regular file; skipped" for f in found
                              if not f.is_file()]
            if not self.files:
                raise InvalidRecordError(f"{path}: a directory without *.jsonl results files")
        elif path.exists() and not path.is_file():
            raise InvalidRecordError(
                f"{path}: not a regular file (a pipe, a socket or a device, which would block "
                "the read or never end): give the JSONL file extract wrote, or a directory of "
                "them")
        else:
            self.files = [path]
        self.notes: list[str] = list(self._listing)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        notes = list(self._listing)
        for file in self.files:
            yield from _read_lines(file, notes, self.max_line)
        self.notes = notes


_SKIP_CHUNK = 256 * 1024


def _lines(path: Path, max_line: int) -> Iterator[tuple[int, bytes | int]]:
    """``(number, line)`` for each line of ``path`` (without its newline), or
    ``(number, length)`` for a line longer than ``max_line`` (read past a
    chunk at a time)."""
    with path.open("rb") as f:
        number = 0
        while raw := f.readline(max_line + 1):
            number += 1
            if len(raw) <= max_line or raw.endswith(b"\n"):
                yield number, raw.rstrip(b"\r\n")
                continue
            length = len(raw)
            while chunk := f.read(_SKIP_CHUNK):
                newline = chunk.find(b"\n")
                if newline >= 0:  # the next line starts after it
                    length += newline
                    f.seek(newline + 1 - len(chunk), os.SEEK_CUR)
                    break
                length += len(chunk)
            yield number, length


def _read_lines(path: Path, notes: list[str], max_line: int) -> Iterator[dict[str, Any]]:
    """The records of ``path``, as read; each line skipped is added to ``notes``."""
    for number, line in _lines(path, max_line):
        if isinstance(line, int):
            notes.append(f"{path}:{number}: skipped a line of {line:,} bytes (longer than a "
                         f"record read back: {max_line:,})")
            continue
        if not line.strip():
            continue
        if not line.strip(b"\0 \t"):  # a crash can leave a file's last blocks zeroed
            notes.append(f"{path}:{number}: skipped {len(line):,} NUL bytes (blocks a "
                         "crash left unwritten)")
            continue
        try:
            record = loads_record(line)  # an id from a non-UTF-8 name: \udcXX escapes
        except orjson.JSONDecodeError as exc:
            if _torn(line.rstrip(b"\0")):
                notes.append(f"{path}:{number}: skipped a cut-off record (an interrupted "
                             "write)")
                continue
            raise InvalidRecordError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str) or (
                not isinstance(record.get("ok"), bool)):
            raise InvalidRecordError(
                f"{path}:{number}: not an extraction record (needs a string 'id' and a "
                "boolean 'ok')")
        if nesting_depth(record, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH:
            notes.append(f"{path}:{number}: skipped a record nested more than "
                         f"{MAX_RECORD_DEPTH} levels deep (deeper than a record read back)")
            continue
        yield record
