"""The embedded model's llama.cpp server runs in a child process, so that
stopping it cannot hang.

Why not in this process (measured with xllamacpp 2026.10, llama.cpp's
server, cpp-httplib 0.60; gdb backtraces): xllamacpp's ``Server`` is stopped
only by dropping it, and its C++ destructor runs while holding the GIL. It
ends the task loop first (``server_context::terminate``), then stops the
HTTP server, whose listener thread joins its worker threads
(``httplib::ThreadPool::shutdown``). A worker that has read a completion
request waits for that task's first result (``server_response_reader::next``,
polling ``recv_with_timeout``) until the result comes or its client's
connection closes. The loop is gone, so no result comes; the client is this
process (aiohttp), frozen by the GIL the destructor holds, so its socket
stays open: the destructor waits forever. Closing the HTTP session first and
waiting for our streams to end (the previous fix) narrowed it but did not
close it: a request whose connection is still being opened when the session
closes leaves a socket open that only the event loop's next iterations
close, and a multi-slot run under load has several (reproduced on the first
start/stop cycle of a 4-slot server with 6 requests just sent; with 1 slot
it was rarer, not impossible). The binding offers no other stop.

So ``ServerProcess`` starts ``_local_child`` (``python -P``, its own
session so a terminal's Ctrl+C goes to this process, which then stops it),
sends it the ``CommonParams`` settings, reads the address it listens on, and
ends it with SIGKILL (``TerminateProcess`` on Windows): nothing to flush
(the server keeps no state on disk), and llama.cpp's own SIGTERM handler
runs the same hanging stop. If this process dies first, the child sees its
stdin end and exits. Replies being read when it ends fail with a connection
error; the wait for its exit is bounded (``STOP_WAIT``).

The child's stderr (llama.cpp's log) is passed on to this process's stderr
(``_local_log``); when the server does not start, the error says why in
llama.cpp's words (the log's first error) and names the model file.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import Any, NoReturn

from agentflow.errors import InvalidModelError
from agentflow.providers._local_log import ChildLog

__all__ = ["CHILD", "EXIT_WAIT", "START_WAIT", "STOP_WAIT", "ServerProcess"]

CHILD = Path(__file__).with_name("_local_child.py")
"""The script the child process runs."""

START_WAIT = 600.0
"""Seconds to wait for the server to load its model and listen."""

STOP_WAIT = 30.0
"""Seconds to wait for the child to be reaped after SIGKILL (it cannot refuse)."""

EXIT_WAIT = 10.0
"""Seconds to wait for a child that could not start the server to leave on
its own (writing out its log) before it is killed."""


def _end(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` if it still runs, reap it, close its pipes (idempotent)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # ended between poll and kill
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # stuck in the kernel
            process.wait(STOP_WAIT)
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # a broken pipe on close
                pipe.close()


class ServerProcess:
    """One llama.cpp server in a child process.

    Args:
        settings: ``xllamacpp.CommonParams`` attribute paths and values
            (``{"model.path": "/m.gguf", "n_parallel": 4, "cpuparams.n_threads": 1}``),
            JSON-serialisable.
        environment: variables the child gets on top of this process's
            environment, each only where this process's own does not set it
            (``{"OMP_WAIT_POLICY": "PASSIVE"}``: read when llama.cpp's OpenMP
            runtime loads, so it can only be given to a fresh process).
        start_wait: seconds to wait for the address (``START_WAIT``).

    Raises:
        InvalidModelError: the child could not start the server, ended before
            saying where it listens, or said nothing within ``start_wait``
            seconds; the message names the model file (``model.path``) and
            the cause: llama.cpp's first logged error
            (``"llama.cpp could not load '/m.gguf': gguf_init_from_reader:
            invalid magic characters: 'not ', expected 'GGUF'"``), else the
            child's own error.
    """

    def __init__(self, settings: dict[str, Any], *, environment: dict[str, str] | None = None,
                 start_wait: float = START_WAIT) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-P", str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
            env={**(environment or {}), **os.environ})
        self._finalizer = weakref.finalize(self, _end, self.process)  # also at exit
        assert self.process.stdin is not None and self.process.stdout is not None
        assert self.process.stderr is not None
        self._log = ChildLog(self.process.stderr)
        try:
            self.process.stdin.write(json.dumps(settings).encode() + b"\n")
            self.process.stdin.flush()
            reply = self._read_line(start_wait)
        except (OSError, ValueError, InvalidModelError) as exc:
            self._fail(settings, f"its process did not start: {exc}", exc)
        if "error" in reply or not isinstance(reply.get("address"), str):
            with contextlib.suppress(subprocess.TimeoutExpired):  # it leaves on its own
                self.process.wait(EXIT_WAIT)
            self._fail(settings, str(reply.get("error", reply)))
        self.address: str = reply["address"]
        """``http://127.0.0.1:PORT``, where the server listens."""

    def _fail(self, settings: dict[str, Any], failure: str,
              exc: BaseException | None = None) -> NoReturn:
        """Stop the child and raise one ``InvalidModelError`` naming the model
        file and the cause: llama.cpp's first logged error, followed by
        ``failure`` (what this process saw) in brackets when it came from
        ``exc`` (the child ended or said nothing in time); ``failure`` alone
        when llama.cpp logged no error."""
        self.stop()
        logged = self._log.first_error(STOP_WAIT)
        cause = failure if logged is None else (
            f"{logged} ({failure})" if exc is not None else logged)
        path = settings.get("model.path")
        what = f"llama.cpp could not load {path!r}" if path else "llama.cpp could not start"
        raise InvalidModelError(f"{what}: {cause}") from exc

    def _read_line(self, seconds: float) -> dict[str, Any]:
        """The child's reply line, ``{"address": ...}`` or ``{"error": ...}``
        (read in a thread: a pipe cannot be polled with a timeout everywhere).
        Lines before it that are not a reply (a ``sitecustomize`` or a library
        printing at start-up) are skipped."""
        stdout = self.process.stdout
        assert stdout is not None
        found: list[dict[str, Any]] = []

        def read() -> None:
            for line in iter(stdout.readline, b""):
                try:
                    reply = json.loads(line)
                except ValueError:
                    continue
                if isinstance(reply, dict) and ("address" in reply or "error" in reply):
                    found.append(reply)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(seconds)
        if reader.is_alive():
            raise InvalidModelError(f"no address after {seconds:g} s")
        if not found:
            raise InvalidModelError(f"it ended (exit code {self.process.wait()}) before listening")
        return found[0]

    @property
    def log(self) -> ChildLog:
        """The child's log (llama.cpp's stderr, relayed): its errors and the
        grammars llguidance gave up on (``_local_log``)."""
        return self._log

    @property
    def running(self) -> bool:
        """The child process has not ended."""
        return self.process.poll() is None

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the child has used so far: Linux's
        ``/proc/PID/stat``; 0.0 where that cannot be read (another system,
        or the child has ended)."""
        try:
            stat = Path(f"/proc/{self.process.pid}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()  # after the command name
            ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
            return ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def stop(self) -> None:
        """End the child (SIGKILL) and reap it; idempotent, returns within ``STOP_WAIT``."""
        self._finalizer()
