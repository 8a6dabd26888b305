"""Web backend figures: SSE events/s and per-event overhead of a streamed
call, and state store save+load latency on SQLite and PostgreSQL.

    python benchmarks/bench_web.py --events 5000 --rounds 5 --store-ops 300 --calls 2000

SSE: one call of a ``ScriptedModel`` streaming ``--events`` text chunks,
measured three ways in the same run: the floor (``agent.stream`` drained in
process), the ``EventStreamResponse`` driven as ASGI with in-memory
send/receive (encoding + the response's task hop, no network), and end to
end (uvicorn on 127.0.0.1, read by an aiohttp client). Per-event overhead is
(way - floor) / events. Medians of ``--rounds`` rounds.

Tracing: CPU per one-turn call with telemetry off, on without an SDK
(the default when ``opentelemetry-api`` is installed) and recording into
the SDK's in-memory exporter.

Adapters: the same call through ``EventStreamResponse`` with each encoder
(agentflow's wire, AG-UI, AI SDK UI message stream), in-memory ASGI;
per-event overhead over the floor, and each adapter's against our wire's
(target: <= 2x).

Atomic saves (``--cancel-points``, ``--kills``): per store, saves cancelled
at random moments and processes killed mid-save; a save that raised must
have written nothing, one that returned all of it (target: 0 violations).

Load (``--load-clients``, ``--load-waves``, ``--bad-rate``): the example app
(examples/web/app.py, its own process) under that many concurrent SSE
clients per wave plus oversized/malformed requests at ``--bad-rate`` per
second: every well-formed stream completes, no 500, peak RSS / idle RSS
(target: <= 2).

Stores: ``--store-ops`` save+load pairs of a 20-message conversation on one
key (each save at the version just loaded), on a SQLite file in a temporary
directory and on a PostgreSQL server started for the run
(``tests/postgres_server.py``); median and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp
import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import AgentState, Msg, ReActAgent
from agentflow.testing import Call, Reply, ScriptedModel
from agentflow.web import (
    EventStreamResponse,
    PostgresStateStore,
    SQLiteStateStore,
    StateStore,
)


def agent_for(events: int) -> ReActAgent:
    return ReActAgent("bench", ScriptedModel([Reply(text="x" * events, chunk_size=1)] * 1000))


async def floor(events: int, partials: bool = False) -> tuple[float, int]:
    agent = partials_agent(events) if partials else agent_for(events)
    start = time.perf_counter()
    count = 0
    async for _ in agent.stream("go", Note if partials else None):
        count += 1
    return time.perf_counter() - start, count


class Note(BaseModel):
    title: str
    tags: list[str]


def partials_agent(events: int) -> ReActAgent:
    """A call whose structured output streams in ``events`` pieces (one
    ``output_partial`` each)."""
    args = {"title": "t" * (events // 2), "tags": ["x"] * (events // 8)}
    return ReActAgent("bench", ScriptedModel([Reply(tool_calls=[Call("generate_response", args)],
                                                    chunk_size=2)] * 1000))


async def asgi(events: int, encoder: Any = None, partials: bool = False) -> tuple[float, int]:
    agent = partials_agent(events) if partials else agent_for(events)
    frames = 0

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal frames
        if message.get("body"):
            frames += 1

    start = time.perf_counter()
    response = EventStreamResponse(agent.stream("go", Note if partials else None),
                                   encoder=encoder)
    await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
    return time.perf_counter() - start, frames


async def end_to_end(events: int) -> tuple[float, int]:
    agent = agent_for(events)

    async def endpoint(request: Request) -> Response:
        return EventStreamResponse(agent.stream("go"))

    app = Starlette(routes=[Route("/", endpoint, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off"))
    serving = asyncio.ensure_future(server.serve())
    while not server.started:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/"
    try:
        async with aiohttp.ClientSession() as http:
            start = time.perf_counter()
            async with http.post(url) as response:
                body = await response.read()
            elapsed = time.perf_counter() - start
    finally:
        server.should_exit = True
        await serving
    return elapsed, body.count(b"\nevent: ")


async def sse(events: int, rounds: int) -> None:
    results: dict[str, list[float]] = {"floor": [], "asgi": [], "http": []}
    counts: dict[str, int] = {}
    for _ in range(rounds):
        for name, way in (("floor", floor), ("asgi", asgi), ("http", end_to_end)):
            elapsed, count = await way(events)
            results[name].append(elapsed)
            counts[name] = count
    base = statistics.median(results["floor"])
    print(f"SSE, one streamed call of {counts['floor']} events, median of {rounds} rounds")
    print("| way | events/s | µs per event | overhead µs per event vs floor |")
    print("|---|--:|--:|--:|")
    for name, label in (("floor", "agent.stream drained (floor)"),
                        ("asgi", "EventStreamResponse, in-memory ASGI"),
                        ("http", "uvicorn + aiohttp client on 127.0.0.1")):
        median = statistics.median(results[name])
        n = counts[name]
        overhead = "" if name == "floor" else f"{(median - base) / n * 1e6:.1f}"
        print(f"| {label} | {n / median:,.0f} | {median / n * 1e6:.1f} | {overhead} |")


async def adapters(events: int, rounds: int) -> None:
    from agentflow.web.agui import AGUIEncoder
    from agentflow.web.aisdk import UIMessageEncoder
    from agentflow.web.encoding import AgentflowEncoder

    makers = {"agentflow wire": AgentflowEncoder, "AG-UI": lambda: AGUIEncoder("t", "r"),
              "AI SDK UI message stream": UIMessageEncoder}
    for partials, what in ((False, f"{events} text chunks"),
                           (True, "a structured output streamed as partial objects")):
        times: dict[str, list[float]] = {"floor": [], **{name: [] for name in makers}}
        count = 0
        for _ in range(rounds):
            elapsed, count = await floor(events, partials)
            times["floor"].append(elapsed)
            for name, make in makers.items():
                times[name].append((await asgi(events, make(), partials))[0])
        base = statistics.median(times["floor"])
        own = (statistics.median(times["agentflow wire"]) - base) / count * 1e6
        print(f"\nAdapters, one streamed call of {what} ({count} events), in-memory ASGI, "
              f"median of {rounds} rounds")
        print("| encoder | µs per event | overhead µs per event vs floor | vs agentflow wire |")
        print("|---|--:|--:|--:|")
        for name in makers:
            median = statistics.median(times[name])
            overhead = (median - base) / count * 1e6
            print(f"| {name} | {median / count * 1e6:.1f} | {overhead:.1f} | "
                  f"{overhead / own:.2f}x |")


async def atomic(points: int, kill_count: int) -> None:
    from benchmarks._web_load import cancel_points, kills
    from tests.postgres_server import postgres_server

    print(f"\nAtomic saves: {points} randomised cancellation points and {kill_count} kill -9 "
          "per store")
    print("| store | cancelled saves that raised | completed before the cancel | "
          "persisted though raised | lost though returned | kill -9 | torn after kill |")
    print("|---|--:|--:|--:|--:|--:|--:|")

    def row(name: str, c: dict[str, int], k: dict[str, int]) -> None:
        print(f"| {name} | {c['raised']} | {c['completed']} | {c['persisted_though_raised']} | "
              f"{c['lost_though_returned']} | {k['kills']} | {k['torn']} |")

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "atomic.sqlite3")
        async with SQLiteStateStore(path) as sqlite:
            row("SQLite", await cancel_points(sqlite, points, 1),
                await kills(sqlite, "sqlite", path, kill_count, 2))
    try:
        with postgres_server() as dsn:
            async with PostgresStateStore(dsn) as pg:
                row("PostgreSQL", await cancel_points(pg, points, 3),
                    await kills(pg, "postgres", dsn, kill_count, 4))
    except FileNotFoundError as exc:
        print(f"| PostgreSQL | skipped: {exc} | | | | | |")


async def load_test(clients: int, waves: int, bad_rate: float) -> None:
    from benchmarks._web_load import load

    got = await load(clients, waves, bad_rate)
    print(f"\nExample app under {clients} concurrent SSE clients x {waves} waves plus "
          f"~{bad_rate:g} oversized/malformed requests per second ({got['seconds']:.1f} s)")
    print("| streams completed | streams incomplete | bad requests sent | refused 4xx | "
          "closed at 413 | HTTP 500 | idle RSS MiB | peak RSS MiB | peak / idle |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    bad = got["bad"]
    print(f"| {got['streams']['ok']} | {got['streams']['incomplete']} | {bad['sent']} | "
          f"{bad['refused_4xx']} | {bad['connection_closed']} | "
          f"{got['statuses'].get(500, 0)} | {got['idle_kib'] / 1024:.0f} | "
          f"{got['peak_kib'] / 1024:.0f} | {got['peak_kib'] / got['idle_kib']:.2f} |")
    print(f"statuses: {dict(sorted(got['statuses'].items()))}")


def conversation() -> AgentState:
    messages = []
    for i in range(10):
        messages.append(Msg.user(f"question {i}: " + "lorem ipsum " * 20))
        messages.append(Msg.assistant(f"answer {i}: " + "dolor sit amet " * 20))
    return AgentState(messages)


async def store_latency(name: str, store: StateStore, ops: int) -> None:
    state = conversation()
    key = "bench"
    loaded = await store.load(key)
    version = loaded.version
    timings: list[float] = []
    for _ in range(ops):
        start = time.perf_counter()
        version = await store.save(key, state, version=version)
        loaded = await store.load(key)
        timings.append(time.perf_counter() - start)
    timings.sort()
    size = len(state.to_json())
    print(f"| {name} | {ops} | {size:,} | {statistics.median(timings) * 1e3:.2f} | "
          f"{timings[int(len(timings) * 0.95) - 1] * 1e3:.2f} |")


async def stores(ops: int) -> None:
    print(f"\nStore save+load of one conversation ({ops} pairs)")
    print("| store | pairs | document bytes | median ms | p95 ms |")
    print("|---|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        async with SQLiteStateStore(Path(tmp) / "bench.sqlite3") as sqlite:
            await store_latency("SQLite (file, WAL)", sqlite, ops)
    from tests.postgres_server import postgres_server

    try:
        with postgres_server() as dsn:
            async with PostgresStateStore(dsn) as pg:
                await store_latency("PostgreSQL 15 (127.0.0.1, fsync off)", pg, ops)
    except FileNotFoundError as exc:
        print(f"| PostgreSQL | skipped: {exc} | | | |")


async def tracing(calls: int, rounds: int) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentflow.telemetry import Telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    setups = [("off (`Telemetry(enabled=False)`)", Telemetry(enabled=False)),
              ("default, no tracer provider set (spans skipped)", Telemetry()),
              ("SDK, in-memory exporter (2 spans recorded per call)",
               Telemetry(tracer_provider=provider))]
    print(f"\nTracing cost, one-turn text call on ScriptedModel, CPU µs per call "
          f"({calls} calls, median of {rounds} rounds)")
    print("| telemetry | CPU µs per call | vs off |")
    print("|---|--:|--:|")
    base = 0.0
    for label, telemetry in setups:
        agent = ReActAgent("bench", ScriptedModel(["hello"] * (calls * rounds + 10)),
                           telemetry=telemetry)
        times = []
        for _ in range(rounds):
            exporter.clear()
            start = time.process_time()
            for _ in range(calls):
                await agent.call("hi", state=AgentState())
            times.append((time.process_time() - start) / calls * 1e6)
        median = statistics.median(times)
        base = base or median
        print(f"| {label} | {median:.1f} | {median - base:+.1f} |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--store-ops", type=int, default=300)
    parser.add_argument("--calls", type=int, default=2000, help="calls per tracing round")
    parser.add_argument("--cancel-points", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=20, help="kill -9 mid-save, per store")
    parser.add_argument("--load-clients", type=int, default=500)
    parser.add_argument("--load-waves", type=int, default=2)
    parser.add_argument("--bad-rate", type=float, default=50.0)
    parser.add_argument("--only", default="sse,adapters,atomic,load,stores,tracing",
                        help="comma-separated sections to run")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if "sse" in only:
        await sse(args.events, args.rounds)
    if "adapters" in only:
        await adapters(args.events, args.rounds)
    if "atomic" in only:
        await atomic(args.cancel_points, args.kills)
    if "load" in only:
        await load_test(args.load_clients, args.load_waves, args.bad_rate)
    if "stores" in only:
        await stores(args.store_ops)
    if "tracing" in only:
        await tracing(args.calls, args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
