"""One worker process of ``agentflow extract --workers N``
(``agentflow.cli.workers`` starts it as ``python -m agentflow.cli.worker``).

It reads frames (``agentflow.cli.frames``) on stdin: first the run's flags,
its share of every rate limit and its calls in flight; then one input per
frame (an ``ExtractInput``, its source offset and page map). It extracts
them with ``extract_many``, as the run would in one process (the same
``agentflow.cli.plan``), and writes one ``InputDone`` frame per input on
stdout as each completes (an input that meets the run's own fault, a wrong
key, ends it with a frame that stops the run). It ends when stdin ends and
every input is done.
Its own stdout goes to stderr, so nothing but frames reaches the pipe.
Ctrl-C is the parent's to handle: the parent stops its workers; on Linux
a worker also ends when the parent dies (``prctl(PR_SET_PDEATHSIG)``)."""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

from agentflow.batch import ExtractInput, UniqueIds, extract_many
from agentflow.cli.frames import frame, frames
from agentflow.cli.input_done import InputDone, Settle
from agentflow.cli.loop import run_loop
from agentflow.cli.plan import model_of, plan_of
from agentflow.errors import AgentflowError
from agentflow.errors.run_wide import run_wide
from agentflow.model import Usage
from agentflow.ratelimit import set_process_share

__all__ = ["main"]


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    incoming = frames(reader)  # the flags first, then one input per frame
    setup = await anext(incoming)
    args = argparse.Namespace(**setup["args"])
    set_process_share(setup["share"])
    plan = plan_of(args)
    model = model_of(args)
    where: dict[str, tuple[int, Any]] = {}  # each input in flight: its offset and pages

    async def inputs() -> AsyncIterator[ExtractInput]:
        async for item, offset, pages in incoming:
            if offset or pages is not None:
                where[item.id] = (offset, pages)
            yield item

    settle = Settle(model, args.base_url)
    try:
        async for result in extract_many(
            model, UniqueIds(inputs()), plan.output_type, concurrency=setup["concurrency"],
            order="completed", instructions=plan.instructions, chunking=plan.chunking,
            passes=plan.passes, allow_partial=args.allow_partial, max_chars=plan.max_chars,
            ground=not getattr(args, "no_ground", False), examples=plan.examples,
        ):
            offset, pages = where.pop(result.id, (0, None))
            writer.write(frame(settle(result, offset, pages).wire()))
            await writer.drain()
    except AgentflowError as exc:  # the run's fault, not one input's: the run stops on it
        if run_wide(exc) is not exc:
            raise
        writer.write(frame(InputDone("", {}, Usage(), stop=f"{type(exc).__name__}: {exc}").wire()))
        await writer.drain()
    finally:
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()
    writer.close()


async def _main(frames_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(frames_fd, "wb", buffering=0))
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    await _serve(reader, writer)


def _die_with_parent() -> None:
    """On Linux, have the kernel send this worker SIGTERM when the run's
    process ends (``prctl(PR_SET_PDEATHSIG)``), so a run killed outright
    (SIGKILL, out of memory) leaves no worker making paid requests; and end
    now if it already has (this process was handed to init)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:
        raise SystemExit(0)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def main() -> int:
    """Run one worker until its stdin ends; 0 when every input was answered."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us (SIGTERM)
    _die_with_parent()
    frames_fd = os.dup(1)
    os.dup2(2, 1)  # a print() anywhere in the process goes to stderr, not into a frame
    sys.stdout = sys.stderr
    run_loop(_main(frames_fd))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
