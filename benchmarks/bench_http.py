"""The OpenAI adapter + ReActAgent over HTTP vs a raw aiohttp + orjson + pydantic client.

Both clients make the same one-turn structured call (the native strategy,
which ``AutoStrategy`` picks for ``gpt-4o-mini``): a streamed chat completion
with ``response_format`` json_schema (strict) whose reply text is the JSON of
``Contact``, validated with pydantic. The request bodies are checked to be
identical before anything is measured.

The fake OpenAI server (tests/fakes/serve.py) runs in its own process, pinned
to CPU 0; each measurement runs in a fresh client process pinned to CPU 1
(when the machine has two CPUs). Phases, each repeated ``--repeats`` times
with the two clients alternating:

* ``cpu``: CPU time (user + sys) per call, ``--calls`` sequential calls, no
  server latency;
* ``rate``: calls/s at concurrency 50, no server latency (the server's CPU
  utilisation is printed: near 100% means the server, not the client, bounds it);
* ``mem``: peak RSS at concurrency 1000 with 200 ms server latency, and
  ``(peak RSS - RSS after warm-up) / 1000`` = KB per in-flight call.

Targets (issue 4): CPU per call <= 2x the raw client; <= 30 KB per in-flight call.

    python benchmarks/bench_http.py [--calls 1000] [--rate-calls 3000] [--repeats 3]
    python benchmarks/bench_http.py --profile rate  # pyinstrument, both clients
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
MODEL = "gpt-4o-mini"
PROMPT = "Who is the contact in: 'Write to Ann Lee at ann@example.org about the invoice.'"
REPLY = '{"name": "Ann Lee", "email": "ann@example.org"}'
CONN_LIMIT = 2000
SERVER_CPU, CLIENT_CPU = 0, 1


class Contact(BaseModel):
    """The structured output of every call."""

    name: str
    email: str


Call = Callable[[], Awaitable[Contact]]


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema in OpenAI's strict form (closed objects, no titles)."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items() if k != "title"}
            if out.get("type") == "object":
                out["additionalProperties"] = False
            return out
        return [walk(n) for n in node] if isinstance(node, list) else node

    schema: dict[str, Any] = walk(model.model_json_schema())
    return schema


RAW_SCHEMA = strict_schema(Contact)


def raw_body() -> dict[str, Any]:
    """The request body the raw client sends (built per call, as a client would)."""
    return {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True,
            "stream_options": {"include_usage": True},
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "Contact", "schema": RAW_SCHEMA, "strict": True,
                "description": Contact.__doc__}}}


class RawClient:
    """The baseline: aiohttp + orjson + pydantic, SSE read line by line."""

    def __init__(self, base_url: str) -> None:
        import aiohttp

        self.url = f"{base_url}/chat/completions"
        self.headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONN_LIMIT))

    async def call(self) -> Contact:
        """One structured call."""
        async with self.session.post(self.url, data=orjson.dumps(raw_body()),
                                     headers=self.headers) as response:
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}: {await response.text()}")
            parts: list[str] = []
            async for line in response.content:
                if not line.startswith(b"data: "):
                    continue
                data = line[6:].strip()
                if data == b"[DONE]":
                    break
                for choice in orjson.loads(data)["choices"]:
                    if content := choice["delta"].get("content"):
                        parts.append(content)
        return Contact.model_validate_json("".join(parts))

    async def aclose(self) -> None:
        """Close the session."""
        await self.session.close()


class AgentClient:
    """``ReActAgent`` over ``OpenAIChatModel``, one fresh ``AgentState`` per call."""

    def __init__(self, base_url: str) -> None:
        from agentflow import AgentState, ReActAgent
        from agentflow.providers._http import HttpSettings
        from agentflow.providers.openai import OpenAIChatModel

        self.model = OpenAIChatModel(MODEL, base_url=base_url, api_key="sk-bench",
                                     settings=HttpSettings(connection_limit=CONN_LIMIT))
        self.agent = ReActAgent("bench", self.model)
        self.state = AgentState  # a fresh state per call: calls run in parallel

    async def call(self) -> Contact:
        """One structured call."""
        reply = await self.agent.call(PROMPT, Contact, state=self.state())
        output: Contact = reply.output
        return output

    def body(self) -> dict[str, Any]:
        """The body the adapter builds for the call (captured without sending)."""
        captured: dict[str, Any] = {}
        build = self.model.build_body

        def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
            captured.update(build(*args, **kwargs))
            raise _Captured

        self.model.build_body = spy
        try:
            asyncio.run(self.call())
        except _Captured:
            pass
        finally:
            del self.model.build_body
        return captured

    async def aclose(self) -> None:
        """Close the model's session."""
        await self.model.aclose()


