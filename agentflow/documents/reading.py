"""Reading one input's bytes for the ``extract`` command: a path (``-``:
stdin), gunzipped by suffix, within ``MAX_INPUT_BYTES``; shared by the
listing (``agentflow.documents.inputs``) and media read when sent
(``agentflow.documents.deferred``)."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from agentflow.errors import UnreadableDocumentError

__all__ = ["MAX_INPUT_BYTES", "TOO_LARGE", "InputError", "Unusable", "open_input", "read_bytes",
           "too_large"]

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest input read (after gunzip), in bytes; a larger one is a failed record."""


class InputError(ValueError):
    """An input path that matches nothing, or a JSONL record without the text field."""


class Unusable(InputError):
    """One document cannot be read as text (reported per document, not raised:
    ``agentflow.documents.inputs.failed_document`` makes its failed document).

    Attributes:
        problem_type: the public error type the record names
            (``UnreadableDocumentError`` unless a reader raised another
            ``DocumentError``).
        reason: the record's ``error.reason``.
    """

    def __init__(self, message: str, problem_type: str = "UnreadableDocumentError",
                 reason: str = UnreadableDocumentError.default_reason) -> None:
        super().__init__(message)
        self.problem_type, self.reason = problem_type, reason


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path`` (``-``: stdin), gunzipped by suffix. A file whose
    size is over ``MAX_INPUT_BYTES`` is refused before any byte is read, so
    refusing it costs no memory; no read asks for more memory than the bytes
    it gets (``read(MAX_INPUT_BYTES + 1)`` set aside 256 MiB for every file,
    which a worker's memory budget refused).

    Raises:
        Unusable: unreadable, corrupt ``.gz``, or too large.
    """
    try:
        if str(path) == "-":  # the same size and binary checks as a file
            stdin = getattr(sys.stdin, "buffer", None)
            raw = (_read_at_most(stdin.read) if stdin is not None
                   else sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8", "surrogateescape"))
        elif path.suffix == ".gz":
            with open_input(path) as f:
                raw = _read_at_most(f.read)
        else:
            with open_input(path, unzip=False) as f:
                size = os.fstat(f.fileno()).st_size  # a 2 GB file is refused unread
                if size > MAX_INPUT_BYTES:
                    raise Unusable(too_large(path, size), reason=TOO_LARGE)
                raw = f.read(size + 1)
                if len(raw) > size:  # it grew since: the rest, up to the limit
                    raw += _read_at_most(f.read, MAX_INPUT_BYTES - len(raw))
    except (OSError, EOFError, zlib.error) as exc:
        raise Unusable(f"{path}: cannot read: {exc}") from exc
    if len(raw) > MAX_INPUT_BYTES:
        raise Unusable(too_large(path), reason=TOO_LARGE)
    return raw


TOO_LARGE = (f"one input is read up to {MAX_INPUT_BYTES // 1024**2} MiB (MAX_INPUT_BYTES; "
             "a .gz once inflated): split it into several files, or into JSONL records "
             "(one document per line)")
"""The ``reason`` of a document over ``MAX_INPUT_BYTES`` (``too_large`` is its problem)."""


@contextlib.contextmanager
def open_input(path: Path, *, unzip: bool = True) -> Iterator[BinaryIO]:
    """``path`` opened to read its bytes (gunzipped by a ``.gz`` suffix when
    ``unzip``), refused unless it is a regular file when opened: a file
    replaced by a pipe or a device since it was listed would block the read
    forever, or never end. It is opened without blocking (a pipe with no
    writer opens at once), checked by its descriptor, then read as usual.

    Raises:
        Unusable: not a regular file.
        OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unusable(f"{path}: not a regular file; not read")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        if unzip and path.suffix == ".gz":
            with gzip.GzipFile(fileobj=f) as inflated:
                yield inflated  # type: ignore[misc]
        else:
            yield f


_CHUNK = 1 << 20


def _read_at_most(read: Callable[[int], bytes], limit: int = MAX_INPUT_BYTES) -> bytes:
    """Up to ``limit + 1`` bytes from ``read``, a chunk at a time (one more than
    ``limit`` says there were more), gathered in a ``BytesIO``, whose buffer
    grows in place and is returned without a copy: memory is about the bytes
    read (a list of chunks joined would need twice that)."""
    buffer = io.BytesIO()
    got = 0
    while got <= limit and (chunk := read(min(_CHUNK, limit + 1 - got))):
        buffer.write(chunk)
        got += len(chunk)
    return buffer.getvalue()


def too_large(path: Path, size: int | None = None, limit: int = MAX_INPUT_BYTES) -> str:
    """The problem of a file over ``limit`` bytes (``size``: its size, if known)."""
    known = f" ({size:,} bytes)" if size is not None else ""
    return f"{path}: larger than {limit} bytes{known}; not read"
