"""The ``extract`` command's ``--out`` file: checked, locked, resumed, compacted.

* Only a regular file (or a new one) is accepted: a pipe, a device or a
  directory is refused before any request (``SetupError``), so nothing is
  ever read from ``/dev/stdout`` or ``/dev/full``. To write to stdout, omit
  ``--out``.
* An advisory lock (``fcntl.flock``, exclusive) is held for the whole run:
  a second run on the same file refuses, naming the holder's pid when the
  system tells it (Linux ``/proc/locks``), or waits for it (``wait=True``)
  and then reads what the first one wrote, so no input is done twice.
* Resuming reads the file line by line, each line bounded
  (``MAX_LINE`` bytes; longer ones are skipped): the newest record of an id
  wins.
* A line that is not a record (someone's notes, another program's output)
  is skipped when resuming and kept as written by compaction: agentflow
  never drops a line it did not write.
* ``compact()`` rewrites the file with only the newest record of each id
  (two streaming passes; the new file replaces the old atomically while the
  lock is held; a run waiting for the lock notices the swap and reopens).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agentflow.documents.names import dumps_record, loads_record, printable
from agentflow.documents.seen import MISSING, SeenIds
from agentflow.extraction.out_lines import (
    MAX_LINE,
    count_settings,
    is_newest,
    is_ours,
    iter_lines,
    read_records,
)
from agentflow.extraction.setup import SetupError
from agentflow.extraction.targets import appendable

__all__ = ["MAX_LINE", "OutFile", "count_settings", "iter_lines", "open_out", "read_records",
           "waiting_notice"]

def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_kind(path: Path, mode: int) -> SetupError:
    return SetupError(
        f"--out {printable(str(path))} is {_kind(mode)}: --out must be a regular file (it is "
        "read back to resume); to write records to stdout, leave --out out")


def _holder_pid(fd: int) -> int | None:
    """The pid holding a flock on ``fd``'s file, from ``/proc/locks`` (Linux), if known."""
    st = os.fstat(fd)
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if "FLOCK" in parts and device in parts and "->" not in parts:
            try:
                return int(parts[parts.index(device) - 1])
            except (ValueError, IndexError):
                return None
    return None


def _outcome(record: dict[str, Any]) -> str | None:
    if record.get("ok") is True:
        return None
    error = record.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else ""


class OutFile:
    """An ``--out`` file opened for appending, locked, with what it holds.

    Attributes:
        path: the file.
        outcomes: id -> ``None`` when its newest record is ok, else that
            record's error type (``""`` when it names none), for the ids the
            file held when opened (a record this run writes updates its id's
            entry; new ids are not added). A ``SeenIds``: held in a temporary
            SQLite database, so memory does not grow with the file or the run;
            ``outcomes.get(id)`` is ``MISSING`` for an id the file lacks.
        superseded: records whose id has a newer record (removed by ``compact``).
        saved: records this run appended.
        created: this run created the file (``discard``: removed again when
            the run ends in an error having written nothing).
        foreign: lines of the file that are not records (notes, another
            program's output: kept as they are, never read as records).
        schemas: schema fingerprint -> records carrying it (``"schema"``, written
            by ``agentflow extract``; records without one are not counted).
        settings: the distinct ``"settings"`` of the records (``count_settings``).
        without_settings: records without ``"settings"`` (written before
            agentflow kept them: not compared with a run's).
    """

    def __init__(self, path: Path, fd: int, *, created: bool = False) -> None:
        self.path = path
        self._fd = fd
        self.created = created
        self.outcomes = SeenIds()
        self.superseded = 0
        self.saved = 0
        self.schemas: dict[str, int] = {}
        self.settings: dict[str, tuple[dict[str, str], int]] = {}
        self.without_settings = 0
        self._last: list[Any] = [None, ""]  # count_settings's last settings and key
        self.foreign = 0
        for _, line in iter_lines(path):
            try:
                record = loads_record(line)
            except orjson.JSONDecodeError:
                record = None
            if not (isinstance(record, dict) and isinstance(record.get("id"), str)):
                self.foreign += not is_ours(line)  # a torn record is ours; notes are not
                continue
            self._count_schema(record)
            if self.outcomes.setdefault(record["id"], _outcome(record)) is not MISSING:
                self.superseded += 1  # an older record of the id: the newest wins
                self.outcomes[record["id"]] = _outcome(record)
        size = os.fstat(fd).st_size
        # after a torn last line (or a text file's last line without its newline), the
        # first record starts on a fresh line: written with it, so a run that writes
        # nothing leaves the file as it was
        self._fresh = bool(size) and os.pread(fd, 1, size - 1) != b"\n"

    def _count_schema(self, record: dict[str, Any]) -> None:
        schema = record.get("schema")
        if isinstance(schema, str):
            self.schemas[schema] = self.schemas.get(schema, 0) + 1
        if not count_settings(record, self.settings, self._last):
            self.without_settings += 1

    def _write(self, data: bytes) -> None:
        """Append ``data``.

        Raises:
            OSError: the file takes no more (a full disk, a quota, a file size
                limit), its message naming the file, what this run wrote and
                how to go on; a record cut short by it is skipped on resume.
        """
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            n = self.saved
            raise OSError(exc.errno, (
                f"cannot append to --out {printable(str(self.path))}: "
                f"{exc.strerror or type(exc).__name__}; the run stopped after writing {n} "
                f"record{'s' * (n != 1)}. Make room (or write to another --out) and run the "
                "same command again: it resumes after the records written")) from exc

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line (one ``write`` call, ``O_APPEND``); an id
        from a non-UTF-8 file name is written reversibly (``dumps_record``)."""
        self._write(b"\n" * self._fresh + dumps_record(record) + b"\n")
        self._fresh = False
        self.saved += 1
        self._count_schema(record)
        rid = record.get("id")
        if self.outcomes and isinstance(rid, str) and rid in self.outcomes:
            self.superseded += 1  # a rerun's record replaces an older one
            self.outcomes[rid] = _outcome(record)

    def compact(self) -> int:
        """Rewrite the file with only the newest record of each id (torn
        records go too; a line agentflow did not write stays); returns how
        many lines were dropped.

        Raises:
            OSError: the directory is not writable (the file is left as it was).
        """
        newest = SeenIds()  # id -> the offset of its newest record (on disk, not in memory)
        for offset, record in read_records(self.path):
            newest[record["id"]] = offset
        dropped = 0
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                for offset, line in iter_lines(self.path):
                    if is_newest(line, offset, newest) or not is_ours(line):
                        out.write(line + b"\n")  # the line as it was written
                    elif line.strip():
                        dropped += 1
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, stat.S_IMODE(os.fstat(self._fd).st_mode))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        finally:
            newest.close()
        self.superseded = 0
        return dropped

    def discard(self) -> bool:
        """Remove the file if this run created it and it is still empty (a run
        that stops on a set-up error leaves no new file behind), then close;
        whether it was removed. A file that was there before, or that holds
        anything, is only closed."""
        removed = False
        if self._fd >= 0 and self.created and self.saved == 0:
            with contextlib.suppress(OSError):
                st = os.fstat(self._fd)
                if st.st_size == 0 and os.stat(self.path).st_ino == st.st_ino:
                    os.unlink(self.path)  # under the lock: a waiting run reopens the path
                    removed = True
        self.close()
        return removed

    def fileno(self) -> int:
        """The file's descriptor (``-1`` once closed)."""
        return self._fd

    def close(self) -> None:
        """Release the lock and close (idempotent)."""
        self.outcomes.close()
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the flock
            self._fd = -1


