"""How much of the machine the embedded model uses: CPU threads and decoding slots.

``default_threads()``: ``AGENTFLOW_THREADS`` when set (a positive integer),
else the CPUs this process may run on (``os.sched_getaffinity``, which
follows taskset, cgroup cpusets and container limits; ``os.cpu_count()``
where it does not exist) less one, at least one: the Python side (a grammar
per document, validation, grounding checks, HTTP) runs on the one left, and
llama.cpp's threads meet at a barrier after every operation, so all of them
wait while one waits for a CPU. Measured on a 2-core machine
(benchmarks/RESULTS.md, embedded speed): with llama.cpp's default busy-wait,
2 threads cost ~4x the CPU seconds per document of 1 under load; with the
polling off (``local.THREAD_POLL``) ~1.2x, and 2 threads are ~2x faster on a
quiet machine, but 2.6x slower per document than 1 once other processes took
the second core. ``AGENTFLOW_THREADS=2`` is the setting for a quiet 2-core machine.

``default_slots(threads)``: requests llama.cpp decodes at once
(``n_parallel``, continuous batching): ``DEFAULT_SLOTS`` (1) whatever the
threads. More slots pay: their next tokens go through the model in one batch,
so the weights are read once for four tokens, and on one thread of a 2-core
machine 4 slots cost about half the CPU seconds per document of 1
(benchmarks/bench_local_scaling.py, benchmarks/RESULTS.md). They are not the
default because llama.cpp's server (as xllamacpp builds it) can hang in its
destructor after a multi-slot run: ``~Server()`` joins its HTTP thread while
that thread still waits in ``accept()`` (seen twice in a loaded ``make test``,
2026-12-06, gdb backtrace); with one slot it was never seen. A slot holds a
4096-token window of KV cache (~72 MB for the bundled 270M model with the
full-size cache ``local.RESUMABLE_CACHE`` keeps). ``parallel=`` or
``agentflow extract --concurrency N`` sets them. Records do not depend on the
slot count or on which documents share a batch when prompts are evaluated
whole (``cache_prompt=False``); with the prompt cache they can depend on
what a slot held (``agentflow.providers.local``, Reproducibility).
"""

from __future__ import annotations

import os

from agentflow.errors import InvalidModelError

__all__ = [
    "DEFAULT_SLOTS", "THREADS_VARIABLE", "available_cpus", "default_slots", "default_threads",
]

THREADS_VARIABLE = "AGENTFLOW_THREADS"
"""Environment variable that limits the embedded model's CPU threads."""

DEFAULT_SLOTS = 1
"""Decoding slots by default (each holds its own window of KV cache); see the module docstring."""


def available_cpus() -> int:
    """CPUs this process may run on (>= 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """``AGENTFLOW_THREADS`` if set, else ``available_cpus() - 1`` (at least 1).

    Raises:
        InvalidModelError: ``AGENTFLOW_THREADS`` is not a positive integer.
    """
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return max(1, available_cpus() - 1)
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidModelError(f"{THREADS_VARIABLE} must be a positive integer, got {raw!r}")
    return value


def default_slots(threads: int) -> int:
    """Decoding slots for ``threads`` threads: ``DEFAULT_SLOTS`` (see the module docstring)."""
    del threads  # measured: batching pays on one thread too
    return DEFAULT_SLOTS
