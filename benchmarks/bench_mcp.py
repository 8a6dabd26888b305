"""MCP tool calls: their overhead over a plain Python tool, where the time
goes, and sessions opened and closed without a leak.

Against the real test server (``tests/mcp_server.py``, the SDK's low-level
``Server``), started by the benchmark on 127.0.0.1. Prints, per call of the
``add`` tool through the agent's tool path (``Tool.run``: argument
validation, the call, the result as text), wall-clock microseconds (median
of the rounds, with the spread):

* the floor: a plain async Python tool doing the same sum;
* MCP over stdio and over streamable HTTP, sequential calls;
* the same with 100 calls in flight over one session (wall time per call);

then where one call's time goes: agentflow's own layer (argument validation
against the tool's JSON Schema, reading the result), JSON-RPC serialisation
(the request and the response, each encoded and parsed once, as both ends
do), the SDK's client and server dispatch (an in-process ``mcp.Client`` on the
server object: no serialisation, no pipe or socket), and the rest: the
transport (pipe or HTTP, the server's event loop, the two processes
scheduling);

last, sessions opened and closed (one in three after a call, one in three
cancelled while starting, one in three cancelled mid-call), with the child
processes and open descriptors of this process counted before and after.

    python benchmarks/bench_mcp.py [--calls 300] [--rounds 5] [--sessions 1000]
                                   [--stdio-sessions 1000] [--concurrency 16]

A stdio session starts a Python process that imports the SDK (about 1 s of
CPU each): the stdio sessions dominate the run time.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentflow.mcp import MCPServer  # noqa: E402
from agentflow.mcp._results import read_result  # noqa: E402
from agentflow.messages import ToolUseBlock  # noqa: E402
from agentflow.tools import Tool  # noqa: E402
from tests.mcp_servers import (  # noqa: E402
    SERVER,
    child_pids,
    http_server,
    open_and_close,
    open_fds,
)

ARGS = {"a": 20, "b": 22}


async def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


def per_call(seconds: float, n: int) -> float:
    return seconds / n * 1e6


async def timed(run: Callable[[int], Awaitable[None]], calls: int, rounds: int) -> list[float]:
    """Microseconds per call, one figure per round (after one warm-up round)."""
    await run(max(calls // 10, 10))
    figures = []
    for _ in range(rounds):
        start = time.perf_counter()
        await run(calls)
        figures.append(per_call(time.perf_counter() - start, calls))
    return figures


def sequential(tool: Tool) -> Callable[[int], Awaitable[None]]:
    async def run(n: int) -> None:
        for i in range(n):
            result = await tool.run(ToolUseBlock(f"c{i}", tool.name, ARGS))
            assert result.output == '{"sum":42}', result.output

    return run


def in_flight(tool: Tool, width: int = 100) -> Callable[[int], Awaitable[None]]:
    async def run(n: int) -> None:
        for start in range(0, n, width):
            batch = [tool.run(ToolUseBlock(f"c{i}", tool.name, ARGS))
                     for i in range(start, min(n, start + width))]
            for result in await asyncio.gather(*batch):
                assert result.output == '{"sum":42}'

    return run


def line(label: str, figures: list[float], floor: float | None = None) -> str:
    median = statistics.median(figures)
    ratio = f"  {median / floor:7.1f}x floor" if floor else ""
    return (f"  {label:<44} {median:9.1f} us/call  (rounds {min(figures):.1f}-"
            f"{max(figures):.1f}){ratio}")


def loop_micro(fn: Callable[[], Any], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return per_call(time.perf_counter() - start, n)


async def breakdown(server: MCPServer, calls: int) -> dict[str, float]:
    """Microseconds per call of: agentflow's layer, serialisation, SDK dispatch."""
    import mcp_types as types
    from mcp import Client

    from tests.mcp_server import build

    tool = next(t for t in server.tools if t.name == "add")
    raw = (await server.call_tool("add", ARGS)).raw
    ours = loop_micro(lambda: tool.args_model.model_validate(ARGS), calls * 10)
    ours += loop_micro(lambda: read_result(raw), calls * 10)

    request = types.JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call",
                                   params={"name": "add", "arguments": ARGS})
    response = types.JSONRPCResponse(jsonrpc="2.0", id=7,
                                     result=raw.model_dump(by_alias=True, mode="json",
                                                           exclude_none=True))

    def serialise() -> None:
        for message in (request, response):
            text = message.model_dump_json(by_alias=True, exclude_unset=True)
            types.jsonrpc_message_adapter.validate_json(text, by_name=False)

    serialisation = loop_micro(serialise, calls * 10)

    async with Client(build(), mode="legacy") as client:
        async def sdk(n: int) -> None:
            for _ in range(n):
                await client.call_tool("add", ARGS)

        sdk_figures = await timed(sdk, calls, 3)
    return {"agentflow layer (validate arguments, read result)": ours,
            "JSON-RPC serialisation (request + response)": serialisation,
            "SDK dispatch, client and server, in-process": statistics.median(sdk_figures)}


