"""Verification of ``Grounded(longest=True)`` on a value repeated thousands of
times: seconds of ``check_grounding`` against a floor measured in the same run.

The source is N lines of about 40 characters (200 KB for N = 5,000), each
holding the same name, so the value occurs N times, in contexts that differ
(a line number), so nothing can be answered once for all:

* ``whole``: ``-- Matthias Klose <doko@debian.org> #i`` lines: the name is a
  maximal span everywhere (``--`` cannot begin a name, ``#i`` cannot end one),
  the value is found;
* ``part``: ``Dr Matthias Klose <doko@debian.org> #i`` lines, the value
  ``Matthias Klose <doko@debian.org>``: it is part of the longer name
  ``Dr Matthias ...`` everywhere, and is refused ("is only part of").

Each is timed with the field ``Grounded(whole_tokens=True, longest=True)`` and
a name pattern, and the floor is the same check of the same value without
``longest`` (``Grounded(whole_tokens=True)``: finding every occurrence and
testing each for token cuts). The figure to look at is the ratio to the
floor, which stays flat as N grows when the longest rule costs a constant per
value rather than per occurrence.

    python benchmarks/bench_grounding.py [--sizes 1000 5000 20000]
"""

from __future__ import annotations

import argparse
import time
from typing import Annotated

from pydantic import BaseModel, Field

from agentflow.grounding import Grounded, check_grounding, grounded_values

NAME = r"^[^\s<>-][^<>\n]* <[^<>\s]+>$"
VALUE = "Matthias Klose <doko@debian.org>"


class Longest(BaseModel):
    maintainer: Annotated[str, Grounded(whole_tokens=True, longest=True)] = Field(pattern=NAME)


class Plain(BaseModel):
    maintainer: Annotated[str, Grounded(whole_tokens=True)] = Field(pattern=NAME)


def _time(model: type[BaseModel], source: str) -> tuple[float, bool]:
    values = grounded_values(model(maintainer=VALUE), model)
    best = float("inf")
    ok = False
    for _ in range(3):
        start = time.perf_counter()
        ok = check_grounding(values, source).ok
        best = min(best, time.perf_counter() - start)
    return best, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    args = parser.parse_args()
    print(f"{'case':6} {'N':>6} {'KB':>6} {'floor ms':>9} {'longest ms':>11} {'ratio':>6}  found")
    for case, prefix in (("whole", "--"), ("part", "Dr")):
        for n in args.sizes:
            source = "".join(f"{prefix} {VALUE} #{i}\n" for i in range(n))
            floor, _ = _time(Plain, source)
            took, ok = _time(Longest, source)
            print(f"{case:6} {n:>6} {len(source) // 1000:>6} {floor * 1e3:>9.1f} "
                  f"{took * 1e3:>11.1f} {took / floor:>6.1f}  {ok}")


if __name__ == "__main__":
    main()
