"""The markdown section of benchmarks/RESULTS.md, from the run's records (stdlib only).

``render(records)`` builds the section; ``write_section(markdown)`` puts it
between ``<!-- compare:start -->`` and ``<!-- compare:end -->`` and touches
nothing else in the file (it creates the file or the markers if missing).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.compare import _targets
from benchmarks.compare.frameworks import FRAMEWORKS

__all__ = ["END", "RESULTS_MD", "START", "render", "write_section"]

RESULTS_MD = Path(__file__).resolve().parents[1] / "RESULTS.md"
START, END = "<!-- compare:start -->", "<!-- compare:end -->"
PROFILE_NAMES = {"openai": "OpenAI-like", "glm": "GLM-like", "minimax": "MiniMax-like"}

Records = Sequence[dict[str, Any]]


def _results(records: Records, scenario: str, *, profiled: bool = False) -> list[dict[str, Any]]:
    return [r for r in records if r.get("kind") == "result" and r["scenario"] == scenario
            and "error" not in r and bool(r.get("profiled")) == profiled]


def by_framework(records: Records, scenario: str, key: str) -> dict[str, dict[int, float]]:
    """``{framework: {repeat: value}}`` of one figure."""
    out: dict[str, dict[int, float]] = defaultdict(dict)
    for r in _results(records, scenario):
        if r.get(key) is not None:
            out[r["framework"]][r["repeat"]] = float(r[key])
    return out


def ratios(values: dict[str, dict[int, float]], floor: str | None = None
           ) -> dict[str, list[float]]:
    """Per framework, its value divided by the floor's from the same repeat
    (``floor``, else the framework's own: ``Framework.against``)."""
    out: dict[str, list[float]] = {}
    for fw, runs in values.items():
        own = floor or (FRAMEWORKS[fw].against if fw in FRAMEWORKS else "raw")
        base = values.get(own, {})
        out[fw] = [v / base[r] for r, v in runs.items() if base.get(r)]
    return out


def diffs(values: dict[str, dict[int, float]], floor: str = "raw") -> dict[str, list[float]]:
    """Per framework, its value minus the floor's from the same repeat."""
    base = values.get(floor, {})
    return {fw: [v - base[r] for r, v in runs.items() if r in base]
            for fw, runs in values.items()}


def med(values: Iterable[float]) -> float | None:
    """Median, or ``None`` without values."""
    items = list(values)
    return statistics.median(items) if items else None


def _num(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _cell(runs: dict[int, float] | None, digits: int = 0) -> str:
    if not runs:
        return "n/a"
    vals = list(runs.values())
    spread = f" ({_num(min(vals), digits)}–{_num(max(vals), digits)})" if len(vals) > 1 else ""
    return f"{_num(med(vals), digits)}{spread}"


def _label(fw: str) -> str:
    return FRAMEWORKS[fw].label if fw in FRAMEWORKS else fw


def _order(frameworks: Iterable[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(FRAMEWORKS)}
    return sorted(set(frameworks), key=lambda f: rank.get(f, 99))


# ----------------------------------------------------------------------------- tables


def performance_table(records: Records) -> list[str]:
    """CPU per call, calls/s, memory per in-flight call, with ratios to the raw floor."""
    cpu = by_framework(records, "cpu", "cpu_us_per_call")
    tp = by_framework(records, "throughput", "calls_per_s")
    mem = by_framework(records, "memory", "kb_per_call")
    cpu_r, tp_r, mem_r = ratios(cpu), ratios(tp), ratios(mem)
    lines = ["| framework | CPU µs per call (C=1) | × floor | calls/s (C=50) | × floor "
             "| KB per in-flight call (C=1000) | × floor |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    for fw in _order([*cpu, *tp, *mem]):
        lines.append(
            f"| {_label(fw)} | {_cell(cpu.get(fw))} | {_num(med(cpu_r.get(fw, [])), 2)} "
            f"| {_cell(tp.get(fw))} | {_num(med(tp_r.get(fw, [])), 2)} "
            f"| {_cell(mem.get(fw), 1)} | {_num(med(mem_r.get(fw, [])), 2)} |")
    return lines


def streaming_table(records: Records) -> list[str]:
    """Time to the first event, the first partial object and the end, per framework."""
    first = by_framework(records, "stream", "first_event_ms")
    partial = by_framework(records, "stream", "first_partial_ms")
    total = by_framework(records, "stream", "total_ms")
    counts = by_framework(records, "stream", "partials_per_call")
    delta = diffs(partial)
    lines = ["| framework | first event ms | first partial object ms | Δ vs raw ms "
             "| total ms | partials per call |",
             "|---|--:|--:|--:|--:|--:|"]
    for fw in _order([*first, *partial]):
        lines.append(
            f"| {_label(fw)} | {_cell(first.get(fw), 1)} | {_cell(partial.get(fw), 1)} "
            f"| {_num(med(delta.get(fw, [])), 1)} | {_cell(total.get(fw), 1)} "
            f"| {_num(med(counts.get(fw, {}).values()))} |")
    return lines


def chaos_rows(records: Records) -> dict[str, dict[str, dict[str, Any]]]:
    """``{profile: {framework: figures}}`` of the chaos runs."""
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in _results(records, "chaos"):
        n = r["n"] or 1
        o, s = r["outcomes"], r["server"]
        valid = o.get("valid", 0)
        tokens = s.get("prompt_tokens", 0) + s.get("completion_tokens", 0)
        modes = sorted((k[5:], v) for k, v in s.items() if k.startswith("mode."))
        mode = "+".join(m for m, _ in sorted(modes, key=lambda mv: -mv[1])[:2])
        forced = s.get("forced", 0) / max(1, s.get("requests", 1))
        out[r["profile"]][r["framework"]] = {
            "n": n, "valid": valid / n, "wrong": o.get("valid_but_wrong", 0) / n,
            "error": o.get("error", 0) / n, "untyped": o.get("untyped_error", 0) / n,
            "silent": (o.get("silent", 0) + o.get("usage_claims_zero", 0)) / n,
            "usage_unreported": o.get("usage_unreported", 0),
            "req_per_success": s.get("requests", 0) / valid if valid else None,
            "tokens_per_success": tokens / valid if valid else None,
            "errors": r.get("errors", {}), "mode": mode + (" forced" if forced > 0.5 else ""),
            "rejected": s.get("rejected", 0),
        }
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def chaos_tables(records: Records) -> list[str]:
    """One table per vendor profile."""
    lines: list[str] = []
    for profile, rows in chaos_rows(records).items():
        n = max(v["n"] for v in rows.values())
        lines += ["", f"**{PROFILE_NAMES.get(profile, profile)} profile** ({n} extractions per "
                  "framework)", "",
                  "| framework | request mode | valid object | of which wrong data | typed error "
                  "| untyped error | silent (no/invalid data) | requests per success "
                  "| tokens per success | most frequent error |",
                  "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
        for fw in _order(rows):
            v = rows[fw]
            top = max(v["errors"].items(), key=lambda kv: kv[1], default=None)
            err = f"`{top[0].rsplit('.', 1)[-1]}` ×{top[1]}" if top else ""
            lines.append(
                f"| {_label(fw)} | {v['mode']} | {_pct(v['valid'])} | {_pct(v['wrong'])} "
                f"| {_pct(v['error'])} | {_pct(v['untyped'])} | {_pct(v['silent'])} "
                f"| {_num(v['req_per_success'], 2)} | {_num(v['tokens_per_success'])} | {err} |")
    return lines


def profile_section(records: Records) -> list[str]:
    """Where agentflow's time goes next to the raw floor's (pyinstrument)."""
    runs = {(r["framework"], r["scenario"]): r for r in records
            if r.get("kind") == "result" and r.get("profiled") and r.get("profile_summary")}
    if not runs:
        return []
    lines = ["", "### Where the time goes (pyinstrument, wall-clock samples of the event-loop "
             "thread; shares of non-idle time)", ""]
    for scenario in ("cpu", "throughput"):
        af, raw = runs.get(("agentflow", scenario)), runs.get(("raw", scenario))
        if af is None:
            continue
        packages = _order_packages(af, raw)
        lines += [f"**{scenario}** scenario (`benchmarks/compare/profiles/agentflow-"
                  f"{scenario}.txt`, `raw-{scenario}.txt`):", "",
                  "| package | agentflow | raw floor |", "|---|--:|--:|"]
        for p in packages:
            a = af["profile_summary"]["packages"].get(p)
            b = raw["profile_summary"]["packages"].get(p) if raw else None
            lines.append(f"| {p} | {_pct(a) if a else '–'} | {_pct(b) if b else '–'} |")
        busy_af = af["profile_summary"]["busy_s"] / max(1, af["n"]) * 1e6
        busy_raw = raw["profile_summary"]["busy_s"] / max(1, raw["n"]) * 1e6 if raw else None
        lines += ["", f"Busy (non-idle) time per call under the profiler, which inflates "
                  f"absolute times: agentflow {busy_af:,.0f} µs, raw floor {_num(busy_raw)} µs. "
                  "Top agentflow functions by self time:", ""]
        for name, share in af["profile_summary"]["functions"][:10]:
            lines.append(f"- `{name}` {_pct(share)}")
        lines.append("")
    return lines


def memory_section(records: Records) -> list[str]:
    """Where agentflow's memory per in-flight call goes (tracemalloc at peak)."""
    runs = {r["framework"]: r["memory_summary"] for r in records
            if r.get("kind") == "result" and r.get("profiled") and r.get("memory_summary")}
    af, raw = runs.get("agentflow"), runs.get("raw")
    if af is None:
        return []
    lines = ["", "### Where the memory goes (tracemalloc growth while every call is in flight, "
             "KB per in-flight call; `benchmarks/compare/profiles/agentflow-memory.txt`)", "",
             "| package | agentflow | raw floor |", "|---|--:|--:|"]
    for p, kb in af["packages"].items():
        other = (raw or {}).get("packages", {}).get(p)
        lines.append(f"| {p} | {kb:.2f} | {_num(other, 2) if other is not None else '–'} |")
    lines += [f"| total (Python allocations only) | {af['kb_per_call']:.2f} "
              f"| {_num((raw or {}).get('kb_per_call'), 2)} |", "",
              "Largest agentflow allocation sites:", ""]
    lines += [f"- `{where}` {kb:.2f} KB" for where, kb in af["lines"][:10]]
    return [*lines, ""]


def _order_packages(af: dict[str, Any], raw: dict[str, Any] | None) -> list[str]:
    shares: dict[str, float] = dict(af["profile_summary"]["packages"])
    for p, v in (raw["profile_summary"]["packages"] if raw else {}).items():
        shares.setdefault(p, v / 10)
    return sorted(shares, key=lambda p: -shares[p])


# ----------------------------------------------------------------------------- the section


def render(records: Records) -> str:
    """The whole markdown section (without the markers)."""
    head = next((r for r in records if r.get("kind") == "run"), {})
    tail = next((r for r in records if r.get("kind") == "run_end"), {})
    plan, machine = head.get("plan", {}), head.get("machine", {})
    failed = [r for r in records if r.get("kind") == "result" and "error" in r]
    lines = [
        f"Command: `{head.get('command', '?')}` — started {head.get('started', '?')}, "
        f"{tail.get('wall_s', 0) / 60:.1f} min wall. Raw records: "
        "`benchmarks/compare/results.jsonl`.", "",
        f"Machine: {machine.get('cpus')} cores ({machine.get('cpu_model')}), "
        f"{machine.get('mem_gib')} GiB, Linux {machine.get('kernel')}, Python "
        f"{machine.get('python')}; agentflow tree {head.get('git', '?')}. Server pinned to "
        f"core 0, workers to core 1: {head.get('pinned')}; loopback-only network namespace: "
        f"{head.get('network_namespace')}. Other processes were running: they used "
        f"{tail.get('others_cpu_s', '?')} CPU-seconds of the {tail.get('machine_busy_cpu_s', '?')} "
        f"the machine was busy during the run (load average at the end "
        f"{', '.join(f'{x:.1f}' for x in tail.get('loadavg', ()))}), so absolute figures are "
        "noisy; ratios pair each framework with the raw floor of the same repeat.", "",
        "### Targets for agentflow", "", *_targets.table(records), "",
        f"### Performance (OpenAI-like profile, compliant model; median of {plan.get('repeats')} "
        "fresh-process runs, (min–max))", "", *performance_table(records), "",
        f"CPU: client process CPU per call over {plan.get('cpu_n')} sequential calls. calls/s: "
        f"{plan.get('tp_n')} calls on {plan.get('tp_c')} concurrent workers, 0 ms server "
        f"latency. Memory: peak RSS growth over the pre-run RSS while {plan.get('mem_c')} calls "
        f"are in flight ({plan.get('mem_n')} calls, {plan.get('mem_latency', 0) * 1000:.0f} ms "
        "server latency), divided by the calls in flight. × floor: the ratio to the raw floor "
        "of the same repeat; `call()` fetches whole replies (nobody reads its deltas), so its "
        "floor is the raw client's whole-reply call. The `stream()` row drains "
        "`agent.stream()` (SSE in 20 fragments, every event and partial object read) and is "
        "taken against the streamed raw floor (aiohttp, SSE lines split by hand, orjson per "
        "chunk, one `model_validate_json` at the end); it is not a peer.", "",
        f"### Streaming (output in {plan.get('stream_chunks')} fragments "
        f"{plan.get('stream_delay', 0) * 1000:.0f} ms apart; median of {plan.get('stream_n')} "
        "calls per run, then of the runs)", "", *streaming_table(records), "",
        "First event: the first thing the framework's streaming API surfaces after the "
        "request is sent (agentflow's `CallStarted`, emitted before the request, is not "
        "counted). First partial object: the first partial with at least one field. LangChain "
        "agents and the Agents SDK do not stream partial structured objects and are left out.",
        "", f"### Misbehaving model (seed {plan.get('seed')}; misbehaves on "
        f"{100 * plan.get('misbehave', 0):.0f}% of requests, "
        f"{100 * plan.get('misbehave_reminded', 0):.0f}% when the request carries a reminder)",
        *chaos_tables(records), "", *_targets.CHAOS_NOTES, *profile_section(records),
        *memory_section(records),
        *_targets.METHOD_NOTES,
    ]
    if failed:
        lines += ["", f"**{len(failed)} worker runs failed** (see results.jsonl): " + ", ".join(
            f"{r['framework']}/{r['scenario']}/{r['profile']}" for r in failed)]
    return "\n".join(lines).rstrip() + "\n"


def write_section(markdown: str, path: Path = RESULTS_MD) -> None:
    """Replace what lies between the markers in ``path`` with ``markdown``;
    everything outside the markers is kept byte for byte."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    if START not in text or END not in text or text.index(END) < text.index(START):
        text = text.rstrip("\n") + (
            "\n\n## Side by side with other frameworks (`benchmarks/compare/`)\n\n"
            f"{START}\n{END}\n")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    path.write_text(f"{before}{START}\n{markdown}{END}{after}")
