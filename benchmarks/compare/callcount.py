"""Work per call, load-independent: Python function calls (cProfile) and
allocations retained per in-flight call (tracemalloc), for one framework.

    python -m benchmarks.compare.callcount --framework agentflow
    python -m benchmarks.compare.callcount --framework agentflow-stream --top 25
    python -m benchmarks.compare.callcount --framework raw --memory 200

Starts the chaos server (compliant OpenAI-like profile) itself on 127.0.0.1,
makes ``--warmup`` calls, then ``--calls`` sequential calls under cProfile and
prints the function calls per call (primitive and total), then ``--memory``
calls all in flight at once under tracemalloc and prints the growth per
in-flight call (Python allocations only) with its largest sites. Counts do
not depend on the machine's load, so they judge a hot-path change where
wall-clock ratios (``run.py``) are too noisy; they are not CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from ._server import ChaosServer
from .common import prompt_for

__all__ = ["main"]

REPO = Path(__file__).resolve().parents[2]


async def _calls(adapter: Any, ns: argparse.Namespace) -> pstats.Stats:
    for i in range(ns.warmup):
        await adapter.extract(prompt_for(i))
    gc.collect()
    profile = cProfile.Profile()
    profile.enable()
    for i in range(ns.calls):
        await adapter.extract(prompt_for(1000 + i))
    profile.disable()
    return pstats.Stats(profile)


async def _memory(adapter: Any, n: int, ns_top: int = 15) -> tuple[float, list[tuple[str, float]]]:
    gate = asyncio.Event()
    arrived = 0

    async def one(i: int) -> None:
        nonlocal arrived
        arrived += 1
        if arrived == n:
            gate.set()
        await adapter.extract(prompt_for(2000 + i))

    gc.collect()
    tracemalloc.start(1)
    before = tracemalloc.take_snapshot()
    tasks = [asyncio.ensure_future(one(i)) for i in range(n)]
    await gate.wait()
    await asyncio.sleep(0.05)  # let every request reach the server
    peak = tracemalloc.take_snapshot()
    tracemalloc.stop()
    await asyncio.gather(*tasks)
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = peak.filter_traces(ignore).compare_to(before.filter_traces(ignore), "lineno")
    total = sum(s.size_diff for s in diff) / 1024 / n
    sites = [(f"{s.traceback[0].filename.split('site-packages/')[-1].replace(str(REPO) + '/', '')}"
              f":{s.traceback[0].lineno}", s.size_diff / 1024 / n) for s in diff[:ns_top]]
    return total, sites


async def _run(ns: argparse.Namespace) -> None:
    from .frameworks import Target, loader

    server = ChaosServer(Path(sys.executable), REPO, None)
    url = server.start()
    try:
        adapter = await loader(ns.framework)(Target(url, "openai", max(1, ns.memory)))
        try:
            stats = await _calls(adapter, ns)
            total = stats.total_calls  # type: ignore[attr-defined]
            prim = stats.prim_calls  # type: ignore[attr-defined]
            print(f"{ns.framework}: {total / ns.calls:,.0f} function calls per call "
                  f"({prim / ns.calls:,.0f} primitive), {ns.calls} calls")
            if ns.top:
                stats.sort_stats("ncalls").print_stats(ns.top)
            if ns.memory:
                kb, sites = await _memory(adapter, ns.memory)
                print(f"{ns.framework}: {kb:.2f} KB per in-flight call "
                      f"(tracemalloc, {ns.memory} in flight)")
                for where, size in sites:
                    print(f"  {size:7.2f} KB  {where}")
        finally:
            await adapter.aclose()
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--framework", default="agentflow")
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--memory", type=int, default=500,
                   help="calls in flight for the memory figure (0: skip)")
    p.add_argument("--top", type=int, default=0, help="print the N most-called functions")
    asyncio.run(_run(p.parse_args(argv)))


if __name__ == "__main__":
    main()
