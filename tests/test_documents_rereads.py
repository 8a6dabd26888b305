"""After a worker dies (a file past the CPU limit in native code: the
hostile-input ``_select_bomb``), the reads in flight are read again alone,
each in a process of its own: those re-reads keep the places of the reads
they redo (at most ``workers`` processes read at once), and closing the
documents early kills them, as it kills the pool's workers. The processes
are seen in ``/proc``: the forkserver's children (workers and re-reads)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from agentflow.documents.budget import WorkBudget
from agentflow.documents.readahead import read_ahead
from tests.test_documents_hostile import _select_bomb

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat``'s fields after the command (state is [0], ppid [1],
    utime [11]); ``None`` for a process that is gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return None if fields[0] in "ZX" else fields


def readers() -> set[int]:
    """The live processes whose parent is a child of this one (the
    forkserver's children: the pool's workers and the re-reads)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    children = {pid for pid, parent in parents.items() if parent == os.getpid()}
    return {pid for pid, parent in parents.items() if parent in children}


def cpu_ticks(pid: int) -> int:
    """The user CPU time ``pid`` used so far, in clock ticks (0 when gone)."""
    fields = _stat(pid)
    return int(fields[11]) if fields is not None else 0


class Watch:
    """The reading processes started since it was made (another test's left
    over are not this one's), looked at until a condition holds: the most
    seen at once (``most``)."""

    def __init__(self) -> None:
        self.most = 0
        self.before = readers()

    def running(self) -> set[int]:
        return readers() - self.before

    async def until(self, found: Callable[[set[int]], bool]) -> set[int]:
        """The reading processes once ``found`` says they are what it waits for."""
        while not found(running := self.running()):  # (/proc offers no event to wait on)
            self.most = max(self.most, len(running))
            await anyio.sleep(0.01)
        self.most = max(self.most, len(running))
        return running


async def test_rereads_keep_within_the_workers_and_are_killed_on_close(
        tmp_path: Path) -> None:
    for name in ("a-select.html", "b-select.html"):  # both in flight when the pool breaks
        (tmp_path / name).write_bytes(_select_bomb())
    watch = Watch()
    with anyio.fail_after(120):
        docs = read_ahead([str(tmp_path)], workers=1, ahead=2, inline_bytes=0,
                          budget=WorkBudget(cpu_seconds=1))
        async with contextlib.aclosing(docs), anyio.create_task_group() as tg:
            tg.start_soon(anext, docs)  # (no document comes before the first re-read ends)
            [worker] = await watch.until(bool)  # the pool's worker, on the first file
            # it died (past the CPU limit): the first file's re-read, well under way
            rereads = await watch.until(lambda running: bool(running - {worker}))
            reread = min(rereads - {worker})
            half_a_second = os.sysconf("SC_CLK_TCK") // 2
            await watch.until(lambda running: cpu_ticks(reread) >= half_a_second)
            tg.cancel_scope.cancel()
    assert watch.most == 1  # never more than workers=1 process reading
    assert reread not in watch.running()  # closing the documents killed the re-read
