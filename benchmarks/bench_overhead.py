"""Framework CPU overhead per call, on ScriptedModel (no I/O).

Prints CPU microseconds per call (median of several rounds, with the
spread) for:

* a one-turn text call;
* a call with one tool round;
* a one-turn structured call (tool strategy);
* a structured call with one forced retry (prose first, then the output).

Targets (issues 2 and 3): <= 100 us per one-turn text call, <= 150 us per
one-turn structured call, on a 2-core machine.

    python benchmarks/bench_overhead.py [--calls 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from agentflow import AgentState, ReActAgent
from agentflow.testing import Call, Reply, ScriptedModel


class Contact(BaseModel):
    name: str
    email: str


def lookup(q: str) -> str:
    """Look a person up."""
    return "ann@x.io"


OUTPUT = Reply(tool_calls=[Call("generate_response", {"name": "Ann", "email": "ann@x.io"})])


def scenario(replies: list[Reply | str], with_output: bool) -> Callable[[int], Awaitable[None]]:
    async def run(n: int) -> None:
        model = ScriptedModel(replies * n)
        agent = ReActAgent("bench", model, tools=[lookup])
        output = Contact if with_output else None
        for _ in range(n):
            await agent.call("hello", output, state=AgentState())

    return run


SCENARIOS = {
    "one-turn text call": scenario(["hello there"], False),
    "call with one tool round": scenario(
        [Reply(tool_calls=[Call("lookup", {"q": "ann"})]), "done"], False
    ),
    "one-turn structured call (tool strategy)": scenario([OUTPUT], True),
    "structured call with one forced retry": scenario(["Ann is ann@x.io", OUTPUT], True),
}


def measure(run: Callable[[int], Awaitable[None]], calls: int, rounds: int) -> list[float]:
    asyncio.run(run(50))  # warm-up: imports, caches
    per_call = []
    for _ in range(rounds):
        start = time.process_time()
        asyncio.run(run(calls))
        per_call.append((time.process_time() - start) / calls * 1e6)
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"CPU per call, {args.calls} sequential calls x {args.rounds} rounds (median, min-max)")
    print(f"{'scenario':45} {'us/call':>10} {'spread':>16}")
    for name, run in SCENARIOS.items():
        values = measure(run, args.calls, args.rounds)
        spread = f"{min(values):.0f}-{max(values):.0f}"
        print(f"{name:45} {statistics.median(values):10.1f} {spread:>16}")


if __name__ == "__main__":
    main()
