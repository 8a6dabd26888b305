"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` in a
temporary directory, ``postgres`` on a free port of 127.0.0.1, stopped and
deleted afterwards. As root the server runs as the unprivileged ``nobody``
(PostgreSQL refuses to run as root).

    with postgres_server() as dsn:   # or None, with the reason printed, when
        ...                          # no PostgreSQL binaries exist here
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def postgres_bin() -> Path | None:
    """The directory of ``initdb``/``pg_ctl``/``postgres``, or ``None``."""
    found = shutil.which("initdb")
    candidates = [os.path.realpath(found)] if found else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    for initdb in candidates:
        bindir = Path(initdb).parent
        if (bindir / "pg_ctl").exists() and (bindir / "postgres").exists():
            return bindir
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yields its DSN (user ``postgres``, trust auth, db ``postgres``).

    Raises:
        FileNotFoundError: no PostgreSQL binaries (callers skip with this reason).
        subprocess.CalledProcessError: initdb or the start failed (log in the message).
    """
    bindir = postgres_bin()
    if bindir is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl, postgres) "
                                "on PATH or under /usr/lib/postgresql/*/bin")
    root = Path(tempfile.mkdtemp(prefix="agentflow-pg-"))
    user: dict[str, int] = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(root, nobody.pw_uid, nobody.pw_gid)
        user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    data, log = root / "data", root / "server.log"
    port = _free_port()
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}

    def run(*args: str) -> None:
        subprocess.run([str(a) for a in args], check=True, cwd=root, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **user)  # type: ignore[call-overload]

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-sync")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -F"
        try:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                "-w", "-t", "60", "start")
        except subprocess.CalledProcessError as exc:
            text = log.read_text() if log.exists() else ""
            raise subprocess.CalledProcessError(exc.returncode, exc.cmd, stderr=text) from exc
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