class _Captured(Exception):
    """Stops a call once its body is built."""


CLIENTS: dict[str, Callable[[str], RawClient | AgentClient]] = {"raw": RawClient,
                                                                 "agentflow": AgentClient}


def rss_kb() -> float:
    """Current resident set size, KB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


async def gather_calls(call: Call, total: int, concurrency: int) -> int:
    """Run ``total`` calls, ``concurrency`` at a time; returns the peak in flight."""
    in_flight = peak = 0
    remaining = total

    async def worker() -> None:
        nonlocal in_flight, peak, remaining
        while remaining > 0:
            remaining -= 1
            in_flight += 1
            peak = max(peak, in_flight)
            result = await call()
            in_flight -= 1
            assert result.email == "ann@example.org", result

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return peak


async def run_phase(client_name: str, url: str, phase: str, calls: int) -> dict[str, Any]:
    """One measurement in this (fresh) process."""
    client = CLIENTS[client_name](url)
    try:
        warm = 50 if phase != "cpu" else 20
        await gather_calls(client.call, warm * 2, warm)  # imports, caches, connections
        gc.collect()
        if phase == "cpu":
            cpu, wall = time.process_time(), time.perf_counter()
            await gather_calls(client.call, calls, 1)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            return {"cpu_us": cpu / calls * 1e6, "wall_us": wall / calls * 1e6}
        if phase == "rate":
            cpu, wall = time.process_time(), time.perf_counter()
            await gather_calls(client.call, calls, 50)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            return {"calls_s": calls / wall, "cpu_us": cpu / calls * 1e6, "wall_s": wall}
        base = rss_kb()
        wall = time.perf_counter()
        peak_in_flight = await gather_calls(client.call, 1000, 1000)
        wall = time.perf_counter() - wall
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux
        return {"base_mb": base / 1024, "peak_mb": peak / 1024, "in_flight": peak_in_flight,
                "kb_per_call": (peak - base) / peak_in_flight, "wall_s": wall}
    finally:
        await client.aclose()


def worker_main(ns: argparse.Namespace) -> None:
    """``--worker``: one phase, one client; prints one JSON line."""
    profiler = None
    if ns.profile:  # pyinstrument: pip install it; not a project dependency
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
    result = asyncio.run(run_phase(ns.client, ns.url, ns.worker, ns.calls))
    if profiler is not None:
        profiler.stop()
        sys.stderr.write(profiler.output_text(unicode=False, color=False))
    print(orjson.dumps(result).decode(), flush=True)


def pinned(cpu: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` pinning the child to ``cpu`` (None on a 1-CPU machine)."""
    if len(os.sched_getaffinity(0)) < 2:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake OpenAI server in its own process; returns it and its base URL."""
    cmd = [sys.executable, "-m", "tests.fakes.serve", "openai", "--port", "0",
           "--latency", str(latency), "--text", REPLY]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            preexec_fn=pinned(SERVER_CPU))
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 3 or line[0] != "listening":
        proc.kill()
        raise SystemExit(f"fake server did not start: {line}")
    return proc, line[2]


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid``."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_worker(client: str, url: str, phase: str, calls: int, profile: bool = False) -> Any:
    """One phase in a fresh client process pinned to the client CPU."""
    cmd = [sys.executable, __file__, "--worker", phase, "--client", client, "--url", url,
           "--calls", str(calls)] + (["--profile"] if profile else [])
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False,
                         preexec_fn=pinned(CLIENT_CPU))
    if out.returncode != 0:
        raise SystemExit(f"worker {client}/{phase} failed:\n{out.stderr}")
    if profile:
        print(out.stderr)
    return orjson.loads(out.stdout.strip().splitlines()[-1])


def check_same_request(url: str) -> bool:
    """Whether the adapter's body equals the raw client's (printed if not)."""
    client = AgentClient(url)
    adapter = client.body()
    same = adapter == raw_body()
    if not same:
        print("request bodies differ:\n adapter:", orjson.dumps(adapter).decode(),
              "\n raw:    ", orjson.dumps(raw_body()).decode())
    return same


def machine_facts() -> str:
    """CPUs, model, load, versions: the context of the figures."""
    import aiohttp
    import pydantic

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("model name")), platform.processor())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPUs ({cpu}); load average {load}; Python "
            f"{platform.python_version()}, aiohttp {aiohttp.__version__}, orjson "
            f"{orjson.__version__}, pydantic {pydantic.__version__}")


def summary(values: list[float]) -> tuple[float, str]:
    """Median and ``min-max`` spread."""
    return statistics.median(values), f"{min(values):.4g}-{max(values):.4g}"


def main() -> None:
    """Parse arguments; run a worker or the whole benchmark."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="sequential calls (cpu phase)")
    p.add_argument("--rate-calls", type=int, default=3000, help="calls at concurrency 50")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--profile", nargs="?", const="cpu", choices=["cpu", "rate", "mem"],
                   help="profile both clients in this phase (pyinstrument) and exit")
    p.add_argument("--worker", choices=["cpu", "rate", "mem"], help=argparse.SUPPRESS)
    p.add_argument("--client", choices=sorted(CLIENTS), help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    ns = p.parse_args()
    if ns.worker:
        worker_main(ns)
        return
    print("$", shlex.join([Path(sys.executable).name, *sys.argv]))
    print("machine:", machine_facts())
    fast, url_fast = start_server(0.0)
    slow, url_slow = start_server(0.2)
    try:
        pin = "server on CPU 0, clients on CPU 1" if pinned(0) else "no pinning (1 CPU)"
        print(f"fake server: {url_fast} (no latency), {url_slow} (200 ms); {pin}")
        print("request: one-turn structured call, native strategy (streamed, response_format "
              f"json_schema strict); identical bodies: {check_same_request(url_fast)}")
        if ns.profile:
            calls = {"cpu": ns.calls, "rate": ns.rate_calls, "mem": 1000}[ns.profile]
            url = url_slow if ns.profile == "mem" else url_fast
            for client in ("raw", "agentflow"):
                print(f"--- {client}:", run_worker(client, url, ns.profile, calls, profile=True))
            return
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        server_util: dict[str, list[float]] = {"raw": [], "agentflow": []}
        for rep in range(ns.repeats):
            for client in ("raw", "agentflow") if rep % 2 == 0 else ("agentflow", "raw"):
                results.setdefault((client, "cpu"), []).append(
                    run_worker(client, url_fast, "cpu", ns.calls))
                before = proc_cpu_s(fast.pid)
                rate = run_worker(client, url_fast, "rate", ns.rate_calls)
                server_util[client].append((proc_cpu_s(fast.pid) - before) / rate["wall_s"])
                results.setdefault((client, "rate"), []).append(rate)
                results.setdefault((client, "mem"), []).append(
                    run_worker(client, url_slow, "mem", 1000))
        report(results, server_util, ns.repeats)
    finally:
        for proc in (fast, slow):
            proc.terminate()
            proc.wait(10)


def report(results: dict[tuple[str, str], list[dict[str, Any]]],
           server_util: dict[str, list[float]], repeats: int) -> None:
    """Print medians, spreads and ratios to the raw client, and the targets."""
    rows = [("CPU per call, sequential (us)", "cpu", "cpu_us"),
            ("wall per call, sequential (us)", "cpu", "wall_us"),
            ("calls/s at concurrency 50", "rate", "calls_s"),
            ("CPU per call at concurrency 50 (us)", "rate", "cpu_us"),
            ("peak RSS at concurrency 1000 (MB)", "mem", "peak_mb"),
            ("RSS after warm-up (MB)", "mem", "base_mb"),
            ("KB per in-flight call (c=1000)", "mem", "kb_per_call"),
            ("peak calls in flight", "mem", "in_flight")]
    print(f"\n{repeats} repeats each (median, min-max spread); ratio = agentflow / raw")
    print(f"{'figure':38} {'raw':>9} {'spread':>15} {'agentflow':>10} {'spread':>15} "
          f"{'ratio':>6}")
    med: dict[tuple[str, str], float] = {}
    for label, phase, key in rows:
        (raw, raw_spread), (ours, ours_spread) = (
            summary([r[key] for r in results[(client, phase)]]) for client in ("raw", "agentflow"))
        med[("raw", key + phase)], med[("agentflow", key + phase)] = raw, ours
        print(f"{label:38} {raw:>9.4g} {raw_spread:>15} {ours:>10.4g} {ours_spread:>15} "
              f"{ours / raw:>6.2f}")
    util = {c: statistics.median(v) for c, v in server_util.items()}
    print(f"fake server CPU utilisation during the c=50 runs (incl. warm-up): "
          f"raw {util['raw']:.0%}, agentflow {util['agentflow']:.0%}")
    cpu_ratio = med[("agentflow", "cpu_uscpu")] / med[("raw", "cpu_uscpu")]
    kb = med[("agentflow", "kb_per_callmem")]
    print(f"target CPU per call <= 2x raw: {cpu_ratio:.2f}x -> "
          f"{'met' if cpu_ratio <= 2 else 'MISSED'}")
    print(f"target <= 30 KB per in-flight call: {kb:.1f} KB -> {'met' if kb <= 30 else 'MISSED'}")


if __name__ == "__main__":
    main()
