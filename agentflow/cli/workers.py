"""``agentflow extract --workers N``: the run's extraction spread over N
worker processes (``agentflow.cli.worker``), for a fast endpoint where one
process's CPU, not the endpoint, bounds the rate.

This process still reads the inputs (lazily, as workers free up), writes
every record, resumes from ``--out`` and draws the progress line; each
worker runs ``extract_many`` with its share of the calls in flight
(``shares``: together, ``concurrency``, never more)
and ``1 / N`` of every rate limit (``agentflow.ratelimit.set_process_share``),
as the Ray engine's actors do. A worker is handed a few more inputs than
its calls in flight, so it never waits on this process for its next one.

The progress line counts records; the chunks of long documents that
workers split are not counted on it (``chunks``: a one-process run's).

When a worker dies, the run stops: the inputs it held have no record, and
running the same command again does them. Leaving the iteration early
(a set-up fault, Ctrl-C, ``break``) stops every worker."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow.batch import ExtractInput
from agentflow.cli.frames import FrameError, frame, frames
from agentflow.cli.input_done import InputDone
from agentflow.errors import AgentflowError

__all__ = ["WorkItem", "WorkerExitedError", "check_workers", "extract_in_workers", "shares"]


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One input for a worker: what ``extract_many`` takes, and what its
    record needs (``to_record``'s ``source_offset`` and ``pages``)."""

    input: ExtractInput
    source_offset: int = 0
    pages: Sequence[tuple[int, int]] | None = None


class WorkerExitedError(AgentflowError):
    """A worker process ended before answering every input it was handed (it
    crashed, or was killed: out of memory, a signal), or sent a result this
    process cannot read; the run stops. The inputs it held have no record:
    the same command again does them."""


@dataclass(slots=True)
class _Worker:
    index: int
    process: asyncio.subprocess.Process
    held: int = 0  # inputs handed and not answered yet



def check_workers(args: argparse.Namespace, concurrency: int | None = None) -> None:
    """Refuse ``--workers`` above 1 where it cannot work, before any request
    (``concurrency``: the run's calls in flight, once known; ``None``: the
    checks of the flags alone, made before the API key is looked for).

    Raises:
        CliError: with ``--mode batch`` or ``auto`` (one batch job per run),
            the embedded model (one model in memory serves every call: use
            ``--concurrency``), or fewer calls in flight than workers.
    """
    from agentflow.cli.options import CliError

    if args.workers <= 1:
        return
    if args.mode != "live":
        raise CliError(f"--workers {args.workers} is for --mode live (a batch job is one "
                       "request for every input)")
    if args.model.split(":", 1)[0] == "local":
        raise CliError(f"--workers {args.workers}: the embedded model serves every call from "
                       "one process; raise --concurrency instead")
    if concurrency is not None and concurrency < args.workers:
        raise CliError(f"--workers {args.workers} needs --concurrency >= {args.workers} (each "
                       f"worker has at least one call in flight), got {concurrency}")


async def extract_in_workers(
    args: argparse.Namespace, items: AsyncIterator[WorkItem], *, workers: int,
    concurrency: int,
) -> AsyncGenerator[InputDone, None]:
    """Each input's ``InputDone``, as workers complete them (in no set order).

    Args:
        args: the run's flags, as parsed (each worker reads its plan from them).
        items: the inputs, pulled as workers have room.
        workers: worker processes (>= 1).
        concurrency: calls in flight in all workers together (>= 1).

    Raises:
        WorkerExitedError: a worker ended early; names its exit status and how
            many inputs it held.
        Exception: whatever iterating ``items`` raised.
    """
    plain = _plain(args)
    pool: list[_Worker] = []
    results: asyncio.Queue[Any] = asyncio.Queue()
    room: asyncio.Queue[_Worker] = asyncio.Queue()
    tasks: list[asyncio.Task[None]] = []
    try:
        for index, calls in enumerate(shares(concurrency, workers)):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agentflow.cli.worker", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, limit=1 << 20)
            worker = _Worker(index, process)
            pool.append(worker)
            assert process.stdin is not None
            process.stdin.write(frame({"args": plain, "share": 1.0 / workers,
                                       "concurrency": calls}))
            for _ in range(calls + max(1, calls // 4)):
                room.put_nowait(worker)
        tasks = [asyncio.create_task(_read(worker, results, room)) for worker in pool]
        tasks.append(asyncio.create_task(_hand_out(items, pool, room, results)))
        ended = 0
        while ended < workers:
            got = await results.get()
            if type(got) is InputDone:
                yield got
            elif isinstance(got, BaseException):
                raise got
            else:
                ended += 1
                worker = got
                status = await worker.process.wait()
                if worker.held or status:
                    while not results.empty():  # what the others finished is written first
                        other = results.get_nowait()
                        if type(other) is InputDone:
                            yield other
                    raise WorkerExitedError(
                        f"worker process {worker.index + 1} of {workers} exited with status "
                        f"{status} holding {worker.held} input{'s' * (worker.held != 1)}; "
                        "their records are not written: run the same command again to do them")
    finally:
        for task in tasks:
            task.cancel()
        for worker in pool:
            if worker.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.process.terminate()
        for worker in pool:
            await worker.process.wait()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def shares(concurrency: int, workers: int) -> list[int]:
    """Each worker's calls in flight: ``concurrency`` split as evenly as it
    goes (``shares(10, 4)`` is ``[3, 3, 2, 2]``), so the run never has more
    in flight than ``--concurrency``; each at least 1 (``check_workers``
    refuses fewer calls than workers)."""
    return [max(1, concurrency // workers + (i < concurrency % workers))
            for i in range(workers)]


async def _hand_out(items: AsyncIterator[WorkItem], pool: list[_Worker],
                    room: asyncio.Queue[_Worker], results: asyncio.Queue[Any]) -> None:
    """Hand each input to the first worker with room; end every worker's
    stdin after the last (a fault reading the inputs goes to ``results``)."""
    try:
        async for item in items:
            worker = await room.get()
            while worker.process.returncode is not None:  # died: its room is gone
                worker = await room.get()
            stdin = worker.process.stdin
            assert stdin is not None
            worker.held += 1
            stdin.write(frame((item.input, item.source_offset, item.pages)))
            await stdin.drain()
    except ConnectionError:  # (BrokenPipeError among them) a worker died: its reader says so
        pass
    except Exception as exc:  # reading the inputs failed: the run raises it
        results.put_nowait(exc)
        return
    for worker in pool:
        if worker.process.stdin is not None and not worker.process.stdin.is_closing():
            worker.process.stdin.close()


async def _read(worker: _Worker, results: asyncio.Queue[Any],
                room: asyncio.Queue[_Worker]) -> None:
    """Put each ``InputDone`` ``worker`` sends on ``results``, give its room
    back, and put the worker itself there when its stdout ends (a frame that
    does not read as one: a ``WorkerExitedError`` instead)."""
    stdout = worker.process.stdout
    assert stdout is not None
    try:
        async for wire in frames(stdout):
            worker.held -= 1
            room.put_nowait(worker)
            results.put_nowait(InputDone.from_wire(wire))
    except FrameError:
        pass
    except Exception as exc:  # a frame this process cannot read: the run stops, never hangs
        results.put_nowait(WorkerExitedError(
            f"worker process {worker.index + 1} sent a result this process cannot read "
            f"({type(exc).__name__}: {exc}); the run stops"))
        return
    results.put_nowait(worker)


def _plain(args: argparse.Namespace) -> dict[str, Any]:
    """The flags a worker needs, as plain values (what pickles)."""
    return {name: value for name, value in vars(args).items() if not callable(value)}
