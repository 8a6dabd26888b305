"""Small text files: read in the listing thread, or each a worker-pool round trip.

``read_ahead`` reads every costly input in a worker process under the work
budget (``agentflow.documents.reader_pool``). A small plain-text file cannot
come near the budget, so it is read in the listing thread instead
(``agentflow.documents.small``, up to ``INLINE_BYTES``). This measures both
ways over ``--files`` text files of ``--size`` bytes (ASCII words, a few
non-ASCII letters), consuming every document as ``agentflow extract`` does
(``ahead`` 16, the default worker count):

* ``inline``: ``read_ahead(..., inline_bytes=INLINE_BYTES)`` (the default);
* ``pool``: ``read_ahead(..., inline_bytes=0)``: every file a round trip.

Each run is a child process (``python -c``), so the pool's start-up is in
its figures and its workers' CPU is counted (``os.wait4`` reports the child's
CPU with its own children's once they are waited for). Figures: median wall
seconds and CPU seconds (user + system, the run and its workers), files per
second, each run's peak RSS, and the cost per file once start-up is taken
out (the same way over a one-file folder, subtracted); the ways alternate
run by run so that a drifting load hits both alike.

    python benchmarks/bench_small_files.py [--files 2000] [--size 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_RUN = """
import anyio, contextlib, sys
from agentflow.documents.readahead import read_ahead
from agentflow.documents.small import INLINE_BYTES

async def main() -> None:
    inline = INLINE_BYTES if sys.argv[2] == "inline" else 0
    n = 0
    async with contextlib.aclosing(read_ahead([sys.argv[1]], ahead=16,
                                              inline_bytes=inline)) as docs:
        async for doc in docs:
            assert doc.problem is None, doc.problem
            n += 1
    print(n)

anyio.run(main)
"""


def _corpus(folder: Path, files: int, size: int) -> None:
    line = "Ann Smith paid 12.40 EUR for the café on 3 May; ref 00421.\n"
    text = (line * (size // len(line) + 1))[:size]
    for i in range(files):
        (folder / f"doc-{i:06d}.txt").write_text(text, encoding="utf-8")


def _run(folder: Path, way: str) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS KiB, documents) of one child run."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _RUN, str(folder), way],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{way} run failed ({proc.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, int(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as one:
        folder = Path(tmp)
        _corpus(folder, args.files, args.size)
        _corpus(Path(one), 1, args.size)
        got: dict[str, list[tuple[float, float, int, int]]] = {"inline": [], "pool": []}
        start: dict[str, list[tuple[float, float, int, int]]] = {"inline": [], "pool": []}
        for _ in range(args.repeat):
            for way in got:
                got[way].append(_run(folder, way))
                start[way].append(_run(Path(one), way))
    print(f"{args.files} text files of {args.size} bytes, {os.cpu_count()} CPUs, "
          f"median of {args.repeat}")
    print(f"{'way':8} {'wall s':>8} {'CPU s':>8} {'files/s':>9} {'peak RSS MB':>12} "
          f"{'wall ms/file':>13} {'CPU ms/file':>12}")
    for way, runs in got.items():
        assert all(r[3] == args.files for r in runs), runs
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rss = max(r[2] for r in runs) / 1024
        wall_1 = statistics.median(r[0] for r in start[way])
        cpu_1 = statistics.median(r[1] for r in start[way])
        per = 1000 / max(1, args.files - 1)
        print(f"{way:8} {wall:8.2f} {cpu:8.2f} {args.files / wall:9.0f} {rss:12.1f} "
              f"{(wall - wall_1) * per:13.2f} {(cpu - cpu_1) * per:12.2f}")


if __name__ == "__main__":
    main()
