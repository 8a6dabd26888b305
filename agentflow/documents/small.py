"""Small plain-text files, read without a trip to the worker pool.

A worker process reads each costly input under the work budget
(``agentflow.documents.reader_pool``), but a round trip there (pickling the
request and the text, two pipes, the pool's queue thread) costs far more
than reading a small text file, and nothing in a small text file can come
near the budget: its characters are at most its bytes, its decoding
(``agentflow.documents.encoding``: UTF-8, else ``charset-normalizer``'s
guess over samples) takes milliseconds and a few times its size in memory.
So a regular file of at most ``INLINE_BYTES`` bytes, not ``.gz`` (a small
``.gz`` can inflate to anything), whose first bytes and name say plain text
(not PDF or HTML, whose parsers are the costly part), is read where the
caller is, when the budget leaves room for it (``inline_fits``). Anything
else, and a file that grew past the size since it was listed, goes to the pool.
Standard input, once spooled to a file, is read by the same rule
(``read_small_stdin``): a short or empty text piped in starts no worker.

Measured in ``benchmarks/bench_small_files.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentflow.documents.budget import WorkBudget
from agentflow.documents.inputs import Document, Source, document_of, failed_document
from agentflow.documents.kinds import sniff_kind
from agentflow.documents.reading import Unusable, open_input

__all__ = ["INLINE_BYTES", "inline_fits", "read_small", "read_small_stdin"]

INLINE_BYTES = 256 * 1024
"""Largest plain-text file read without the worker pool, in bytes."""

_CPU_FLOOR = 1.0
"""The least CPU budget (seconds) under which a small file is still read
inline: decoding ``INLINE_BYTES`` of the worst text measured took 0.03 s."""

_MEMORY_FLOOR = 64 * INLINE_BYTES
"""The least memory budget (bytes) under which a small file is still read inline."""


def inline_fits(budget: WorkBudget, limit: int = INLINE_BYTES) -> bool:
    """Whether a text file of ``limit`` bytes is surely within ``budget``."""
    return ((budget.chars is None or budget.chars >= limit)
            and (budget.cpu_seconds is None or budget.cpu_seconds >= _CPU_FLOOR)
            and (budget.memory_bytes is None or budget.memory_bytes >= _MEMORY_FLOOR))


def read_small(source: Source, fmt: str, limit: int = INLINE_BYTES) -> Document | None:
    """``source``'s document when it is a small plain-text file (see the
    module docstring), read here; ``None``: it is not one (read it in the
    pool). Never raises for a bad file (a binary one is a failed document)."""
    path = source.path
    if (source.jsonl or fmt not in ("auto", "text") or str(path) == "-"
            or path.suffix == ".gz"):
        return None
    return _read(path, fmt, limit, path)


def read_small_stdin(spooled: Path, fmt: str, limit: int = INLINE_BYTES) -> Document | None:
    """As ``read_small``, for standard input spooled to the file ``spooled``
    (``agentflow.documents.reader_pool.spool_stdin``), named ``-`` as the
    pool's read names it: a small text (an empty one too) needs no worker
    process started for it."""
    if fmt not in ("auto", "text"):
        return None
    return _read(spooled, fmt, limit, Path("-"))


def _read(path: Path, fmt: str, limit: int, name: Path) -> Document | None:
    """The document of the small plain-text file ``path``, named ``name``;
    ``None``: it is not one."""
    try:
        with open_input(path, unzip=False) as f:
            if os.fstat(f.fileno()).st_size > limit:
                return None
            raw = f.read(limit + 1)
    except (OSError, Unusable):
        return None  # the pool's read says why (the same error, named alike)
    if len(raw) > limit:
        return None
    try:
        if fmt == "auto" and sniff_kind(raw[:1024], str(name)) != "text":
            return None
        return document_of(raw, name, "text")
    except Unusable as exc:  # binary
        return failed_document(exc, str(name))
    except Exception:  # untrusted bytes met a reader's bug: the pool's read fails this file alone
        return None
