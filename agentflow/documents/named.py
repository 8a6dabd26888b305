"""Checks of what ``--input`` names, made before a run asks any model:

* ``check_named``: every spec names something to extract from. A glob that
  matches no file, a folder with no file in it, and a JSONL file with no record
  (empty, or blank lines only) are each refused: the run would do nothing and
  say ``0 ok, 0 failed``. A file that cannot be read, or an empty text file,
  is not refused here: it is a failed record saying so.
* ``find_among_inputs``: the file (``--out``) is one the specs read, under
  any name (a path, ``./path``, a hard or symbolic link, found through a
  folder or a glob): files are compared by device and inode.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from agentflow.documents.inputs import _expand, _identity, _is_jsonl, _jsonl_lines
from agentflow.documents.reading import InputError, _Unusable

__all__ = ["check_named", "find_among_inputs"]


def _gives_input(path: Path, problem: str | None, fmt: str) -> bool:
    """Whether ``path`` (an entry of a spec) gives a record: any file that is not
    JSONL (an unreadable or empty one is a failed record), or a JSONL file with a
    non-blank line (a bad line is a failed record too)."""
    if problem is not None or str(path) == "-" or not _is_jsonl(path, fmt):
        return True
    try:
        return any(line.strip() for _, line in _jsonl_lines(path))
    except _Unusable:
        return True  # unreadable: a failed record says so


def check_named(specs: Sequence[str], fmt: str = "auto") -> None:
    """Refuse a spec that names nothing to extract from (see the module
    docstring). Reads no more than it needs: a folder up to its first usable
    file, a JSONL file up to its first non-blank line.

    Raises:
        InputError: naming the spec, and what was found there.
    """
    for spec in specs:
        entries = _expand(spec)  # a glob matching nothing, an empty folder: refused here
        empty: list[Path] = []  # JSONL files without a record met so far
        for path, problem in entries:
            if _gives_input(path, problem, fmt):
                break
            empty.append(path)
        else:
            jsonl = len(empty)
            where = "the file holds" if jsonl == 1 and Path(spec).is_file() else (
                "its JSONL file holds" if jsonl == 1 else f"its {jsonl} JSONL files hold")
            raise InputError(f"input {spec!r} holds nothing to extract: {where} no JSONL "
                             "record (empty, or blank lines only)")


def find_among_inputs(fd: int, specs: Sequence[str]) -> tuple[str, Path] | None:
    """``(spec, path)``: where ``specs`` name the open file ``fd``, or ``None``.

    Raises:
        InputError: a spec matches nothing.
    """
    st = os.fstat(fd)
    target = (st.st_dev, st.st_ino)
    for spec in specs:
        for path, problem in _expand(spec):
            if problem is None and str(path) != "-" and _identity(path) == target:
                return spec, path
    return None
