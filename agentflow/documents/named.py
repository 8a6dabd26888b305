"""Checks of what ``--input`` names, made before a run asks any model:

* ``check_named``: every spec names something to extract from. A glob that
  matches no file, a folder with no file in it, and a JSONL file with no record
  (empty, or blank lines only) are each refused: the run would do nothing and
  say ``0 ok, 0 failed``. A file that cannot be read, or an empty text file,
  is not refused here: it is a failed record saying so.
* ``out_among_inputs``: the file (``--out``) is one the specs read, told
  from the paths alone, without listing a folder: a spec naming the file (by
  any path, a hard or symbolic link: compared by device and inode), a folder
  it is in (compared as resolved paths), a glob that names it
  (``agentflow.documents.glob_names``), or ``-`` when standard input is it.
  A file reached another way (a link to it inside an input folder, a hard
  link elsewhere) is caught where the reader meets it
  (``agentflow.documents.inputs.iter_sources``, ``exclude``).
* ``out_dir_among_inputs``: the same for a folder of output files (the Ray
  engine's ``--out``): a spec that is the folder or a folder it is in, one
  inside it, a file in it, or a glob that names a file in it (one it holds, or
  one a write would add). A file reached another way is left out where the
  engine lists its inputs (``agentflow.ray.read_documents``, ``exclude``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from agentflow.documents.glob_names import glob_names
from agentflow.documents.inputs import is_jsonl
from agentflow.documents.jsonl import jsonl_lines
from agentflow.documents.listing import Skipped, expand
from agentflow.documents.reading import InputError, Unusable

__all__ = ["check_named", "out_among_inputs", "out_dir_among_inputs", "within"]


def _gives_input(path: Path, problem: str | None, fmt: str) -> bool:
    """Whether ``path`` (an entry of a spec) gives a record: any file that is not
    JSONL (an unreadable or empty one is a failed record), or a JSONL file with a
    non-blank line (a bad line is a failed record too)."""
    if problem is not None or str(path) == "-" or not is_jsonl(path, fmt):
        return True
    try:
        return any(isinstance(line, Unusable) or line.strip()
                   for _, line in jsonl_lines(path))
    except Unusable:
        return True  # unreadable: a failed record says so


def check_named(specs: Sequence[str], fmt: str = "auto") -> None:
    """Refuse a spec that names nothing to extract from (see the module
    docstring). Reads no more than it needs: a folder up to its first usable
    file, a JSONL file up to its first non-blank line.

    Raises:
        InputError: naming the spec, and what was found there.
    """
    for spec in specs:
        entries = expand(spec)  # a glob matching nothing, an empty folder: refused here
        empty: list[Path] = []  # JSONL files without a record met so far
        for path, problem in entries:
            if isinstance(problem, Skipped):  # a link to a folder, not followed: nothing read
                continue
            if _gives_input(path, problem, fmt):
                break
            empty.append(path)
        else:
            jsonl = len(empty)
            where = "the file holds" if jsonl == 1 and Path(spec).is_file() else (
                "its JSONL file holds" if jsonl == 1 else f"its {jsonl} JSONL files hold")
            raise InputError(f"input {spec!r} holds nothing to extract: {where} no JSONL "
                             "record (empty, or blank lines only)")


def out_among_inputs(out: str | os.PathLike[str], fd: int, specs: Sequence[str]
                     ) -> tuple[str, str] | None:
    """``(spec, path)``: the first of ``specs`` that names the open file ``fd``
    (``out``, the path it was opened by), and the file as the spec reaches it;
    ``None`` when no spec does, as far as the paths tell (see the module
    docstring). One ``stat`` per spec; no folder is listed."""
    st = os.fstat(fd)
    target = (st.st_dev, st.st_ino)
    real = os.path.realpath(out)
    for spec in specs:
        found = _names(spec, real, target)
        if found is not None:
            return spec, found
    return None


def _names(spec: str, real: str, target: tuple[int, int]) -> str | None:
    """How ``spec`` reaches the file ``real`` (resolved) whose identity is
    ``target``, or ``None``."""
    if spec == "-":
        try:
            st = os.fstat(0)
        except OSError:
            return None
        return "standard input" if (st.st_dev, st.st_ino) == target else None
    try:
        st = os.stat(spec)
    except (OSError, ValueError):
        return real if glob_names(spec, real) else None  # a glob (or nothing: refused before)
    if not stat.S_ISDIR(st.st_mode):
        return spec if (st.st_dev, st.st_ino) == target else None
    root = os.path.realpath(spec)
    if real != root and real.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.join(spec, os.path.relpath(real, root))
    return None


def within(path: str, folder: str) -> bool:
    """Whether the resolved ``path`` is the resolved ``folder`` or under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def out_dir_among_inputs(out: str | os.PathLike[str], specs: Sequence[str],
                         written: str = "0123456789abcdef_000000_000000.jsonl"
                         ) -> tuple[str, str] | None:
    """``(spec, path)``: the first of ``specs`` that reads files of the folder
    ``out`` (made or not yet), and the path it reaches there; ``None`` when no
    spec does, as far as the paths tell (see the module docstring).
    ``written``: the name of a file a write would add (Ray's datasink names)."""
    real = os.path.realpath(out)
    held = sorted(str(p) for p in Path(real).glob("*.jsonl")) if os.path.isdir(real) else []
    samples = [*held, os.path.join(real, written)]
    for spec in specs:
        if spec == "-":
            continue
        try:
            st = os.stat(spec)
        except (OSError, ValueError):  # a glob (or nothing: refused before)
            named = next((p for p in samples if glob_names(spec, p)), None)
            if named is not None:
                return spec, named
            continue
        path = os.path.realpath(spec)
        if stat.S_ISDIR(st.st_mode) and (within(real, path) or within(path, real)):
            return spec, real
        if not stat.S_ISDIR(st.st_mode) and within(path, real):
            return spec, path
    return None
