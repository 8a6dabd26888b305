"""The review page of a results file of any size: records read in passes,
never held (``write_report`` over a re-readable iterable, ``ResultsFile``
for a file), the page the same as when they were held."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentflow.extraction._report_records import KEPT_UNAVAILABLE
from agentflow.extraction.report import render_report, write_report
from agentflow.extraction.review import ResultsFile


class Counted(dict[str, Any]):
    """A record that counts how many records are alive at once."""

    alive: ClassVar[int] = 0
    most: ClassVar[int] = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        Counted.alive += 1
        Counted.most = max(Counted.most, Counted.alive)

    def __del__(self) -> None:
        Counted.alive -= 1


def record(n: int) -> dict[str, Any]:
    rid = f"doc{n % 1500}"  # ids repeat: 500 of 2,000 records are superseded
    if n % 7 == 0:
        return {"id": rid, "ok": False, "attempts": 1,
                "error": {"type": "GroundingError", "reason": f"r{n}", "message": "m"}}
    return {"id": rid, "ok": True, "output": {"name": f"N{n}"}, "spans": {"name": [[0, 2]]}}


class Generated:
    """Records made afresh at each pass, as a file re-read is."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (Counted(record(n)) for n in range(2000))


def test_records_read_in_passes_are_never_held() -> None:
    """At most a few records are alive at once while the page is written
    (every record of the file was held until the last was read), and the page
    is the one the held records make."""
    Counted.alive = Counted.most = 0
    pieces: list[str] = []
    stats = write_report(Generated(), {}, pieces.append)
    assert Counted.most <= 3, Counted.most
    assert (stats.records, stats.superseded) == (1500, 500)
    held = render_report([record(n) for n in range(2000)], {})
    assert "".join(pieces) == held
    # a generator can be read once: its records are held, the page is the same
    assert render_report((record(n) for n in range(2000)), {}) == held
    # sources not available: all are listed on the page, the first ones kept in stats
    assert stats.unavailable_total == 1500 and len(stats.unavailable) == KEPT_UNAVAILABLE
    assert stats.unavailable[0] == (1, "doc500", "no source text given")
    assert held.count('<tr><td><a href="#doc-') == 1500  # the checks' table of sources


_MEASURE = """
import sys, tracemalloc
from pathlib import Path
from agentflow.extraction.review import write_review
tracemalloc.start()
stats = write_review(Path(sys.argv[1]), Path(sys.argv[2]))
print(stats.records, stats.unavailable_total, tracemalloc.get_traced_memory()[1])
"""


def test_the_report_of_a_results_file_holds_no_record_for_long(tmp_path: Path) -> None:
    """``agentflow report`` over 3,000 records of 2 KB: the memory it allocates
    stays under what the records alone take (it read them all into a list).
    Measured in a fresh interpreter: inside a test worker, what earlier tests
    left (CI saw 4.2 MB, then 8.1 MB for 10,000 records) is counted too."""
    results = tmp_path / "out.jsonl"
    with results.open("wb") as f:
        for n in range(3000):
            f.write(orjson.dumps({"id": f"d{n}", "ok": True, "output": {"note": "x" * 2000},
                                  "spans": {}}) + b"\n")
    assert len(list(ResultsFile(results))) == 3000
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(results),
                           str(tmp_path / "out.html")],
                          capture_output=True, text=True, timeout=600, check=True)
    records, unavailable, peak = map(int, done.stdout.split())
    assert records == 3000 and unavailable == 3000
    assert peak < 3_000_000, peak  # the records alone: over 6 MB
    page = (tmp_path / "out.html").read_text()
    assert page.count('class="doc is-ok') == 3000
