"""The chaos server as its own process, pinned to its own core (stdlib only)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["ChaosServer"]

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
_TICK = os.sysconf("SC_CLK_TCK")


class ChaosServer:
    """``python -m tests.fakes.chaos`` run by ``python`` in ``repo``, pinned
    to ``core`` when given (``os.sched_setaffinity`` in the child)."""

    def __init__(self, python: Path, repo: Path, core: int | None) -> None:
        self.python, self.repo, self.core = python, repo, core
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self, timeout: float = 30.0) -> str:
        """Start and wait for ``listening chaos <url>``; the root URL.

        Raises:
            RuntimeError: the server did not come up in time.
        """
        core = self.core

        def pin() -> None:
            if core is not None:
                os.sched_setaffinity(0, {core})

        self.proc = subprocess.Popen(
            [str(self.python), "-m", "tests.fakes.chaos", "--port", "0"], cwd=self.repo,
            stdout=subprocess.PIPE, text=True, preexec_fn=pin)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("listening chaos "):
            self.stop()
            raise RuntimeError(f"the chaos server did not start: {line!r}")
        self.url = line.split()[-1]
        return self.url

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self.url + path, data=json.dumps(payload).encode(),
                                         headers={"Content-Type": "application/json"})
        with _OPENER.open(request, timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data

    def configure(self, **settings: Any) -> dict[str, Any]:
        """Change the server's ``ChaosSettings``; the settings now in force."""
        return self._post("/_chaos/config", settings)

    def stats(self, reset: bool = False) -> dict[str, Any]:
        """The server's counters (zeroed afterwards when ``reset``)."""
        return self._post("/_chaos/stats", {"reset": reset})

    def cpu_seconds(self) -> float:
        """CPU seconds the server process has used."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK

    def stop(self) -> None:
        """Terminate the server (idempotent)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
