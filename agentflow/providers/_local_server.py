"""Starting the embedded model's llama.cpp server, and the settings it is
started with (``local.LocalModel`` starts it in a child process:
``_local_process``).

    server = start_server("gemma3-270m", context=16384, parallel=4, threads=2,
                          chat_template="", mmproj=None)
    # which is:
    settings = server_settings(weights_file("gemma3-270m"), context=16384, parallel=4,
                               threads=2, chat_template="", mmproj=None)
    ServerProcess(settings, environment=SERVER_ENVIRONMENT)

Speed (``_local_threads``, ``_local_stats``): the server gets a thread per
usable core, up to 8 (``AGENTFLOW_THREADS`` or ``threads=`` sets it), with
llama.cpp's threads sleeping, not spinning, while they wait for each other
(``THREAD_POLL``, ``THREAD_WAIT``), and ``DEFAULT_SLOTS`` (4) decoding slots unless
``parallel=`` says otherwise (``n_parallel``, continuous batching: the slots' next tokens
go through the model in one batch), each slot a ``SLOT_CONTEXT``-token window;
the cache of the sliding-window layers is full-size (``RESUMABLE_CACHE``) so a
slot can resume from any prefix it holds. llama.cpp's self-speculative
n-gram drafting (``speculative.types``, drafts copied from the context) was
tried on the main job: 75% of the tokens came from accepted drafts, but the
CPU seconds per document did not fall (11.7 against 10.4 without, 3
documents, loaded machine: a rejected draft still costs its verification),
so it is not turned on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentflow.errors import InvalidModelError
from agentflow.providers._local_process import ServerProcess
from agentflow.providers._local_weights import INSTALL_HINT, weights_file

__all__ = ["RESUMABLE_CACHE", "SERVER_ENVIRONMENT", "SLOT_CONTEXT", "THREAD_POLL", "THREAD_WAIT",
           "server_settings", "start_server"]

SLOT_CONTEXT = 4096
"""Context window per decoding slot when ``context`` is not given (tokens)."""

RESUMABLE_CACHE = True
"""Start the server with a full-size cache for sliding-window layers
(llama.cpp's ``swa_full``): a slot can then resume from any prefix it holds.
Measured on the main job (benchmarks/RESULTS.md, embedded speed): prompt
tokens evaluated per document 210-359 -> 120 on a warm 4-slot server; for
the bundled 270M model the cost is ~30 MB per 4096-token slot."""

THREAD_POLL = 0
"""llama.cpp's thread polling level (0-100; its default 50 busy-waits for the
next operation): 0 makes a waiting thread sleep instead of spinning, which
is what costs CPU when the machine's cores are shared
(``_local_threads``). It governs llama.cpp's own thread pool; the bundled
OpenMP build's threads wait as ``THREAD_WAIT`` says."""

THREAD_WAIT = "PASSIVE"
"""How llama.cpp's threads wait for each other (``OMP_WAIT_POLICY`` of the
server's process, unless this process's environment sets it): the bundled
xllamacpp build runs its CPU threads with OpenMP (libgomp), whose barrier
after every operation spins (GNU's default ``ACTIVE`` for a while) before
sleeping; ``THREAD_POLL`` does not reach it. ``PASSIVE`` sleeps at once. A
spinning thread costs nothing on an idle machine but takes a core another
process needs, and when one of our threads waits for a CPU, the others spin
for it: measured on 2 cores at load 7-11, 2 threads x 4 slots, 2 documents,
10.1 CPU-seconds a document with ``PASSIVE`` against 33.1 by default
(2.9 against 0.55 documents a minute). On a quiet machine sleeping costs a
wake-up per barrier: 13.5 against 16.9 documents a minute warm with
``ACTIVE`` (same sample, 2026-12-06 12:35-12:40 UTC, load 0.1-1.6;
benchmarks/RESULTS.md)."""

SERVER_ENVIRONMENT = {"OMP_WAIT_POLICY": THREAD_WAIT}
"""Environment variables of the server's process (``THREAD_WAIT``), unless
this process's environment sets them."""


def server_settings(weights: Path, *, context: int, parallel: int, threads: int,
                    chat_template: str, mmproj: Path | None) -> dict[str, Any]:
    """xllamacpp's ``CommonParams`` settings (dotted field names -> values) for
    a server on 127.0.0.1 (a free port) over the GGUF ``weights``: ``context``
    tokens shared by ``parallel`` slots, ``threads`` CPU threads for
    generation and prompt processing, the jinja ``chat_template`` (``""``: the
    GGUF's own), the multimodal projector ``mmproj`` if any."""
    settings: dict[str, Any] = {
        "model.path": str(weights), "n_ctx": context, "n_parallel": parallel,
        "cpuparams.n_threads": threads, "cpuparams_batch.n_threads": threads,
        "cpuparams.poll": THREAD_POLL, "cpuparams_batch.poll": THREAD_POLL,
        "hostnames": ["127.0.0.1"], "port": 0,
        "verbosity": 1,  # llama.cpp logs go to fd 2 otherwise
        "sse_ping_interval": 1,
        "chat_template": chat_template,
        # every position of every layer kept (Gemma 3's sliding-window layers
        # otherwise keep the last 512 only, so a slot could not go back to the
        # shared instructions-and-examples prefix of another prompt and
        # evaluated most of it again; RESUMABLE_CACHE)
        "swa_full": RESUMABLE_CACHE,
    }
    if mmproj is not None:
        settings["mmproj.path"] = str(mmproj)
    return settings


def start_server(model: str, *, context: int, parallel: int, threads: int,
                 chat_template: str, mmproj: Path | None) -> ServerProcess:
    """llama.cpp's server for ``model`` (a ``BUNDLED`` name or a ``.gguf``
    path: ``weights_file``) started in a child process (``_local_process``)
    with ``server_settings``; blocks until the model is loaded and the server
    listens (~2 s).

    Raises:
        InvalidModelError: the ``local`` extra is missing, the weights or the
            multimodal projector ``mmproj`` do not exist, or the server could
            not load them (the message names the file and the cause).
    """
    try:
        import xllamacpp  # type: ignore[import-untyped]  # noqa: F401  # no py.typed
    except ImportError as exc:
        raise InvalidModelError(
            f"the embedded model needs the 'local' extra ({INSTALL_HINT}): {exc}"
        ) from exc
    weights = weights_file(model)
    if mmproj is not None and not mmproj.is_file():
        raise InvalidModelError(f"multimodal projector {str(mmproj)!r} does not exist")
    settings = server_settings(weights, context=context, parallel=parallel,
                               threads=threads, chat_template=chat_template, mmproj=mmproj)
    return ServerProcess(settings, environment=SERVER_ENVIRONMENT)
