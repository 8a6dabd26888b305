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
from agentflow.documents.seen import SeenIds

__all__ = ["READ_KINDS", "SPILL_NAMES", "NamedFiles", "Skipped", "expand", "file_identity",
           "is_named", "named_files"]

class Skipped(str):
    """An entry's note that is not a failure: the entry is left out on purpose
    (a link to a folder met in a walk, not followed), said in the run's summary
    rather than made a failed record."""

    __slots__ = ()


def _folder_link(path: Path) -> Skipped:
    return Skipped(f"{path}: a link to a folder; not followed (a folder walk never follows "
                   "one, as rg and fd do not: name it with --input to read it)")


SPILL_NAMES = 20_000
"""Most names of one folder held in memory to sort them: past it, the
folder's names go to disk (``agentflow.documents.seen.SeenIds``, whose
SQLite B-tree gives them back in name order), so a flat folder of millions
of files is walked in constant memory."""

_FILE, _FOLDER, _LINK = 0, 1, 2  # an entry's kind: a link to a folder is a _LINK


class _Listing:
    """One folder's entries, in name order (``str`` order: the order of their
    UTF-8 bytes, lone surrogates of undecodable names included, on disk too),
    each with its kind, told from the directory entries (no ``stat`` of a
    file: a folder of a million files is listed, never stat'ed, before its
    first file is read). ``close()`` drops what went to disk.

    Raises:
        OSError: the folder cannot be listed.
    """

    def __init__(self, folder: Path) -> None:
        spill = SPILL_NAMES
        self._names: list[tuple[str, int]] = []
        self._disk: SeenIds | None = None
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    self._add(entry.name, _kind(entry), spill)
        except BaseException:
            self.close()
            raise
        self._names.sort()

    def _add(self, name: str, kind: int, spill: int) -> None:
        if self._disk is not None:
            self._disk.setdefault(name, kind)
            return
        self._names.append((name, kind))
        if len(self._names) > spill:
            self._disk = SeenIds()
            for held, its in self._names:
                self._disk.setdefault(held, its)
            self._names = []

    def entries(self) -> Iterator[tuple[str, int]]:
        """``(name, kind)`` of every entry, in name order."""
        if self._disk is None:
            yield from self._names
            return
        for name, kind in self._disk.items():
            yield name, int(kind or 0)

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()


def _kind(entry: os.DirEntry[str]) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            return _FOLDER
        if entry.is_symlink() and entry.is_dir():
            return _LINK
    except OSError:
        pass  # told when its entry is reached (_problem)
    return _FILE


def _walk(root: Path) -> Iterator[tuple[Path, str | None]]:
    """Every entry under directory ``root``, lazily: each folder's files in name
    order, each one ``stat``-ed only when it is reached, then its folders in name
    order, each walked the same way (one folder listed at a time; a folder of
    more than ``SPILL_NAMES`` entries sorted on disk). Regular
    files come alone; a problem comes with each folder that cannot be listed
    and each entry that is neither a file nor a folder (broken link, pipe,
    device, socket); a ``Skipped`` note with each link to a folder (never
    followed: a link to ``/`` would walk the file system, a link loop forever)."""
    levels: list[tuple[_Listing | None, Iterator[Path]]] = [(None, iter([root]))]
    try:
        while levels:
            folder = next(levels[-1][1], None)
            if folder is None:
                listing, _ = levels.pop()
                if listing is not None:
                    listing.close()
                continue
            try:
                listing = _Listing(folder)
            except OSError as exc:
                yield folder, f"{folder}: cannot read directory: {exc.strerror}"
                continue
            levels.append((listing, _folders(folder, listing)))
            for name, kind in listing.entries():
                if kind != _FOLDER:
                    path = folder / name
                    yield path, _folder_link(path) if kind == _LINK else _problem(path)
    finally:
        for listing, _ in levels:
            if listing is not None:
                listing.close()


def _folders(folder: Path, listing: _Listing) -> Iterator[Path]:
    """The folders in ``listing`` (of ``folder``), in name order."""
    return (folder / name for name, kind in listing.entries() if kind == _FOLDER)


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


def expand(spec: str) -> Iterator[tuple[Path, str | None]] | list[tuple[Path, str | None]]:
    """The entries input ``spec`` names (``-``, a folder walked, a file, a
    glob), lazily: each a path and ``None``, or the note of an entry that is
    not read (a ``Skipped`` one is left out on purpose, any other is a failed
    document)."""
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


def file_identity(path: Path) -> object:
    """What makes two input paths one file: its device and inode (a hard link,
    ``./x`` and ``x``, a path and a glob all name one), ``-`` for stdin."""
    if str(path) == "-":
        return "-"
    try:
        st = path.stat()
    except OSError:
        return str(path)
    return (st.st_dev, st.st_ino)


class NamedFiles:
    """The identities of the files some specs name (``named_files``), held on
    disk (``agentflow.documents.seen.SeenIds``: memory does not grow with the
    number of files). ``close()`` drops them."""

    def __init__(self) -> None:
        self._ids = SeenIds()

    def add(self, identity: object) -> None:
        """Add one file's identity (``file_identity``)."""
        self._ids.setdefault(repr(identity), None)

    def __contains__(self, identity: object) -> bool:
        return repr(identity) in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def close(self) -> None:
        """Drop the identities (idempotent)."""
        self._ids.close()


def named_files(specs: Sequence[str]) -> NamedFiles:
    """The files ``specs`` name (files, globs, directories, as ``iter_documents``
    expands them; standard input and unusable entries excluded), as identities
    (device and inode, so ``./x``, ``x``, a hard link and a symlink are one file):
    what ``agentflow report --input`` may re-read.

    Raises:
        InputError: a spec matches nothing.
    """
    named = NamedFiles()
    try:
        for spec in specs:
            for path, problem in expand(spec):
                if problem is None and str(path) != "-":
                    named.add(file_identity(path))
    except BaseException:
        named.close()
        raise
    return named


def is_named(path: str | Path, named: NamedFiles) -> bool:
    """Whether ``path`` is a regular file among ``named`` (``named_files``)."""
    path = Path(path)
    try:
        st = path.stat()
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in named
