"""What ``--input`` specs name, for the ``extract`` command: each spec (a path,
a glob, a directory, ``-``: stdin) expanded to the entries it names, a
directory walked lazily (one directory listed at a time, each in name order),
a glob's matches found as lazily (``agentflow.documents.globs``) and each read
as if named alone (a folder walked, a pipe or device a problem),
and file identities (device and inode) that tell two names of one file apart
from two files (``named_files``, ``is_named``: what ``agentflow report
--input`` may re-read). An entry that cannot be read (a broken link, a pipe
or device, an unlistable directory) comes with its problem, so the reader
(``agentflow.documents.inputs``) makes it a failed document; a spec that
names nothing is an ``InputError``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentflow.documents.globs import iglob_sorted
from agentflow.documents.reading import InputError

__all__ = ["READ_KINDS", "Skipped", "is_named", "named_files"]

class Skipped(str):
    """An entry's note that is not a failure: the entry is left out on purpose
    (a link to a folder met in a walk, not followed), said in the run's summary
    rather than made a failed record."""

    __slots__ = ()


def _folder_link(path: Path) -> Skipped:
    return Skipped(f"{path}: a link to a folder; not followed (a folder walk never follows "
                   "one, as rg and fd do not: name it with --input to read it)")


def _listed(folder: Path) -> tuple[list[str], set[str], set[str]]:
    """The names in ``folder`` in name order, and which of them are folders
    and links to folders, told from the directory entries (no ``stat`` of a
    file: a folder of a million files is listed, never stat'ed, before its
    first file is read).

    Raises:
        OSError: ``folder`` cannot be listed.
    """
    names: list[str] = []
    folders: set[str] = set()
    links: set[str] = set()
    with os.scandir(folder) as entries:
        for entry in entries:
            names.append(entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.add(entry.name)
                elif entry.is_symlink() and entry.is_dir():
                    links.add(entry.name)
            except OSError:
                pass  # told when its entry is reached (_problem)
    names.sort()
    return names, folders, links


def _walk(root: Path) -> Iterator[tuple[Path, str | None]]:
    """Every entry under directory ``root``, lazily: each folder's files in name
    order, each one ``stat``-ed only when it is reached, then its folders in name
    order, each walked the same way (one folder listed at a time). Regular
    files come alone; a problem comes with each folder that cannot be listed
    and each entry that is neither a file nor a folder (broken link, pipe,
    device, socket); a ``Skipped`` note with each link to a folder (never
    followed: a link to ``/`` would walk the file system, a link loop forever)."""
    pending = [root]  # folders still to walk, the next one last
    while pending:
        folder = pending.pop()
        try:
            names, folders, links = _listed(folder)
        except OSError as exc:
            yield folder, f"{folder}: cannot read directory: {exc.strerror}"
            continue
        for name in names:
            if name not in folders:
                path = folder / name
                yield path, _folder_link(path) if name in links else _problem(path)
        pending.extend(folder / name for name in reversed(names) if name in folders)


READ_KINDS = ("plain text (any encoding), PDF and HTML files, .gz of them, and JSONL records "
              "(.jsonl, .ndjson)")
"""What a folder is searched for, in words (every regular file under it is read)."""


def _walk_named(spec: str, root: Path) -> Iterator[tuple[Path, str | None]]:
    """``_walk(root)``, refusing a folder with nothing in it, as a glob that matches
    nothing is refused (nothing the user named would be read)."""
    found = False
    for entry in _walk(root):
        found = found or not isinstance(entry[1], Skipped)
        yield entry
    if not found:
        raise InputError(f"input {spec!r} is a folder with no file in it (extract reads every "
                         f"file under it: {READ_KINDS})")


def _expand(spec: str) -> Iterator[tuple[Path, str | None]] | list[tuple[Path, str | None]]:
    if spec == "-":
        return [(Path("-"), None)]
    path = Path(spec)
    if path.is_dir():
        return _walk_named(spec, path)
    if path.exists():  # named directly: a pipe or device would block or never end
        if not path.is_file():
            return [(path, f"{path}: not a regular file; not read")]
        return [(path, None)]
    return _glob_entries(spec, map(Path, iglob_sorted(spec)))


def _glob_entries(spec: str, matches: Iterator[Path]) -> Iterator[tuple[Path, str | None]]:
    """What a glob's ``matches`` (``agentflow.documents.globs``: lazily, a
    folder before what is in it) name, as if each were named by itself:
    a file; a folder, walked (once: a folder inside one walked already is not
    walked again); a link to a folder, not followed (as in a walk: a
    ``Skipped`` note); anything else (a pipe, a device, a broken link) with its
    problem. A glob whose
    matches give nothing is refused when that is known.

    Raises:
        InputError: the matches hold no file.
    """
    walked: Path | None = None
    found = False
    for path in matches:
        if walked is not None and path.is_relative_to(walked):
            continue  # met in the walk of its folder
        if path.is_symlink() and path.is_dir():
            yield path, _folder_link(path)  # a walk does not follow links to folders either
            continue
        if path.is_dir():
            walked = path
            for entry in _walk(path):
                found = found or not isinstance(entry[1], Skipped)
                yield entry
            continue
        found = True
        yield path, _problem(path)
    if not found:
        raise InputError(f"input {spec!r} matches no file")


def _problem(path: Path) -> str | None:
    """Why ``path`` (not a folder) cannot be read, or ``None`` (a regular file)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"{path}: cannot read: {exc.strerror}"
    return None if stat.S_ISREG(mode) else f"{path}: not a regular file; not read"


def _identity(path: Path) -> object:
    """What makes two input paths one file: its device and inode (a hard link,
    ``./x`` and ``x``, a path and a glob all name one), ``-`` for stdin."""
    if str(path) == "-":
        return "-"
    try:
        st = path.stat()
    except OSError:
        return str(path)
    return (st.st_dev, st.st_ino)


def named_files(specs: Sequence[str]) -> frozenset[object]:
    """The files ``specs`` name (files, globs, directories, as ``iter_documents``
    expands them; standard input and unusable entries excluded), as identities
    (device and inode, so ``./x``, ``x``, a hard link and a symlink are one file):
    what ``agentflow report --input`` may re-read.

    Raises:
        InputError: a spec matches nothing.
    """
    return frozenset(_identity(path) for spec in specs for path, problem in _expand(spec)
                     if problem is None and str(path) != "-")


def is_named(path: str | Path, named: frozenset[object]) -> bool:
    """Whether ``path`` is a regular file among ``named`` (``named_files``)."""
    path = Path(path)
    try:
        st = path.stat()
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in named
