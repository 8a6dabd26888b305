"""Start the test MCP server (``tests/mcp_server.py``) over HTTP on 127.0.0.1,
and count what a test could leak (child processes, open descriptors)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).with_name("mcp_server.py"))
"""The server script: ``python SERVER`` serves stdio."""


@contextmanager
def http_server(*flags: str, quiet: bool = False) -> Iterator[str]:
    """Run ``SERVER --http`` (or ``--sse``, ``--bad-schema``...) and yield its
    base URL (``http://127.0.0.1:<port>``), once its socket listens (it prints
    the port after ``listen()``: a connection made then is queued, not
    refused). The process is killed and reaped at exit. ``quiet``: its
    stderr is dropped (the SDK's server logs each request a client cancelled)."""
    mode = () if "--sse" in flags else ("--http",)
    proc = subprocess.Popen([sys.executable, SERVER, *mode, *flags], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True,
                            stderr=subprocess.DEVNULL if quiet else None)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the MCP test server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def child_pids() -> set[int]:
    """The child processes of this process (zombies too: a child not reaped
    is a leak as well), from /proc."""
    me = os.getpid()
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me:
            found.add(int(entry))
    return found


def open_fds() -> int:
    """How many file descriptors this process holds (sockets and pipes among them)."""
    return len(os.listdir("/proc/self/fd"))


async def open_and_close(open_session: Callable[[], Any], count: int, concurrency: int) -> None:
    """Open and close ``count`` sessions, ``concurrency`` at a time: one in
    three closes after a tool call, one in three is cancelled while it starts
    (at a different moment each time), one in three is cancelled in the middle
    of a call."""
    import anyio

    limiter = anyio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with limiter:
            kind = i % 3
            if kind == 0:
                async with open_session() as server:
                    await server.call_tool("add", {"a": i, "b": 1})
            elif kind == 1:
                with anyio.move_on_after(0.002 * (i % 50)):
                    async with open_session():
                        await anyio.sleep_forever()
            else:
                async with open_session() as server:
                    with anyio.move_on_after(0.001 * (i % 20)):
                        await server.call_tool("slow", {"seconds": 30}, timeout=None)

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(one, i)


async def marked(path: Path) -> None:
    """Wait (at most 10 s) until the test server created ``path``: the ``slow``
    tool's ``started`` file (the call runs) or ``mark`` file (it was cancelled)."""
    import anyio

    with anyio.fail_after(10):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 (another process makes it)
            await anyio.sleep(0.02)
