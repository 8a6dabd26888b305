"""agentflow's targets from issues 7 and 19, judged on the run's records, and the
report's fixed notes (stdlib only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["CHAOS_NOTES", "METHOD_NOTES", "table", "verdicts"]

Records = Sequence[dict[str, Any]]
PEERS = ("pydantic-ai", "langchain", "instructor", "openai-agents")


def verdicts(records: Records) -> list[tuple[str, str, bool | None, str]]:
    """(target, agentflow's figure, met?, by how much / against what) per target."""
    from benchmarks.compare.frameworks import FRAMEWORKS
    from benchmarks.compare.report import by_framework, chaos_rows, diffs, med, ratios

    out: list[tuple[str, str, bool | None, str]] = []

    def against_floor(target: str, scenario: str, key: str, fw: str, goal: float,
                      unit: str, higher: bool = False) -> None:
        values = by_framework(records, scenario, key)
        r = med(ratios(values).get(fw, []))
        if r is None:
            return
        floor = FRAMEWORKS[fw].against
        af, raw = med(values[fw].values()) or 0.0, med(values.get(floor, {}).values()) or 0.0
        met = r >= goal if higher else r <= goal
        out.append((target, f"{r:.2f}× ({af:,.1f} {unit} vs {raw:,.1f} {unit})", met,
                    f"{'within' if met else 'short'} by {abs(r - goal):.2f}×"))

    against_floor("`call()` CPU per call ≤ 1.5× the raw floor", "cpu", "cpu_us_per_call",
                  "agentflow", 1.5, "µs")
    against_floor("`stream()` CPU per call ≤ 2× the raw streaming floor", "cpu",
                  "cpu_us_per_call", "agentflow-stream", 2.0, "µs")
    against_floor("calls/s at C=50 ≥ 0.5× the raw floor", "throughput", "calls_per_s",
                  "agentflow", 0.5, "calls/s", higher=True)
    against_floor("KB per in-flight call ≤ 1.3× the raw floor", "memory", "kb_per_call",
                  "agentflow", 1.3, "KB")
    tp = by_framework(records, "throughput", "calls_per_s")
    peers = {fw: med(v.values()) or 0.0 for fw, v in tp.items() if fw in PEERS}
    if "agentflow" in tp and peers:
        af = med(tp["agentflow"].values()) or 0.0
        best = max(peers, key=lambda fw: peers[fw])
        margin = af / peers[best] - 1 if peers[best] else 0.0
        out.append(("Above every peer in calls/s", f"{af:,.0f} calls/s", af > peers[best],
                    f"{100 * margin:+.0f}% vs the best peer ({best}, {peers[best]:,.0f})"))
    mem = by_framework(records, "memory", "kb_per_call")
    if "agentflow" in mem:
        kb = med(mem["agentflow"].values()) or 0.0
        out.append(("≤ 30 KB per in-flight call", f"{kb:.1f} KB", kb <= 30,
                    f"{'under' if kb <= 30 else 'over'} by {abs(kb - 30):.1f} KB"))
    first_partial = by_framework(records, "stream", "first_partial_ms")
    d = med(diffs(first_partial).get("agentflow", []))
    if d is not None:
        af = med(first_partial["agentflow"].values()) or 0.0
        raw = med(first_partial.get("raw", {}).values()) or 0.0
        out.append(("First partial object within 1 ms of the floor",
                    f"{d:+.2f} ms vs the raw floor (median of per-run differences; medians "
                    f"{af:.1f} vs {raw:.1f} ms)", d <= 1.0,
                    f"{'within' if d <= 1 else 'over'} by {abs(d - 1):.2f} ms"))
    chaos = chaos_rows(records)
    silent = 0.0
    for profile, goal in (("openai", 0.999), ("glm", 0.99), ("minimax", None)):
        row = chaos.get(profile, {}).get("agentflow")
        if row is None:
            continue
        silent += row["silent"] * row["n"]
        if goal is None:
            continue
        name = {"openai": "OpenAI-like", "glm": "GLM-like"}[profile]
        out.append((f"≥ {100 * goal:g}% success on the {name} chaos profile",
                    f"{100 * row['valid']:.1f}%", row["valid"] >= goal,
                    f"{100 * (row['valid'] - goal):+.1f} points"))
    if chaos:
        out.append(("0 silent failures (every chaos profile)", f"{silent:.0f}", silent == 0,
                    "" if silent == 0 else f"{silent:.0f} calls returned without valid data"))
    return out


def table(records: Records) -> list[str]:
    """The targets as markdown rows."""
    lines = ["| target | agentflow | met | margin |", "|---|---|:-:|---|"]
    for target, figure, met, margin in verdicts(records):
        mark = "n/a" if met is None else ("met" if met else "**missed**")
        lines.append(f"| {target} | {figure} | {mark} | {margin} |")
    return lines


CHAOS_NOTES = [
    "The chaos model (`tests/fakes/chaos_model.py`) decides per request from a hash of "
    "(seed, task, attempt): the same task on its n-th attempt misbehaves the same way in "
    "every framework. Misbehaviours, by share: prose without JSON 17.9%, JSON in a code "
    "fence 10.7%, JSON wrapped in prose 7.1%, broken JSON 14.3% (trailing comma, single "
    "quotes or truncated, with a normal finish reason), wrong but coercible types 14.3% "
    "(numbers as strings), two output calls at once 7.1%, the call as in-band markup in the "
    "text 7.1%, two calls streamed at one index 3.6%, a wrong draft inside `<think>` before "
    "the answer 7.1%, Python-literal or double-encoded arguments 7.1%, a stream cut before "
    "its finish reason 3.6%. A reminder is a system/user message after the "
    "task that names the output tool (or, without tools, mentions JSON). A forced "
    "`tool_choice` is honoured by the OpenAI-like profile (prose-type misbehaviours become "
    "a call of the tool; its arguments may still be broken); the GLM-like profile answers "
    "400 \"Tool choice must be auto\" to anything but `auto` (GLM's documented behaviour, as "
    "in tests/fakes/glm.py); the MiniMax-like profile accepts and ignores it. "
    "`response_format` json_schema and `strict` are hints, not enforced (no constrained "
    "decoding). Models: `gpt-4o-mini` (OpenAI-like), `glm-4.6` (GLM-like; agentflow uses "
    "its GLM adapter, Pydantic AI its `ZaiModel`, the others their OpenAI client), "
    "`MiniMax-M2` (MiniMax-like; agentflow: the OpenAI adapter with its MiniMax profile).",
    "",
    "Valid object: the call returned a `Contact`; *of which wrong data*: it differs from the "
    "record (e.g. a truncated list repaired into a shorter one). Typed error: the call "
    "raised a library exception (anything but a builtin); untyped: a builtin exception or a "
    "60 s timeout. Silent: the call returned normally without a valid `Contact` (e.g. "
    "LangChain's `structured_response` missing). Requests and tokens are counted by the "
    "server (prompt = request bytes / 4, completion = output characters / 4), including "
    "rejected requests, and divided by the valid objects. Request mode: how the requests "
    "asked for output (`tool`: an output tool; `json_schema`: `response_format`), "
    "*forced* when most requests forced the tool.",
]

METHOD_NOTES = [
    "### Method",
    "",
    "- One chaos server process (`python -m tests.fakes.chaos`, aiohttp, OpenAI wire format "
    "as tests/fakes/openai.py, request checks included) serves every run; it is "
    "reconfigured between runs. Streamed replies carry the output in 20 token-like "
    "fragments; whole replies in one body.",
    "- Every framework makes its idiomatic async structured-output call of the same "
    "`Contact` schema (name, email, age, tags) with default settings: agentflow "
    "`ReActAgent.call(prompt, Contact, state=AgentState())` (native json_schema on "
    "gpt-4o-mini, tool strategy elsewhere; nobody reads its deltas, so it fetches whole "
    "replies); Pydantic AI "
    "`Agent(output_type=Contact).run` (tool output, `tool_choice=required`); LangChain "
    "`create_agent(ChatOpenAI, response_format=Contact).ainvoke` (ProviderStrategy on "
    "gpt-4o-mini, ToolStrategy with `tool_choice=any` elsewhere); Instructor "
    "`from_openai(...).chat.completions.create(response_model=Contact)` (TOOLS mode, a "
    "named `tool_choice`); Agents SDK `Runner.run(Agent(output_type=Contact))` over "
    "`OpenAIChatCompletionsModel` (json_schema). Floors: `AsyncOpenAI` + "
    "`model_validate_json`, and aiohttp + orjson + `model_validate_json`.",
    "- Streaming APIs: agentflow `agent.stream` (`OutputPartial`), Pydantic AI "
    "`run_stream(...).stream_output(debounce_by=None)`, Instructor `create_partial`, the "
    "SDK's `chat.completions.stream` (`content.delta` events' `parsed`), and the raw floor "
    "parsing SSE by hand with `pydantic_core.from_json(allow_partial=...)`.",
    "- Connection pools are sized for the concurrency (agentflow `HttpSettings("
    "connection_limit=...)`, the raw floor's connector; the openai SDK allows 1,000 by "
    "default). Tracing and telemetry are off (`OPENAI_AGENTS_DISABLE_TRACING`, "
    "`LANGSMITH_TRACING=false`, ...), and the measurements run in a network namespace with "
    "only loopback, so nothing can phone home.",
    "- Instructor 1.17 pins jiter < 0.15, which excludes the openai releases Pydantic AI "
    "2.68 needs, so it runs in its own environment with openai 3.3.0 "
    "(`requirements-instructor.txt`); the other peers share `requirements.txt`.",
    "- Each (framework, scenario, repeat) is a fresh process (imports and connection set-up "
    "excluded by a warm-up); repeats interleave the frameworks in a rotating order.",
]
