"""Run a fake provider server as its own process (benchmarks, manual checks).

    python -m tests.fakes.serve openai --port 8100 --latency 0.2 --text '{"ok": true}'
    python -m tests.fakes.serve deepseek --tool get_weather --args '{"city": "Paris"}'

Every request gets the same reply, built from the options (``--text``,
``--thinking``, ``--tool``/``--args``, ``--chunk-size``, ``--latency``
seconds before the reply, ``--event-delay`` seconds between stream frames).
Requests are not recorded. Once listening, one line
``listening <vendor> <base_url>`` goes to stdout (flushed), so a parent
process can read the URL; the server runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import signal
import sys
from collections.abc import Sequence

import orjson

from .base import FakeCall, FakeReply, FakeServer

__all__ = ["FAKES", "build_fake", "main"]

FAKES: dict[str, str] = {
    "openai": "tests.fakes.openai:OpenAIFake",
    "deepseek": "tests.fakes.deepseek:DeepSeekFake",
    "dashscope": "tests.fakes.dashscope:DashScopeFake",
    "glm": "tests.fakes.glm:GLMFake",
    "minimax": "tests.fakes.minimax:MiniMaxFake",
    "anthropic": "tests.fakes.anthropic:AnthropicFake",
    "gemini": "tests.fakes.gemini:GeminiFake",
    "ollama": "tests.fakes.ollama:OllamaFake",
}
"""Vendor -> ``"module:FakeClass"`` (constructed without arguments)."""


def build_fake(vendor: str) -> FakeServer:
    """A new fake for ``vendor``.

    Raises:
        SystemExit: unknown vendor.
    """
    if vendor not in FAKES:
        raise SystemExit(f"unknown vendor {vendor!r}; choose from {', '.join(sorted(FAKES))}")
    module, _, cls = FAKES[vendor].partition(":")
    fake: FakeServer = getattr(importlib.import_module(module), cls)()
    return fake


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.fakes.serve", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("vendor", choices=sorted(FAKES))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    p.add_argument("--text", default='{"ok": true}', help="reply text")
    p.add_argument("--thinking", default="", help="reasoning text")
    p.add_argument("--tool", help="reply with a call to this tool instead of text")
    p.add_argument("--args", default="{}", help="the tool call's JSON arguments")
    p.add_argument("--chunk-size", type=int, default=16, help="characters per stream fragment")
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    p.add_argument("--event-delay", type=float, default=0.0, help="seconds between frames")
    return p


def reply_from(ns: argparse.Namespace) -> FakeReply:
    """The reply the options describe."""
    calls = (FakeCall(ns.tool, orjson.loads(ns.args)),) if ns.tool else ()
    return FakeReply(text="" if calls else ns.text, thinking=ns.thinking, tool_calls=calls,
                     chunk_size=ns.chunk_size, latency=ns.latency, event_delay=ns.event_delay)


async def serve(ns: argparse.Namespace) -> None:
    """Serve until SIGINT/SIGTERM."""
    fake = build_fake(ns.vendor)
    fake.host, fake.port, fake.record = ns.host, ns.port, False
    fake.default = reply_from(ns)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows
            loop.add_signal_handler(sig, stop.set)
    async with fake:
        print(f"listening {ns.vendor} {fake.url}", flush=True)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry."""
    ns = _parser().parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(ns))


if __name__ == "__main__":
    main(sys.argv[1:])
