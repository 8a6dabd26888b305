"""Side by side: agentflow, Pydantic AI, LangChain v1 agents, Instructor and the
OpenAI Agents SDK, plus two floors (the openai SDK, raw aiohttp), against one
fake OpenAI-compatible server (tests/fakes/chaos.py) on 127.0.0.1.

    python3 benchmarks/compare/run.py            # set up on first use, run everything,
                                                 # write benchmarks/RESULTS.md + results.jsonl
    python3 benchmarks/compare/run.py --setup    # only (re)create the virtual environments
    python3 benchmarks/compare/run.py --quick    # smoke run (small N, 1 repeat), nothing written
    python3 benchmarks/compare/run.py --report-only   # re-render RESULTS.md from results.jsonl

Set-up (needs PyPI) creates ``benchmarks/compare/.venv`` and ``.venv-instructor``.
The measurements then run in a fresh network namespace with only loopback
(``unshare --net``, when root), the server pinned to core 0 and the workers to
core 1. Every (framework, scenario, repeat) runs in a fresh worker process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make ``benchmarks.compare`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.compare import _machine, _venv, report
from benchmarks.compare._server import ChaosServer
from benchmarks.compare.offline import apply_offline_env

ALL = ("agentflow", "pydantic-ai", "langchain", "instructor", "openai-agents", "openai-sdk", "raw",
       "agentflow-stream", "raw-stream")
DIAGNOSTIC_SCENARIOS = {"agentflow-nostream": ("cpu", "throughput", "memory"),
                        "agentflow-stream": ("cpu",), "raw-stream": ("cpu",)}
"""The scenarios of the variants that run only some (the rest run every one)."""
VENV_OF = {"instructor": "instructor"}
STREAMING = ("agentflow", "pydantic-ai", "instructor", "openai-sdk", "raw")
RESULTS_JSONL = _venv.HERE / "results.jsonl"
PROFILES_DIR = _venv.HERE / "profiles"
LOGS_DIR = _venv.HERE / ".logs"


@dataclass
class Plan:
    """Sizes of every scenario (the issue's, unless ``--quick``)."""

    repeats: int = 3
    cpu_n: int = 200
    tp_n: int = 2000
    tp_c: int = 50
    mem_n: int = 2000
    mem_c: int = 1000
    mem_latency: float = 0.2
    stream_n: int = 20
    stream_chunks: int = 20
    stream_delay: float = 0.01
    chaos_n: int = 1000
    chaos_c: int = 50
    chaos_profiles: tuple[str, ...] = ("openai", "glm", "minimax")
    seed: int = 7
    misbehave: float = 0.30
    misbehave_reminded: float = 0.10
    frameworks: tuple[str, ...] = ALL
    scenarios: tuple[str, ...] = ("cpu", "throughput", "memory", "stream", "chaos", "profile")
    weights: dict[str, float] = field(default_factory=dict)


QUICK = Plan(repeats=1, cpu_n=30, tp_n=300, tp_c=20, mem_n=300, mem_c=200, stream_n=3,
             chaos_n=100)


class Bench:
    """Runs the plan: one server, many workers; collects the records."""

    def __init__(self, plan: Plan, server: ChaosServer, pinned: bool) -> None:
        self.plan, self.server, self.pinned = plan, server, pinned
        self.records: list[dict[str, Any]] = []
        self.env = apply_offline_env(dict(os.environ))
        LOGS_DIR.mkdir(exist_ok=True)

    def settings(self, scenario: str, profile: str = "openai") -> dict[str, Any]:
        """The server settings of a scenario."""
        p = self.plan
        base: dict[str, Any] = {"profile": profile, "latency": 0.0, "chunk_delay": 0.0,
                                "chunks": p.stream_chunks, "misbehave": 0.0,
                                "misbehave_reminded": 0.0, "seed": p.seed}
        if scenario == "memory":
            base["latency"] = p.mem_latency
        elif scenario == "stream":
            base["chunk_delay"] = p.stream_delay
        elif scenario == "chaos":
            base.update(misbehave=p.misbehave, misbehave_reminded=p.misbehave_reminded)
            if p.weights:
                base["weights"] = p.weights
        return base

    def sizes(self, scenario: str) -> tuple[int, int]:
        """(N, C) of a scenario."""
        p = self.plan
        return {"cpu": (p.cpu_n, 1), "throughput": (p.tp_n, p.tp_c), "memory": (p.mem_n, p.mem_c),
                "stream": (p.stream_n, 1), "chaos": (p.chaos_n, p.chaos_c)}[scenario]

    def run_one(self, framework: str, scenario: str, *, repeat: int = 0,
                profile: str = "openai", trace: tuple[str, Path] | None = None,
                ) -> dict[str, Any]:
        """One worker process; its record (also appended to ``records``)."""
        n, c = self.sizes(scenario)
        settings = self.server.configure(**self.settings(scenario, profile))
        self.server.stats(reset=True)
        cpu0 = self.server.cpu_seconds()
        python = _python(VENV_OF.get(framework, "main"))
        cmd = [str(python), "-m", "benchmarks.compare.worker", "--framework", framework,
               "--scenario", scenario, "--url", self.server.url, "--profile", profile,
               "--n", str(n), "--concurrency", str(c)]
        if trace is not None:
            cmd += [f"--{trace[0]}", str(trace[1])]
        log = LOGS_DIR / f"{scenario}-{profile}-{framework}-{repeat}.err"
        t0 = time.perf_counter()
        with log.open("w") as err:
            proc = subprocess.run(cmd, cwd=_venv.REPO, env=self.env, stdout=subprocess.PIPE,
                                  stderr=err, text=True, timeout=900, check=False)
        wall = time.perf_counter() - t0
        server = self.server.stats(reset=True)
        server["cpu_s"] = round(self.server.cpu_seconds() - cpu0, 3)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode == 0 and lines:
            record: dict[str, Any] = json.loads(lines[-1])
        else:
            tail = log.read_text()[-1500:]
            record = {"framework": framework, "scenario": scenario, "profile": profile,
                      "error": f"worker exit {proc.returncode}: {tail}"}
        record.update(kind="result", repeat=repeat, server=server, process_wall_s=round(wall, 2),
                      server_settings=settings, profiled=trace is not None)
        self.records.append(record)
        self._print(record)
        return record

    @staticmethod
    def _print(r: dict[str, Any]) -> None:
        head = f"  {r['scenario']:<10} {r['profile']:<7} {r['framework']:<14} r{r['repeat']}"
        if "error" in r:
            print(f"{head} ERROR {r['error'][:300]}", flush=True)
            return
        keys = {"cpu": "cpu_us_per_call", "throughput": "calls_per_s", "memory": "kb_per_call",
                "stream": "first_partial_ms", "chaos": "outcomes"}
        value = r.get(keys[r["scenario"]])
        shown = f"{value:.1f}" if isinstance(value, float) else value
        extra = f" failures={r['failures']}" if r.get("failures") else ""
        print(f"{head} {keys[r['scenario']]}={shown} ({r['process_wall_s']}s){extra}", flush=True)

    def run(self) -> None:
        """Every scenario of the plan, performance first (repeats interleaved)."""
        p = self.plan
        for repeat in range(p.repeats):
            order = list(p.frameworks[repeat % len(p.frameworks):] +
                         p.frameworks[:repeat % len(p.frameworks)])
            for scenario in ("cpu", "throughput", "memory", "stream"):
                if scenario not in p.scenarios:
                    continue
                print(f"[repeat {repeat + 1}/{p.repeats}] {scenario}", flush=True)
                for framework in order:
                    if scenario not in DIAGNOSTIC_SCENARIOS.get(framework, (scenario,)):
                        continue
                    if scenario != "stream" or framework in STREAMING:
                        self.run_one(framework, scenario, repeat=repeat)
        if "chaos" in p.scenarios:
            for profile in p.chaos_profiles:
                print(f"[chaos] profile {profile}", flush=True)
                for framework in p.frameworks:
                    if framework not in DIAGNOSTIC_SCENARIOS:
                        self.run_one(framework, "chaos", profile=profile)
        if "profile" in p.scenarios:
            PROFILES_DIR.mkdir(exist_ok=True)
            print("[profile] pyinstrument (cpu, throughput), tracemalloc (memory)", flush=True)
            for framework in ("agentflow", "raw"):
                for scenario in ("cpu", "throughput", "memory"):
                    if framework in p.frameworks:
                        tool = "tracemalloc" if scenario == "memory" else "pyinstrument"
                        out = PROFILES_DIR / f"{framework}-{scenario}.txt"
                        self.run_one(framework, scenario, repeat=-1, trace=(tool, out))


def _python(venv: str) -> Path:
    """The interpreter of ``venv``, or ``--python``'s (``BENCH_PYTHON``, kept
    across the network-namespace re-exec)."""
    given = os.environ.get("BENCH_PYTHON")
    return Path(given) if given else _venv.python_of(venv)


def _git_state() -> str:
    """``<short HEAD>`` plus ``+ uncommitted changes`` when agentflow/ differ."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=_venv.REPO, capture_output=True,
                                  text=True, timeout=10, check=False).stdout.strip()
        except OSError:
            return ""

    head = git("rev-parse", "--short", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--", "agentflow")
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def _reexec_in_netns(argv: list[str]) -> None:
    """Replace this process with itself inside a new network namespace that
    has only loopback (no route anywhere else)."""
    script = ('ip link set lo up && exec "$0" "$@"')
    os.execvp("unshare", ["unshare", "--net", "--", "sh", "-c", script, sys.executable,
                          str(Path(__file__).resolve()), *argv, "--in-netns"])


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/compare/run.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--setup", action="store_true", help="only set up the environments")
    p.add_argument("--rebuild", action="store_true", help="recreate the environments")
    p.add_argument("--quick", action="store_true", help="smoke run; writes nothing")
    p.add_argument("--report-only", action="store_true",
                   help="re-render RESULTS.md from the existing results.jsonl")
    p.add_argument("--write", action="store_true", help="write results even with --quick")
    p.add_argument("--frameworks", help=f"comma-separated subset of {','.join(ALL)}")
    p.add_argument("--scenarios", help="comma-separated subset of "
                                       "cpu,throughput,memory,stream,chaos,profile")
    p.add_argument("--repeats", type=int)
    p.add_argument("--chaos-n", type=int)
    p.add_argument("--chaos-profiles", help="comma-separated chaos server profiles "
                   "(default openai,glm,minimax; issue 32's faults: "
                   "schema,no_usage,ctx,reasoning,router,proxy)")
    p.add_argument("--no-netns", action="store_true", help="do not isolate the network")
    p.add_argument("--python", help="run the server and every worker with this interpreter "
                   "instead of the benchmark venvs (no set-up; agentflow-only runs)")
    p.add_argument("--no-write", action="store_true",
                   help="print the report only; RESULTS.md and results.jsonl stay as they are")
    p.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    ns = _parse(args_list)
    if ns.report_only:
        records = [json.loads(line) for line in RESULTS_JSONL.read_text().splitlines() if line]
        markdown = report.render(records)
        report.write_section(markdown)
        print(markdown)
        return 0
    if ns.python:
        os.environ["BENCH_PYTHON"] = str(Path(ns.python).absolute())
    if not ns.in_netns and not ns.python:
        for name in _venv.VENVS:
            _venv.ensure(name, force=ns.rebuild)
        if ns.setup:
            return 0
        if not ns.no_netns and os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
            _reexec_in_netns(args_list)
    plan = QUICK if ns.quick else Plan()
    if ns.frameworks:
        plan = replace(plan, frameworks=tuple(f for f in ns.frameworks.split(",") if f))
    if ns.scenarios:
        plan = replace(plan, scenarios=tuple(s for s in ns.scenarios.split(",") if s))
    if ns.repeats:
        plan = replace(plan, repeats=ns.repeats)
    if ns.chaos_n:
        plan = replace(plan, chaos_n=ns.chaos_n)
    if ns.chaos_profiles:
        plan = replace(plan, chaos_profiles=tuple(p for p in ns.chaos_profiles.split(",") if p))
    unknown = set(plan.frameworks) - set(ALL)
    if unknown:
        raise SystemExit(f"unknown frameworks: {sorted(unknown)}")

    pinned = (os.cpu_count() or 1) >= 2
    if pinned:
        os.sched_setaffinity(0, {1})  # this process and every worker: core 1
    server = ChaosServer(_python("main"), _venv.REPO, 0 if pinned else None)
    command = "python3 benchmarks/compare/run.py " + " ".join(
        a for a in args_list if a != "--in-netns")
    header = {"kind": "run", "command": command.strip(), "plan": asdict(plan),
              "machine": _machine.machine_facts(), "pinned": pinned,
              "network_namespace": ns.in_netns, "git": _git_state(),
              "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    busy0, t0 = _machine.busy_seconds(), time.perf_counter()
    server.start()
    header["other_processes_at_start"] = _machine.other_processes({os.getpid(), server.proc.pid})  # type: ignore[union-attr]
    print(f"chaos server {server.url} (pid {server.proc.pid}); plan: {plan}", flush=True)  # type: ignore[union-attr]
    bench = Bench(plan, server, pinned)
    try:
        bench.run()
        server_cpu = server.cpu_seconds()
    finally:
        server.stop()
    wall = time.perf_counter() - t0
    ours = _machine.children_cpu_seconds() + server_cpu
    busy = _machine.busy_seconds() - busy0
    footer = {"kind": "run_end", "wall_s": round(wall, 1), "loadavg": os.getloadavg(),
              "machine_busy_cpu_s": round(busy, 1), "benchmark_cpu_s": round(ours, 1),
              "others_cpu_s": round(max(0.0, busy - ours), 1)}
    records = [header, *bench.records, footer]
    print(f"done in {wall / 60:.1f} min; others used {footer['others_cpu_s']} CPU s "
          f"of {footer['machine_busy_cpu_s']} busy", flush=True)
    markdown = report.render(records)
    print(markdown)
    if (not ns.quick or ns.write) and not ns.no_write:
        with RESULTS_JSONL.open("w") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
        report.write_section(markdown)
        print(f"wrote {RESULTS_JSONL.relative_to(_venv.REPO)} and benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
