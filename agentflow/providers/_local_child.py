"""The embedded model's server process: run as a script by ``_local_process``.

``python -P _local_child.py``: reads one JSON line from stdin, an object of
``xllamacpp.CommonParams`` attribute paths (``"model.path"``,
``"cpuparams.n_threads"``) and their values; starts ``xllamacpp.Server``
(llama.cpp's server on 127.0.0.1); writes one JSON line to stdout,
``{"address": "http://127.0.0.1:PORT"}`` or ``{"error": "..."}``. After an
error it leaves normally: C++ destructors run at exit, and llama.cpp's log
thread writes out the lines it holds (the parent reads why the server did
not start there). Otherwise it waits for stdin to end (the parent closed it,
or the parent ended) and leaves with ``os._exit(0)``: llama.cpp's server is
never destroyed in place, the operating system reclaims it
(``_local_process`` says why).

Imports nothing of agentflow (the child stays small, and ``-P`` keeps this
file's directory off ``sys.path``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def apply(params: Any, settings: dict[str, Any]) -> None:
    """Set each dotted attribute path of ``settings`` on ``params``."""
    for path, value in settings.items():
        *parents, name = path.split(".")
        target = params
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, name, value)


def main() -> None:
    """Start the server, say where it listens, serve until stdin ends, exit."""
    out = sys.stdout
    try:
        settings = json.loads(sys.stdin.readline())
        import xllamacpp  # type: ignore[import-untyped]  # no py.typed

        params = xllamacpp.CommonParams()
        apply(params, settings)
        server = xllamacpp.Server(params)  # blocks until loaded and listening
        reply = {"address": server.listening_address}
    except Exception as exc:  # told to the parent, which raises it
        reply = {"error": f"{type(exc).__name__}: {exc}"}
        server = None
    out.write(json.dumps(reply) + "\n")
    out.flush()
    if server is None:
        return  # a normal exit: the log thread writes out what it holds
    while sys.stdin.buffer.read(65536):  # until the parent closes it or ends
        pass
    os._exit(0)  # never ~Server(): it can wait forever on an HTTP worker (_local_process)


if __name__ == "__main__":
    main()