def open_out(
    spec: str, *, wait: bool = False, on_wait: Callable[[int | None], None] | None = None
) -> OutFile:
    """Open ``spec`` to append records, holding its lock.

    Args:
        wait: wait for another run holding the lock (else refuse).
        on_wait: called with the holder's pid (or ``None``) before waiting.

    Raises:
        SetupError: not a regular file, not writable (or on a filesystem
            that stores nothing: ``/proc``, ``/sys``; ``targets.appendable``),
            its directory missing, or locked by another run (``wait=False``).
    """
    path = Path(spec)
    shown = printable(spec)  # a path in a message: its controls escaped
    for _ in range(100):  # retried only when a compaction swapped the file meanwhile
        try:
            st = path.stat()
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise SetupError(f"--out {shown}: {exc.strerror}") from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise _refuse_kind(path, st.st_mode)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
        created = False
        try:  # O_NONBLOCK: a file swapped for a FIFO meanwhile cannot block the open
            try:
                fd = os.open(path, flags | os.O_EXCL, 0o644)
                created = True  # this run made it: removed again if the run writes nothing
            except FileExistsError:
                fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            raise SetupError(f"--out {shown}: its directory does not exist") from None
        except OSError as exc:
            raise SetupError(f"--out {shown}: not writable: {exc.strerror}") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise _refuse_kind(path, mode)
        why = appendable(fd)  # /proc, /sys: a "regular file" that takes no record
        if why is not None:
            os.close(fd)
            if created:
                path.unlink(missing_ok=True)
            raise SetupError(f"--out {shown}: records cannot be appended to it: {why}; "
                             "write them to a file of a disk's filesystem")
        os.set_blocking(fd, True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder_pid(fd)
            if not wait:
                os.close(fd)
                holder = f" (pid {pid})" if pid else ""
                raise SetupError(
                    f"--out {shown} is in use by another agentflow run{holder}; wait for it "
                    "to finish (--wait), or write to another file") from None
            if on_wait is not None:
                on_wait(pid)
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return OutFile(path, fd, created=created)
        os.close(fd)  # compacted (replaced) while we waited: open the new file
    raise SetupError(f"--out {shown} keeps being replaced; is another program rewriting it?")


def waiting_notice(spec: str) -> Callable[[int | None], None]:
    """An ``on_wait`` that tells stderr whom the run waits for."""
    def notice(pid: int | None) -> None:
        holder = f" (pid {pid})" if pid else ""
        print(f"agentflow: waiting for the run holding {printable(spec)}{holder}", file=sys.stderr,
              flush=True)
    return notice