async def sessions(open_session: Callable[[], Any], count: int, concurrency: int,
                   label: str) -> str:
    # the SDK's HTTP client logs a traceback for each response stream a cancelled
    # session leaves unread ("Error parsing SSE message"): not what this counts
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    async with open_session():  # warm-up: lazy imports, the first connection
        pass
    procs, fds = child_pids(), open_fds()
    start = time.perf_counter()
    await open_and_close(open_session, count, concurrency)
    seconds = time.perf_counter() - start
    leaked_procs = child_pids() - procs
    leaked_fds = open_fds() - fds
    return (f"  {label:<12} {count:5d} sessions in {seconds:6.1f} s "
            f"({seconds / count * 1e3:6.1f} ms each, {concurrency} at a time): "
            f"leaked processes {len(leaked_procs)}, leaked descriptors {leaked_fds}")


async def main(args: argparse.Namespace) -> None:
    print(f"bench_mcp: {args.calls} calls x {args.rounds} rounds; load "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; python {sys.version.split()[0]}")
    floor_tool = Tool.from_function(add)
    floor = await timed(sequential(floor_tool), args.calls * 20, args.rounds)
    floor_mid = statistics.median(floor)
    print("per call of the 'add' tool through Tool.run (wall clock):")
    print(line("plain async Python tool (the floor)", floor))
    with http_server(quiet=True) as base:
        stdio = MCPServer.stdio(sys.executable, [SERVER], timeout=None)
        http = MCPServer.http(f"{base}/mcp", timeout=None)
        async with stdio, http:
            for label, server in (("stdio", stdio), ("streamable HTTP", http)):
                tool = next(t for t in server.tools if t.name == "add")
                figures = await timed(sequential(tool), args.calls, args.rounds)
                print(line(f"MCP over {label}, sequential", figures, floor_mid))
                figures = await timed(in_flight(tool), args.calls, args.rounds)
                print(line(f"MCP over {label}, 100 in flight", figures, floor_mid))
            print("where one sequential call's time goes (us/call):")
            parts = await breakdown(stdio, args.calls)
            for label, value in parts.items():
                print(f"  {label:<52} {value:9.1f}")
            print("  the rest: the transport (pipe or HTTP), the server's event loop and the")
            print("  two processes' scheduling = the totals above minus these parts")
        print("sessions opened and closed (a third after a call, a third cancelled while "
              "starting, a third cancelled mid-call):")
        if args.sessions:
            print(await sessions(lambda: MCPServer.http(f"{base}/mcp"), args.sessions,
                                 args.concurrency, "HTTP"), flush=True)
    if args.stdio_sessions:
        print(await sessions(lambda: MCPServer.stdio(sys.executable, [SERVER]),
                             args.stdio_sessions, args.concurrency, "stdio"), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=1000, help="HTTP sessions")
    parser.add_argument("--stdio-sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    asyncio.run(main(parser.parse_args()))
