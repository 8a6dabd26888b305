"""One framework, one scenario, in a fresh process; prints one JSON line.

    python -m benchmarks.compare.worker --framework agentflow --scenario cpu \\
        --url http://127.0.0.1:PORT --profile openai --n 200 --concurrency 1

Run by ``run.py`` inside the benchmark virtual environment (the server is
configured before this starts). ``--pyinstrument FILE`` profiles the scenario
and writes pyinstrument's text report to FILE; ``--tracemalloc FILE`` (memory
scenario) snapshots allocations while every call is in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from .common import apply_offline_env

__all__ = ["main"]

DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "agentflow": ("agentflow", "aiohttp"),
    "agentflow-nostream": ("agentflow", "aiohttp"),
    "agentflow-stream": ("agentflow", "aiohttp"),
    "raw-stream": ("aiohttp", "orjson"),
    "pydantic-ai": ("pydantic-ai-slim", "openai", "httpx"),
    "langchain": ("langchain", "langchain-openai", "langgraph", "openai"),
    "instructor": ("instructor", "openai"),
    "openai-agents": ("openai-agents", "openai"),
    "openai-sdk": ("openai",),
    "raw": ("aiohttp", "orjson"),
}


def _versions(framework: str) -> dict[str, str]:
    out = {}
    for dist in (*DISTRIBUTIONS.get(framework, ()), "pydantic"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "?"
    return out


async def _run(ns: argparse.Namespace) -> dict[str, Any]:
    from .frameworks import Target, loader
    from .scenarios import SCENARIOS

    t0 = time.perf_counter()
    build = loader(ns.framework)
    import_s = time.perf_counter() - t0
    adapter = await build(Target(ns.url, ns.profile, ns.concurrency))
    scenario = SCENARIOS[ns.scenario]
    try:
        if ns.pyinstrument:
            from pyinstrument import Profiler

            from ._profiling import summarize
            from .scenarios import MEASURE_HOOKS

            profiler = Profiler(interval=0.001, async_mode="disabled")
            MEASURE_HOOKS.update(start=profiler.start, stop=profiler.stop)
            figures = await scenario(adapter, ns.n, ns.concurrency)
            figures["_profile_text"] = profiler.output_text(
                unicode=False, color=False, show_all=False)
            figures["profile_summary"] = summarize(profiler.last_session)
        elif ns.tracemalloc:
            from ._tracing import MemoryTrace
            from .scenarios import MEASURE_HOOKS

            trace = MemoryTrace()
            MEASURE_HOOKS.update(start=trace.start, peak=trace.peak, stop=trace.stop)
            figures = await scenario(adapter, ns.n, ns.concurrency)
            summary, figures["_profile_text"] = trace.summary(ns.concurrency)
            figures["memory_summary"] = summary
        else:
            figures = await scenario(adapter, ns.n, ns.concurrency)
    finally:
        await adapter.aclose()
    return {"framework": ns.framework, "scenario": ns.scenario, "profile": ns.profile,
            "n": ns.n, "concurrency": ns.concurrency, "import_s": round(import_s, 3),
            "versions": _versions(ns.framework), **figures}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.compare.worker")
    p.add_argument("--framework", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--url", required=True, help="the chaos server's root URL")
    p.add_argument("--profile", default="openai")
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--pyinstrument", help="profile the scenario; write the report here")
    p.add_argument("--tracemalloc", help="trace memory at peak; write the report here")
    ns = p.parse_args(argv)
    apply_offline_env()
    result = asyncio.run(_run(ns))
    if ns.pyinstrument or ns.tracemalloc:
        Path(ns.pyinstrument or ns.tracemalloc).write_text(result.pop("_profile_text"))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
