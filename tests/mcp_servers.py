"""Start the test MCP server (``tests/mcp_server.py``) over HTTP on 127.0.0.1,
and count what a test could leak (child processes, open descriptors)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER = str(Path(__file__).with_name("mcp_server.py"))
"""The server script: ``python SERVER`` serves stdio."""


@contextmanager
def http_server(*flags: str) -> Iterator[str]:
    """Run ``SERVER --http`` (or ``--sse``, ``--bad-schema``...) and yield its
    base URL (``http://127.0.0.1:<port>``), once its socket listens (it prints
    the port after ``listen()``: a connection made then is queued, not
    refused). The process is killed and reaped at exit."""
    mode = () if "--sse" in flags else ("--http",)
    proc = subprocess.Popen([sys.executable, SERVER, *mode, *flags], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
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
    """The live (not zombie) child processes of this process, from /proc."""
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
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def open_fds() -> int:
    """How many file descriptors this process holds (sockets and pipes among them)."""
    return len(os.listdir("/proc/self/fd"))
