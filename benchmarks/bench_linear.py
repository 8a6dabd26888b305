"""Scans over a document's text stay linear on hostile shapes: CPU seconds of
the work on a text 8 times longer against the same work on the short text
done 8 times, the floor measured in the same run (linear: a ratio near 1;
quadratic: near 8).

Shapes (each once took time growing with the square of the text, since each
step searched or copied the rest of it): unclosed ``<s>`` tags, a line of
``~~`` marks, unclosed ``<del`` tags, many void headings (``CANCELLED``, a
superseded section of cancelled sub-headings), many ``Notes`` lines above a
list. The work: ``void_blocks.void_spans`` (uncached), ``list_heading.sections``
and ``list_heading.heading_of``. Target: every ratio below 3.

    python benchmarks/bench_linear.py [--n 1000] [--factor 8] [--tries 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentflow.grounding.list_heading import heading_of, sections
from agentflow.grounding.void_blocks import void_spans

SHAPES: dict[str, Callable[[int], str]] = {
    "unclosed <s>": lambda n: "<s> x\n" * n,
    "a line of ~~": lambda n: "~~a " * n,
    "unclosed <del": lambda n: "<del " * n,
    "void headings": lambda n: "CANCELLED\nTotal: 1\n\n" * n,
    "cancelled sub-headings": lambda n: "## Superseded\n" + "### x (cancelled)\nTotal: 1\n" * n,
    "Notes lines": lambda n: "Notes\n" * n + "Notes:\n" + "- x\n" * n,
}
TARGET = 3.0


def work(text: str) -> float:
    """CPU seconds of the scans on ``text``."""
    start = time.process_time()
    void_spans.__wrapped__(text)  # (not the cached answer)
    sections(text, "notes")
    heading_of(text, len(text))
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="repeats of the shape (short text)")
    parser.add_argument("--factor", type=int, default=8, help="how much longer the long text is")
    parser.add_argument("--tries", type=int, default=3, help="the least of this many tries")
    args = parser.parse_args()
    print(f"| shape | short text | {args.factor} x short, s | long text, s | ratio | < {TARGET} |")
    print("|---|--:|--:|--:|--:|---|")
    failed = 0
    for name, make in SHAPES.items():
        short, long = make(args.n), make(args.n * args.factor)
        floor = min(sum(work(short) for _ in range(args.factor)) for _ in range(args.tries))
        took = min(work(long) for _ in range(args.tries))
        ratio = took / floor if floor else float("inf")
        failed += ratio >= TARGET
        print(f"| {name} | {len(short):,} chars | {floor:.4f} | {took:.4f} | {ratio:.2f} | "
              f"{'yes' if ratio < TARGET else 'NO'} |", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
