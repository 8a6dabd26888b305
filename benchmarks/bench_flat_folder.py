"""One flat folder of many files: the walk's memory, names sorted in memory or on disk.

``agentflow extract --input folder/`` walks a folder in name order
(``agentflow.documents.listing``). Its names were all held in Python objects
to sort them; past ``SPILL_NAMES`` they are sorted on disk (``SeenIds``).
This walks one flat folder of ``--files`` empty files both ways (in memory:
``SPILL_NAMES`` set past the file count) and reports each walk's peak of
Python allocations (``tracemalloc``) and its wall time; the entries are
checked to come in the same order.

    python benchmarks/bench_flat_folder.py [--files 200000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

from agentflow.documents import listing


def _walk(root: Path) -> tuple[float, float, int, str]:
    """(peak MB, seconds, entries, last entry) of one walk."""
    tracemalloc.start()
    start = time.perf_counter()
    count, last = 0, ""
    for path, _ in listing._walk(root):
        count, last = count + 1, path.name
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return peak, seconds, count, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in range(args.files):
            os.close(os.open(root / f"invoice-{n:08d}-of-the-year.txt", os.O_CREAT))
        spill = listing.SPILL_NAMES
        rows = {}
        for way, limit in (("memory", args.files + 1), ("disk", spill)):
            listing.SPILL_NAMES = limit
            rows[way] = _walk(root)
        listing.SPILL_NAMES = spill
    assert rows["memory"][2:] == rows["disk"][2:], rows
    print(f"one flat folder of {args.files} files; SPILL_NAMES {spill}")
    print(f"{'names sorted':14} {'peak MB':>8} {'seconds':>8}")
    for way, (peak, seconds, _, _) in rows.items():
        print(f"{'in ' + way:14} {peak:8.1f} {seconds:8.2f}")


if __name__ == "__main__":
    main()
