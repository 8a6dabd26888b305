"""The embedded model's scaling: the same documents at several thread and slot
counts, back to back in one process, each configuration on a fresh server.

Runs ``extract_many`` (the main job's schema, instructions and examples,
``passes`` 1 by default: one request per document, so every configuration does
the same work) on ``--n`` documents of the bench_extract ``report`` sample for
each ``--configs`` entry ``THREADSxSLOTS`` (concurrency = slots). The first
entry is the baseline of the same run. Prints per configuration: documents/min
and decoded tokens/s (wall: load-dependent, the load average is printed),
CPU seconds per document (this process and the server's,
``LocalModel.cpu_seconds``), the
llama.cpp profile (``LocalModel.stats``), the speed-up over the baseline, and
whether every record equals the baseline's (reproducibility across thread
and slot counts).

    python benchmarks/bench_local_scaling.py [--n 4] [--offset 200]
        [--configs 1x1 1x2 2x2 2x4] [--passes 1] [--no-cache-prompt]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_extract  # the sample and the schema module


def config(text: str) -> tuple[int, int]:
    """``THREADSxSLOTS`` -> (threads, slots)."""
    threads, _, slots = text.partition("x")
    return int(threads), int(slots or 1)


async def run(batch: list[Any], module: Any, threads: int, slots: int, passes: int,
              cache_prompt: bool = True) -> tuple[dict[str, Any], float, float, Any]:
    """Records by id, wall seconds, CPU seconds and the server's stats of one configuration."""
    from agentflow.batch import extract_many
    from agentflow.providers.local import LocalModel

    model = LocalModel(threads=threads, parallel=slots, cache_prompt=cache_prompt)
    try:
        model._ensure_server()  # loading is not timed
        wall, cpu = time.perf_counter(), model.cpu_seconds()
        results = [r async for r in extract_many(
            model, batch, module.ChangelogEntry, concurrency=slots,
            instructions=module.INSTRUCTIONS, examples=module.EXAMPLES, passes=passes)]
        wall, cpu = time.perf_counter() - wall, model.cpu_seconds() - cpu
    finally:
        await model.aclose()
    records = {r.id: (r.output.model_dump() if r.ok else type(r.error).__name__, r.spans)
               for r in results}
    return records, wall, cpu, model.stats


def main() -> None:
    """Parse arguments, run every configuration, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=4, help="documents (default 4)")
    p.add_argument("--offset", type=int, default=200, help="where in the report sample")
    p.add_argument("--configs", nargs="+", type=config, default=[(1, 1), (1, 2), (2, 2), (2, 4)],
                   metavar="THREADSxSLOTS", help="configurations; the first is the baseline")
    p.add_argument("--passes", type=int, default=1, help="extraction passes per document")
    p.add_argument("--no-cache-prompt", action="store_true",
                   help="evaluate every prompt whole (records then equal across configurations)")
    ns = p.parse_args()
    print("machine:", bench_extract.machine_facts())
    batch, _, _, module = bench_extract.documents(ns.n, ns.offset, 1, "report", 10)
    print(f"{len(batch)} documents (report sample from #{ns.offset}); passes {ns.passes}")
    base: tuple[dict[str, Any], float, float] | None = None
    for threads, slots in ns.configs:
        records, wall, cpu, stats = asyncio.run(run(batch, module, threads, slots, ns.passes,
                                                     not ns.no_cache_prompt))
        n = len(batch)
        line = (f"{threads} thread(s) x {slots} slot(s): documents/min {n / wall * 60:.2f}; "
                f"decoded tokens/s {stats.predicted_n / wall:.1f}; CPU s/doc {cpu / n:.1f}; "
                f"load {os.getloadavg()[0]:.1f}")
        if base is None:
            base = records, wall, cpu
        else:
            same = sum(records[k] == base[0][k] for k in records)
            line += (f"; speed-up x{base[1] / wall:.2f} (wall); records equal to the "
                     f"baseline's {same}/{n}")
        print(line)
        print("  profile: " + stats.per(n))


if __name__ == "__main__":
    main()
