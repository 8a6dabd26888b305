"""The Ray Data engine (agentflow/ray.py) vs ``extract_many`` in one process,
at equal total concurrency, against a fake OpenAI server.

The fake (``tests.fakes.serve``) runs in its own process and answers every
request after ``--latency`` seconds with the JSON of ``Item``. Measured, in
this order:

* ``extract_many``: ``--docs`` documents at ``--concurrency`` in this process
  (the floor);
* Ray start-up: ``ray.init(num_cpus=2)`` of a local cluster;
* the Ray pipeline over ``--docs`` documents: ``--actors`` actors sharing
  ``--concurrency`` calls, ``from_items -> map_batches``, consumed by the driver.

Per-record time: ``extract_many``'s wall time / documents; the Ray pipeline's
from its first batch of results to its last (start-up, printed apart, is the
time to the first batch: creating the actor pool, each actor importing
agentflow and building its model). The pipeline runs twice: cold (new worker
processes) and warm (Ray reuses idle workers).

Target (issue 15): the Ray pipeline's per-record time <= 1.2 x extract_many's.

    python benchmarks/bench_ray.py [--docs 2000] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentflow.batch import extract_many  # noqa: E402
from agentflow.providers.openai import OpenAIChatModel  # noqa: E402

SCHEMA = ROOT / "benchmarks" / "_ray_schema.py"


class Item(BaseModel):
    """The output of every call (the same as ``_ray_schema.Item``)."""

    name: str


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake OpenAI server in its own process; it and its base URL."""
    cmd = [sys.executable, "-m", "tests.fakes.serve", "openai", "--port", "0",
           "--latency", str(latency), "--text", '{"name": "Ann Lee"}']
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 3 or line[0] != "listening":
        proc.terminate()
        raise SystemExit(f"fake server did not start: {line}")
    return proc, line[2]


def documents(n: int, offset: int = 0) -> list[tuple[str, str]]:
    return [(f"doc-{offset + i}", f"Write to Ann Lee about invoice {offset + i}.")
            for i in range(n)]


async def run_local(url: str, n: int, concurrency: int) -> float:
    model = OpenAIChatModel("gpt-4o-mini", base_url=url, api_key="bench")
    start = time.perf_counter()
    ok = 0
    async for result in extract_many(model, documents(n), Item, concurrency=concurrency,
                                      order="completed"):
        ok += result.ok
    elapsed = time.perf_counter() - start
    await model.aclose()
    assert ok == n, f"{n - ok} failed"
    return elapsed


def run_ray(url: str, n: int, args: argparse.Namespace, offset: int) -> tuple[float, float, float]:
    """One pipeline run: ``(total s, s to the first batch of results, s per record
    from the first batch of results to the last)``."""
    import ray

    from agentflow import ray as engine

    start = time.perf_counter()
    rows = [{"id": i, "text": t, "problem": None, "source_offset": 0}
            for i, t in documents(n, offset)]
    out = engine.extract_dataset(
        ray.data.from_items(rows), f"{SCHEMA}:Item", model="openai:gpt-4o-mini", base_url=url,
        api_key="bench", actors=args.actors, concurrency=args.concurrency)
    ok = seen = 0
    first_at = first_rows = 0.0
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        if not seen:
            first_at, first_rows = time.perf_counter(), len(batch["ok"])
        seen += len(batch["ok"])
        ok += int(batch["ok"].sum())
    end = time.perf_counter()
    assert ok == n, f"{n - ok} failed"
    steady = (end - first_at) / max(1.0, n - first_rows)
    return end - start, first_at - start, steady


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16, help="total calls in flight")
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.1, help="server seconds per reply")
    args = parser.parse_args(argv)
    SCHEMA.write_text("from pydantic import BaseModel\n\n\nclass Item(BaseModel):\n"
                      "    name: str\n")
    server, url = start_server(args.latency)
    try:
        local = asyncio.run(run_local(url, args.docs, args.concurrency))
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR", configure_logging=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        init_s = time.perf_counter() - start
        cold = run_ray(url, args.docs, args, offset=0)
        warm = run_ray(url, args.docs, args, offset=10_000_000)
        ray.shutdown()
    finally:
        server.terminate()
        server.wait(10)
        SCHEMA.unlink(missing_ok=True)
    ideal = args.latency / args.concurrency
    per_local = local / args.docs
    print(f"{args.docs} documents, total concurrency {args.concurrency} "
          f"({args.actors} actors), server latency {args.latency}s "
          f"(ideal {ideal * 1000:.2f} ms per record)")
    print(f"extract_many (one process): {local:6.2f} s total, {per_local * 1000:5.2f} ms/record")
    print(f"ray.init (local, 2 CPUs):   {init_s:6.2f} s")
    for name, (total, first, steady) in (("cold", cold), ("warm", warm)):
        print(f"ray pipeline, {name}:        {total:6.2f} s total, {first:5.2f} s to the first "
              f"results, then {steady * 1000:5.2f} ms/record ({steady / per_local:.2f}x "
              f"extract_many)")


if __name__ == "__main__":
    main()
