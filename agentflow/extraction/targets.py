"""Where a run will write, checked before it asks a model anything.

A path can pass every look at it (a regular file, an existing directory) and
still refuse the write that comes after the run's requests were paid for: a
file of ``/proc`` or ``/sys`` opens for writing and fails the first write, a
directory can be read-only or on a read-only mount. So each target is tried
for what its writes need: a records file must be on a filesystem that stores
data (``appendable``, on the open descriptor), a directory that will get new files
(the review page's temporary file, the batch journal, Ray's output files)
takes a new, empty, removed file (``check_new_files``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agentflow.documents.names import printable
from agentflow.extraction.setup import SetupError

__all__ = ["appendable", "check_new_files"]


def appendable(fd: int) -> str | None:
    """Why records cannot be appended to the open file ``fd``, or ``None``.
    Refused: a file on a filesystem without storage (``statvfs`` counts no
    blocks: ``/proc``, ``/sys``), whose "regular files" are the kernel's
    settings and reports; nothing is written to try (an empty write to one
    can act: ``/proc/self/comm`` renames the process)."""
    if os.fstatvfs(fd).f_blocks == 0:
        return "its filesystem stores nothing (a kernel's pseudo files, as /proc and /sys)"
    return None


def check_new_files(directory: Path, what: str) -> None:
    """Refuse ``directory`` when files cannot be made in it: its nearest
    existing ancestor (where a missing directory would be made) is tried with
    a new empty file, removed again.

    Raises:
        SetupError: naming ``what`` (e.g. ``"--out out/"``, as it is: the
            caller escapes a path in it), the directory (escaped) and why.
    """
    place = directory
    while not place.exists() and place != place.parent:
        place = place.parent  # a missing directory is made by the writer: its parent counts
    if not place.is_dir():
        raise SetupError(f"{what}: {printable(str(place))} is not a directory; files cannot be "
                         "written there")
    try:
        fd, probe = tempfile.mkstemp(prefix=".agentflow-", suffix=".probe", dir=place)
    except OSError as exc:
        raise SetupError(f"{what}: cannot write files in {printable(str(place))}: "
                         f"{exc.strerror or type(exc).__name__}") from None
    os.close(fd)
    os.unlink(probe)
