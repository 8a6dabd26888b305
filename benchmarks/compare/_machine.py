"""Machine facts and contention accounting for the report (stdlib only)."""

from __future__ import annotations

import os
import platform
import resource
from pathlib import Path
from typing import Any

__all__ = ["busy_seconds", "children_cpu_seconds", "machine_facts", "other_processes"]

_TICK = os.sysconf("SC_CLK_TCK")


def machine_facts() -> dict[str, Any]:
    """CPU model and count, memory, kernel, Python, load average."""
    model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return {"cpus": os.cpu_count(), "cpu_model": model, "mem_gib": round(mem_kb / 2**20, 1),
            "kernel": platform.release(), "python": platform.python_version(),
            "loadavg": os.getloadavg()}


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (all cores, since boot)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / _TICK


def children_cpu_seconds() -> float:
    """CPU seconds of this process's waited-for children (the workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def other_processes(exclude: set[int], limit: int = 5) -> list[dict[str, Any]]:
    """The busiest processes not in ``exclude`` (lifetime CPU %), for the report."""
    out = []
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in exclude:
            continue
        try:
            stat = (proc / "stat").read_text()
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat.rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue
        cpu = (int(fields[11]) + int(fields[12])) / _TICK
        age = uptime - int(fields[19]) / _TICK
        if age > 1 and cpu / age > 0.05:
            out.append({"pid": int(proc.name), "comm": comm, "cpu_pct": round(100 * cpu / age)})
    return sorted(out, key=lambda p: -p["cpu_pct"])[:limit]
