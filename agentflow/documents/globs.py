"""A glob expanded lazily, one folder listed at a time, each in name order.

    for path in iglob_sorted("corpus/**/*.txt"):   # "corpus/2023/a.txt", ...
        ...

The pattern is read as ``glob.glob(pattern, recursive=True)`` reads it (what
``agentflow extract --input`` takes): ``*``, ``?`` and ``[...]`` match within
one name and never a name starting with ``.`` unless the pattern's does; a
whole ``**`` matches any number of folders (none included) and, last, files
too, skipping hidden ones. Two differences, both for a corpus of any size:

* nothing is collected: memory holds the listing of the folders on the way
  down, never the matches (``glob.glob`` returns them all, and sorting them
  needs them all), and the first match comes before the last folder is read;
* ``**`` never descends through a link to a folder (``glob.glob`` does: a
  link to ``/`` in a corpus walked the whole file system, and a link loop
  repeated its folders until the path was too long). A link matched by a
  part without ``**`` (``corpus/*/x.txt``) is followed, as by ``glob``: that
  reaches one level, not a tree.

A folder that cannot be listed is passed over, as ``glob`` does.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["iglob_sorted"]


def iglob_sorted(pattern: str) -> Iterator[str]:
    """The paths ``pattern`` matches (see the module docstring), spelled as
    ``glob.glob`` spells them, in name order folder by folder."""
    parts = Path(pattern).parts
    first = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    if first == len(parts):  # no wildcard: the path, if it is there
        if os.path.lexists(pattern):
            yield pattern
        return
    root = os.path.join(*parts[:first]) if first else ""
    yield from _match(root, parts[first:])


def _names(folder: str) -> list[str]:
    """The names in ``folder`` (``""``: the working folder), sorted; none when
    it cannot be listed."""
    try:
        return sorted(os.listdir(folder or os.curdir))
    except OSError:
        return []


def _is_folder(path: str, *, follow: bool) -> bool:
    try:
        return os.path.isdir(path) if follow else (
            os.path.isdir(path) and not os.path.islink(path))
    except OSError:
        return False


def _match(folder: str, patterns: Sequence[str]) -> Iterator[str]:
    """The paths under ``folder`` that ``patterns`` (one per level) match."""
    if not patterns:
        yield folder
        return
    pattern, rest = patterns[0], patterns[1:]
    if pattern == "**":
        yield from _match(folder, rest) if rest or folder else ()  # no folder at all
        for name in _names(folder):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            if _is_folder(path, follow=False):
                yield from _match(path, patterns)
            elif not rest:
                yield path  # a last ** matches files too
        return
    if not glob.has_magic(pattern):
        path = os.path.join(folder, pattern)
        if rest and _is_folder(path, follow=True):
            yield from _match(path, rest)
        elif not rest and os.path.lexists(path):
            yield path
        return
    for name in _names(folder):
        if name.startswith(".") and not pattern.startswith("."):
            continue
        if fnmatch.fnmatchcase(name, pattern):
            path = os.path.join(folder, name)
            if not rest:
                yield path
            elif _is_folder(path, follow=True):
                yield from _match(path, rest)
