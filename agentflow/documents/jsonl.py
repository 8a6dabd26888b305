"""JSONL inputs for the ``extract`` command: one document per line, read one
line at a time, so memory holds one line however long the file.

    for doc_id, got in jsonl_records(Path("docs.jsonl"), "text", "id"):
        ...   # got: the record's text, or the Unusable that says why the line is not a document

A line is a document when it is a JSON object with a string ``text_field``;
its id is ``FILE#<id_field>`` (``FILE#<line>`` without one, or with ``null``).
Every other line is one failed document with the id ``FILE:LINE``, and the
lines after it are read on: a line that is not JSON, not an object, lacks the
text field, has an id that is not a string or number, or repeats an id (a
missing id's line number counts: the message names the id and both lines)
(``InvalidInputLineError``), a line longer than
``MAX_LINE_BYTES`` (skipped without being held whole), a line whose bytes are
binary or decode in no encoding (``agentflow.documents.encoding``: UTF-8,
else what ``charset-normalizer`` detects, each strict). A file that starts
with a UTF-16 byte-order mark (Windows PowerShell's ``>``) is decoded as one
UTF-16 stream, a line at a time. Only a fault of the
file itself (it cannot be read, a corrupt ``.gz``) ends it, as one failed
document with the file's name.
"""

from __future__ import annotations

import contextlib
import io
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson

from agentflow.documents.encoding import decode_text
from agentflow.documents.line_ids import LineIds, integer_id
from agentflow.documents.reading import MAX_INPUT_BYTES, Unusable, open_input
from agentflow.documents.seen import MISSING
from agentflow.errors import DocumentError

__all__ = ["MAX_BLANK_LINES", "MAX_LINE_BYTES", "jsonl_lines", "jsonl_records"]

MAX_LINE_BYTES = MAX_INPUT_BYTES
"""Longest JSONL line read, in bytes (a document's own limit); a longer line
is one failed document, and the lines after it are read."""

MAX_BLANK_LINES = 100_000
"""Most blank lines in a row (or ``MAX_LINE_BYTES`` of them) a JSONL file
may hold: past either, the file ends with one failed document naming the
limit. Blank lines give no document, so nothing else bounds them: a 50 KB
``.gz`` of newlines is 52 million of them (23 s of reading, in a thread the
run cannot cancel), a 10 MB one over an hour."""

_SKIP_LIMIT = MAX_LINE_BYTES
"""Most bytes skipped past ``MAX_LINE_BYTES`` in one line: a longer line ends
the file (a ``.gz`` can inflate one line to terabytes)."""

_SKIP_CHUNK = 1 << 20
"""Bytes read at a time while skipping the rest of a line that is too long."""

_JSON_TYPES = {dict: "object", list: "array", bool: "boolean"}
"""The JSON names of the types an id cannot be."""

_BAD_LINE = ("the JSONL line is not a record with the text field; fix the line and run "
             "again (the other lines were read)")


def jsonl_records(path: Path, text_field: str, id_field: str, *,
                  max_line_bytes: int = MAX_LINE_BYTES
                  ) -> Iterator[tuple[str, str | Unusable]]:
    """``(id, text)`` for each document line of ``path``, ``(id, problem)`` for
    each line that is not one (see the module docstring); blank lines are
    skipped.

    Raises:
        Unusable: the file itself cannot be read (after the lines read before).
    """
    seen = LineIds()  # each id -> its line: memory does not grow with the file
    blank = blank_bytes = 0  # blank lines in a row, and their bytes
    try:
        for number, line in jsonl_lines(path, max_line_bytes=max_line_bytes):
            if isinstance(line, Unusable):
                blank = blank_bytes = 0
                yield f"{path}:{number}", line
            elif line.strip():
                blank = blank_bytes = 0
                yield _record(path, number, line, text_field, id_field, seen)
            else:
                blank, blank_bytes = blank + 1, blank_bytes + len(line)
                if blank > MAX_BLANK_LINES or blank_bytes > max_line_bytes:
                    raise Unusable(
                        f"{path}:{number}: more than {MAX_BLANK_LINES:,} blank lines (or "
                        f"{max_line_bytes:,} bytes of them) in a row; the rest of the file "
                        "is not read",
                        reason="a JSONL file holds one document per line: this many blank "
                               "lines in a row is a damaged or hostile file (a .gz of "
                               "newlines); the documents before them were read")
    finally:
        seen.close()


def _record(path: Path, number: int, line: str, text_field: str, id_field: str,
            seen: LineIds) -> tuple[str, str | Unusable]:
    """The ``(id, text or problem)`` of line ``number``."""
    bad = f"{path}:{number}"
    try:
        record: Any = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return bad, _bad_line(path, number, f"not JSON ({exc})")
    if not isinstance(record, dict):
        return bad, _bad_line(path, number, f"a JSON {type(record).__name__}, not an object "
                                            f"with a string field {text_field!r}")
    if not isinstance(record.get(text_field), str):
        return bad, _bad_line(path, number, f"no string field {text_field!r} (fields: "
                                            f"{', '.join(map(str, list(record)[:10])) or 'none'})")
    rid = record.get(id_field)
    n: int | None  # the integer the id's text is, if any
    if rid is None:  # no id (or null): the line number is the id
        key, n = str(number), number
    elif type(rid) is str:
        key, n = rid, integer_id(rid)  # a run of integers needs no database statement
    elif type(rid) is int or type(rid) is float:
        key, n = str(rid), rid if type(rid) is int else None
    else:  # an object, array or boolean has no one text an id could be
        return bad, _bad_line(path, number, f"field {id_field!r} is a JSON "
                                            f"{_JSON_TYPES.get(type(rid), 'value')}, not a "
                                            "string or number (ids are strings or numbers)")
    doc_id = f"{path}#{key}"
    first = seen.setdefault(doc_id, n, number)
    if first is not MISSING:  # ids key the results: a repeat would lose one document
        shown = orjson.dumps(rid).decode() if rid is not None else (
            f"{number} (the line's number: it has no {id_field!r} field)")
        return bad, _bad_line(path, number, f"id {shown} already used on line {first}; ids "
                                            "must be unique within a file")
    return doc_id, record[text_field]


