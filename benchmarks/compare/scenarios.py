"""The scenarios, run inside one worker process against one adapter.

Each returns a flat dict of figures (JSON-serialisable). The server's own
settings (latency, chunk pacing, chaos) are set by the orchestrator before
the worker starts.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from .common import Contact, contact_for, prompt_for
from .frameworks import Adapter

__all__ = ["MEASURE_HOOKS", "SCENARIOS", "classify", "rss_bytes"]

MEASURE_HOOKS: dict[str, Callable[[], object]] = {}
"""Optional ``start``/``stop`` callbacks around the measured part (after the
warm-up), e.g. a profiler's."""

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """This process's resident set size now."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE


def _measure(phase: str) -> None:
    hook = MEASURE_HOOKS.get(phase)
    if hook is not None:
        hook()


def classify(value: Any, i: int) -> tuple[str, bool]:
    """(``"valid"`` | ``"silent"``, correct?) for what a framework returned on task ``i``.

    Valid: a ``Contact`` (or model/dict that validates as one). Anything else
    returned without an exception (``None``, a missing or invalid object) is
    a silent failure. Correct: equal to the ground truth.
    """
    data = value.model_dump() if isinstance(value, BaseModel) else value
    if not isinstance(data, dict):
        return "silent", False
    try:
        obj = Contact.model_validate(data)
    except ValueError:
        return "silent", False
    return "valid", obj == contact_for(i)


async def _pool(n: int, concurrency: int, one: Callable[[int], Awaitable[None]],
                start: int = 0) -> None:
    """Run ``one(i)`` for ``i`` in ``start..start+n`` on ``concurrency`` workers."""
    tasks = iter(range(start, start + n))

    async def worker() -> None:
        for i in tasks:
            await one(i)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, n))))


async def _checked(adapter: Adapter, failures: Counter[str], i: int) -> None:
    try:
        value = await adapter.extract(prompt_for(i))
    except Exception as exc:  # counted, not hidden
        failures[type(exc).__name__] += 1
        return
    outcome, correct = classify(value, i)
    if not correct:
        failures[outcome if outcome != "valid" else "wrong"] += 1


async def cpu(adapter: Adapter, n: int, concurrency: int) -> dict[str, Any]:
    """Sequential calls: client CPU and wall time per call."""
    failures: Counter[str] = Counter()
    for i in range(20):  # warm-up: lazy imports, caches, the connection
        await _checked(adapter, failures, i)
    gc.collect()
    _measure("start")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(n):
        await _checked(adapter, failures, 1000 + i)
    cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
    _measure("stop")
    return {"cpu_us_per_call": cpu_s / n * 1e6, "wall_ms_per_call": wall_s / n * 1e3,
            "failures": dict(failures)}


async def throughput(adapter: Adapter, n: int, concurrency: int) -> dict[str, Any]:
    """``n`` calls on ``concurrency`` workers: calls per second."""
    failures: Counter[str] = Counter()
    await _pool(concurrency * 2, concurrency, lambda i: _checked(adapter, failures, i))
    gc.collect()
    _measure("start")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await _pool(n, concurrency, lambda i: _checked(adapter, failures, i), start=1000)
    cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
    _measure("stop")
    return {"calls_per_s": n / wall_s, "cpu_us_per_call": cpu_s / n * 1e6,
            "wall_s": wall_s, "failures": dict(failures)}


async def memory(adapter: Adapter, n: int, concurrency: int) -> dict[str, Any]:
    """Peak RSS growth while ``concurrency`` calls are in flight, per call."""
    failures: Counter[str] = Counter()
    await _pool(20, 10, lambda i: _checked(adapter, failures, i))
    gc.collect()
    base = peak = rss_bytes()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_bytes())
            time.sleep(0.002)

    in_flight = max_in_flight = 0
    peaked: list[bool] = []

    async def one(i: int) -> None:
        nonlocal in_flight, max_in_flight
        in_flight += 1
        max_in_flight = max(max_in_flight, in_flight)
        if in_flight == concurrency and not peaked:
            peaked.append(True)
            await asyncio.sleep(0.05)  # let the calls reach the server
            _measure("peak")
        try:
            await _checked(adapter, failures, i)
        finally:
            in_flight -= 1

    sampler = threading.Thread(target=sample, daemon=True)
    _measure("start")
    sampler.start()
    wall0 = time.perf_counter()
    await _pool(n, concurrency, one, start=1000)
    wall_s = time.perf_counter() - wall0
    done.set()
    sampler.join()
    _measure("stop")
    peak = max(peak, rss_bytes())
    return {"kb_per_call": (peak - base) / 1024 / max(1, max_in_flight),
            "peak_delta_mb": (peak - base) / 2**20, "base_mb": base / 2**20,
            "client_max_in_flight": max_in_flight, "wall_s": wall_s,
            "failures": dict(failures)}


def _nonempty(value: Any) -> bool:
    data = value.model_dump() if isinstance(value, BaseModel) else value
    return isinstance(data, dict) and any(v not in (None, "", []) for v in data.values())


async def stream(adapter: Adapter, n: int, concurrency: int) -> dict[str, Any]:
    """Sequential streamed calls: ms to the first event, the first partial object, the end."""
    failures: Counter[str] = Counter()
    firsts: list[float] = []
    partials: list[float] = []
    totals: list[float] = []
    partial_counts: list[int] = []
    for k in range(3 + n):  # the first 3 warm up
        i = 1000 + k
        first = first_partial = total = None
        count = 0
        final: Any = None
        t0 = time.perf_counter()
        async for kind, value in adapter.stream(prompt_for(i)):
            now = (time.perf_counter() - t0) * 1e3
            first = now if first is None else first
            if kind == "partial" and _nonempty(value):
                count += 1
                first_partial = now if first_partial is None else first_partial
            elif kind == "final":
                final, total = value, now
        if classify(final, i) != ("valid", True):
            failures["wrong-or-missing"] += 1
        if k >= 3 and first is not None and total is not None:
            firsts.append(first)
            totals.append(total)
            partial_counts.append(count)
            if first_partial is not None:
                partials.append(first_partial)
    med = statistics.median
    return {"first_event_ms": med(firsts), "first_partial_ms": med(partials) if partials else None,
            "total_ms": med(totals), "partials_per_call": med(partial_counts),
            "calls_without_partial": len(totals) - len(partials), "failures": dict(failures)}


async def chaos(adapter: Adapter, n: int, concurrency: int) -> dict[str, Any]:
    """``n`` extractions against the misbehaving model: outcome shares."""
    outcomes: Counter[str] = Counter()
    errors: Counter[str] = Counter()

    async def one(i: int) -> None:
        try:
            value = await asyncio.wait_for(adapter.extract(prompt_for(i)), 60)
        except Exception as exc:  # every failure is an outcome here
            cls = type(exc)
            typed = cls.__module__ != "builtins" and not isinstance(exc, TimeoutError)
            outcomes["error" if typed else "untyped_error"] += 1
            errors[f"{cls.__module__}.{cls.__qualname__}"] += 1
            return
        outcome, correct = classify(value, i)
        outcomes[outcome] += 1
        if outcome == "valid" and not correct:
            outcomes["valid_but_wrong"] += 1

    wall0 = time.perf_counter()
    await _pool(n, concurrency, one, start=100_000)
    for name in ("usage_unreported", "usage_claims_zero"):  # adapters that count usage
        if isinstance(count := getattr(adapter, name, None), int):
            outcomes[name] = count
    return {"n": n, "outcomes": dict(outcomes), "errors": dict(errors),
            "wall_s": time.perf_counter() - wall0}


SCENARIOS: dict[str, Callable[[Adapter, int, int], Awaitable[dict[str, Any]]]] = {
    "cpu": cpu, "throughput": throughput, "memory": memory, "stream": stream, "chaos": chaos,
}
