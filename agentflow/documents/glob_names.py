"""Whether a glob names a file, decided from the two paths alone: no folder
is listed, so the answer costs the same for a glob over a million files.

    glob_names("data/**/*.jsonl", "/home/me/data/2024/out.jsonl")   # True (cwd /home/me)

The glob is read as ``glob.glob(pattern, recursive=True)`` reads it (what
``agentflow extract --input`` expands): ``*``, ``?`` and ``[...]`` match
within one name and never a name starting with ``.`` unless the pattern's
does, and a whole ``**`` matches any number of folders (none included) and,
last, files too, skipping hidden ones. The part of the pattern before its
first wildcard is resolved (``os.path.realpath``: links and ``..`` followed),
and the file's path is compared with it resolved too, so a glob spelled
through a link, or relative to the working folder, names the same files.

A link met inside the wildcard part (``data/*/x`` where ``data/a`` links
elsewhere) is not followed: a caller that must never miss such a file checks
the files it reads as well (``agentflow.documents.inputs.iter_sources``,
``exclude``).
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["glob_names"]


def glob_names(pattern: str, path: str | os.PathLike[str]) -> bool:
    """Whether ``pattern`` (a glob with a wildcard; a plain path is no glob:
    ``False``) names the file at ``path`` (see the module docstring).

    Args:
        pattern: as given to ``--input``.
        path: the file, resolved (``os.path.realpath``) or not.
    """
    if not glob.has_magic(pattern):
        return False
    parts = Path(pattern).parts
    first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    root = os.path.realpath(os.path.join(*parts[:first]) if first else os.curdir)
    rel = os.path.relpath(os.path.realpath(path), root)
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return False
    return _match(rel.split(os.sep), parts[first:])


def _match(names: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether the path ``names`` (one per folder, the file last) matches
    ``patterns`` (one per folder), as ``glob`` matches them."""
    if not patterns:
        return not names
    pattern = patterns[0]
    if pattern == "**":  # no folder, or one more folder that is not hidden
        return _match(names, patterns[1:]) or (
            bool(names) and not names[0].startswith(".") and _match(names[1:], patterns))
    if not names:
        return False
    name = names[0]
    if glob.has_magic(pattern) and name.startswith(".") and not pattern.startswith("."):
        return False  # a wildcard never matches a hidden name
    return fnmatch.fnmatchcase(name, pattern) and _match(names[1:], patterns[1:])