def jsonl_lines(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES
                ) -> Iterator[tuple[int, str | Unusable]]:
    """``(number, line)`` for each line of a JSONL file (gunzipped by suffix;
    ``-``: standard input),
    each decoded on its own; ``(number, problem)`` for a line longer than
    ``max_line_bytes`` (skipped a chunk at a time, never held whole) or one
    that no encoding reads. The lines after either are read on.

    Raises:
        Unusable: the file cannot be read, or its ``.gz`` is corrupt.
    """
    try:
        with _open(path) as f:
            peek = getattr(f, "peek", None)
            if peek is not None and peek(2)[:2] in _UTF16_BOMS:
                yield from _utf16_lines(path, f, max_line_bytes)
                return
            number = 0
            while raw := f.readline(max_line_bytes + 1):
                number += 1
                if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                    yield number, _bad_line(path, number, f"line longer than {max_line_bytes} "
                                                          "bytes; not read")
                    if not _skip_line(f.readline, _SKIP_LIMIT):
                        raise Unusable(
                            f"{path}:{number}: line longer than {max_line_bytes + _SKIP_LIMIT:,}"
                            " bytes; the rest of the file is not read",
                            reason="a line this long is a damaged or hostile file (a .gz "
                                   "inflating to one endless line); the lines before it "
                                   "were read")
                    continue
                yield number, _decoded(path, number, raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise Unusable(f"{path}: cannot read: {exc}") from exc


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks of UTF-16 (little, big endian): a file that starts with
one is decoded as one stream (Windows PowerShell's ``>`` and ``Out-File`` write
UTF-16LE with a BOM), since its newline is two bytes and a line split at the
byte ``\n`` decodes as nothing."""


def _utf16_lines(path: Path, f: Any, max_line_bytes: int
                 ) -> Iterator[tuple[int, str | Unusable]]:
    """``jsonl_lines`` of a UTF-16 file whose BOM ``f`` starts with: decoded as a
    stream (the codec reads the BOM), each line at most ``max_line_bytes``
    bytes (half as many characters; a longer one skipped as ``jsonl_lines``
    skips it).

    Raises:
        Unusable: bytes UTF-16 cannot decode (an odd byte at the end), or a line
            past the skip limit.
    """
    # a lone surrogate is kept for the line's JSON reader to refuse (that line alone)
    text = io.TextIOWrapper(f, encoding="utf-16", errors="surrogatepass", newline=None)
    limit = max(1, max_line_bytes // 2)
    number = 0
    try:
        while line := text.readline(limit + 1):
            number += 1
            if len(line) > limit and not line.endswith("\n"):
                yield number, _bad_line(path, number, f"line longer than {max_line_bytes} "
                                                      "bytes; not read")
                if not _skip_line(text.readline, _SKIP_LIMIT // 2):
                    raise Unusable(f"{path}:{number}: line longer than "
                                   f"{max_line_bytes + _SKIP_LIMIT:,} bytes; the rest of the "
                                   "file is not read")
                continue
            yield number, line
    except UnicodeDecodeError as exc:
        raise Unusable(f"{path}:{number + 1}: not valid UTF-16 (its byte-order mark says so): "
                       f"{exc.reason}; the rest of the file is not read") from None
    finally:
        with contextlib.suppress(ValueError):
            text.detach()  # the file is closed by its opener


def _open(path: Path) -> AbstractContextManager[Any]:
    """``path`` opened for reading bytes: ``-`` is standard input (left open),
    a ``.gz`` suffix gunzipped."""
    if str(path) == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        return contextlib.nullcontext(stdin if stdin is not None else io.BytesIO(
            sys.stdin.read().encode("utf-8", "surrogateescape")))
    return open_input(path)


def _skip_line(readline: Callable[[int], Any], limit: int) -> bool:
    """Read on (``readline`` of the file) past the end of the current line, a
    chunk at a time, at most ``limit`` bytes; whether its end (or the file's)
    was reached."""
    skipped = 0
    while chunk := readline(_SKIP_CHUNK):
        if chunk.endswith(b"\n" if isinstance(chunk, bytes) else "\n"):
            return True
        skipped += len(chunk)
        if skipped > limit:
            return False
    return True


def _decoded(path: Path, number: int, raw: bytes) -> str | Unusable:
    """Line ``number``'s text (a BOM dropped from the first), or why it has none."""
    if number == 1:
        raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        decoded = decode_text(raw, name=f"{path}:{number}")
    except DocumentError as exc:
        return Unusable(str(exc), type(exc).__name__, exc.reason or _BAD_LINE)
    if decoded is None:
        return _bad_line(path, number, "binary, not text")
    return decoded


def _bad_line(path: Path, number: int, what: str) -> Unusable:
    """The problem of JSONL line ``number`` of ``path``."""
    return Unusable(f"{path}:{number}: {what}", "InvalidInputLineError", _BAD_LINE)
