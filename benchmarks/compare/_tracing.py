"""Where the memory goes: a tracemalloc snapshot while every call is in
flight, compared with one taken before the run, summed by package and line."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from typing import Any

from ._profiling import bucket

__all__ = ["MemoryTrace"]


class MemoryTrace:
    """``start`` / ``peak`` / ``stop`` hooks for ``scenarios.MEASURE_HOOKS``."""

    def __init__(self) -> None:
        self.before: tracemalloc.Snapshot | None = None
        self.at_peak: tracemalloc.Snapshot | None = None

    def start(self) -> None:
        tracemalloc.start(1)
        self.before = tracemalloc.take_snapshot()

    def peak(self) -> None:
        self.at_peak = tracemalloc.take_snapshot()

    def stop(self) -> None:
        tracemalloc.stop()

    def summary(self, in_flight: int, top: int = 15) -> tuple[dict[str, Any], str]:
        """(figures, text report): KB per in-flight call by package and top lines."""
        if self.before is None or self.at_peak is None:
            return {}, "no snapshot at peak\n"
        ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
        diff = self.at_peak.filter_traces(ignore).compare_to(
            self.before.filter_traces(ignore), "lineno")
        per_call = 1024 * max(1, in_flight)
        by_package: Counter[str] = Counter()
        for stat in diff:
            frame = stat.traceback[0]
            package = bucket(frame.filename, "", "other")
            by_package["asyncio" if package == "idle" else package] += stat.size_diff
        lines = [(f"{s.traceback[0].filename}:{s.traceback[0].lineno}", s.size_diff / per_call)
                 for s in diff[:top]]
        total = sum(s.size_diff for s in diff) / per_call
        text = "\n".join(f"{kb:8.2f} KB/call  {where}" for where, kb in lines)
        figures = {"kb_per_call": round(total, 2),
                   "packages": {p: round(v / per_call, 2) for p, v in by_package.most_common()},
                   "lines": [[w.split("site-packages/")[-1].replace("/work/main/", ""), round(k, 2)]
                             for w, k in lines]}
        return figures, f"tracemalloc growth at peak, {total:.2f} KB per in-flight call\n{text}\n"
