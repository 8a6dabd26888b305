"""How much of the machine the embedded model uses: CPU threads and decoding slots.

``default_threads()``: ``AGENTFLOW_THREADS`` when set (a positive integer),
else ``usable_cores()`` (the physical cores among the CPUs this process may
run on, within its cgroup's CPU quota) up to ``MAX_THREADS``. Measured on a
2-core machine (benchmarks/RESULTS.md, embedded speed): on a quiet machine 2
threads with 4 slots decode the main job ~1.6x as fast as 1 (18.1 against
11.3 documents a minute warm, 2026-12-06), so every core is used by default.
The price is on a shared machine: llama.cpp's threads meet at a barrier
after every operation, so when another process holds one core the other
thread waits for it. Waiting used to cost CPU too: the bundled build's
OpenMP threads spun at that barrier (``_local_server.THREAD_WAIT`` now makes them
sleep: at load 7-11, 2 threads x 4 slots took 10.1 CPU-seconds a document
instead of 33.1). ``AGENTFLOW_THREADS=1`` (or ``--threads 1``) remains the
setting for a machine whose cores are busy with other work. Hyper-threads
of one core are counted once (llama.cpp's own default,
``cpu_get_num_math``: a sibling shares the core's vector units, and a thread
more than the cores only waits at the barrier). ``MAX_THREADS`` (8): the
bundled models are small (270M and 135M parameters, a 640- and 576-wide
hidden state), so past a few threads each thread's share of a matrix is a
few rows and the barrier after every operation costs more than the share;
the extra cores of a 16-core machine are better spent on more slots or
more processes (Ray engine) than on more threads of one server. That cap is
reasoned, not measured (this project's machines have 2 cores): a bigger
GGUF may want ``AGENTFLOW_THREADS=16``.

``default_slots(threads)``: requests llama.cpp decodes at once
(``n_parallel``, continuous batching): ``DEFAULT_SLOTS`` (4) whatever the
threads. More slots pay: their next tokens go through the model in one batch,
so the weights are read once for four tokens; on one thread of a 2-core
machine 4 slots cost about half the CPU seconds per document of 1
(benchmarks/bench_local_scaling.py, benchmarks/RESULTS.md). The model's
profile says ``concurrent_requests`` = slots, so ``agentflow extract`` and
``extract_many`` send that many documents at once by default. A slot holds a
4096-token window of KV cache (~72 MB for the bundled 270M model with the
full-size cache ``_local_server.RESUMABLE_CACHE`` keeps). ``parallel=`` or
``agentflow extract --concurrency N`` sets them. (A multi-slot server could
hang at shutdown when llama.cpp ran in this process; it now runs in a child
process that is ended for sure: ``_local_process``.) Records do not depend
on the slot count or on which documents share a batch when prompts are
evaluated whole (``cache_prompt=False``); with the prompt cache they can
depend on what a slot held (``agentflow.providers.local``, Reproducibility).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from agentflow.errors import InvalidModelError

__all__ = [
    "DEFAULT_SLOTS", "MAX_THREADS", "THREADS_VARIABLE", "available_cpus", "default_slots",
    "default_threads", "usable_cores",
]

THREADS_VARIABLE = "AGENTFLOW_THREADS"
"""Environment variable that sets the embedded model's CPU threads."""

DEFAULT_SLOTS = 4
"""Decoding slots by default (each holds its own window of KV cache); see the module docstring."""

MAX_THREADS = 8
"""Threads by default at most, whatever the cores (see the module docstring)."""

_SYS_CPU = Path("/sys/devices/system/cpu")
_CGROUP = Path("/sys/fs/cgroup")


def available_cpus() -> int:
    """CPUs this process may run on (>= 1): ``os.sched_getaffinity``, which
    follows taskset and cgroup cpusets; ``os.cpu_count()`` where it does not exist."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _physical_cores(sys_cpu: Path) -> int | None:
    """Distinct (package, core) pairs among the CPUs this process may run on,
    from Linux's sysfs topology; ``None`` where it cannot be read."""
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topology = sys_cpu / f"cpu{cpu}" / "topology"
        try:
            cores.add(((topology / "physical_package_id").read_text().strip(),
                       (topology / "core_id").read_text().strip()))
        except OSError:
            return None
    return len(cores) or None


def _quota_cpus(cgroup: Path) -> int | None:
    """CPUs the cgroup's CPU quota allows (rounded up; ``docker --cpus``):
    cgroup v2 ``cpu.max`` (``"200000 100000"``) or v1 ``cpu.cfs_quota_us`` /
    ``cpu.cfs_period_us``; ``None`` without a quota."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        q, p = int(quota), int(period)
    except ValueError:  # "max": no quota
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None


def usable_cores(sys_cpu: Path | None = None, cgroup: Path | None = None) -> int:
    """Cores this process can compute on at once (>= 1): ``available_cpus()``,
    counting a core's hyper-threads once where Linux's sysfs (``sys_cpu``,
    default ``/sys/devices/system/cpu``) says which they are, and no more
    than the CPU quota of ``cgroup`` (default ``/sys/fs/cgroup``) allows."""
    cores = _physical_cores(sys_cpu or _SYS_CPU) or available_cpus()
    quota = _quota_cpus(cgroup or _CGROUP)
    return max(1, min(cores, quota) if quota else cores)


def default_threads() -> int:
    """``AGENTFLOW_THREADS`` if set, else ``usable_cores()`` up to ``MAX_THREADS``.

    Raises:
        InvalidModelError: ``AGENTFLOW_THREADS`` is not a positive integer.
    """
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return min(usable_cores(), MAX_THREADS)
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
