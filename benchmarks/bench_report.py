"""The review page at scale: time and memory of ``agentflow report`` against a floor.

Writes N synthetic changelog-like sources (about 1.3 KB each, with emoji, ``<``
and ``&``) and a results file of N records (15 spans each, one record in ten
failed, plus one superseded record per hundred), then builds the page with
``write_review`` (records read, each source re-read and put through
``prepare``, highlighted, written) and measures:

* seconds and microseconds per record;
* the page size;
* the peak of Python allocations while building the page (``tracemalloc``,
  a second run), next to the peak of reading the results file alone: the
  difference is what the page costs beyond holding the records, and stays
  flat as N grows (sources are read one at a time, never all held).

The floor is the least any page writer must do in the same run: read the
results file, read every source, and write it HTML-escaped to a file. The
ratio to the floor, and per-record figures that stay flat as N grows, are
what to look at (the page is built in one linear pass).

    python benchmarks/bench_report.py [--sizes 1000 8000]
"""

from __future__ import annotations

import argparse
import html
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import debian_changelog

from agentflow.extraction.review import read_records, write_review

ENTRY = """pkg{n} (1.{n}-2) unstable; urgency=medium

  * Fix <stdio.h> & "quotes" in the 😀 banner of pkg{n}.
  * Build with hardening flags; closes: #{n}.
  * Update Standards-Version to 4.6.2, no changes needed.
  * Add autopkgtest running the upstream test suite.
  * Refresh patches for the new upstream release.
  * Drop the obsolete transitional package pkg{n}-dev-old.

 -- Jane Maintainer <jane@example.org>  Sun, 11 Dec 2022 12:00:00 +0100

pkg{n} (1.{n}-1) unstable; urgency=low

  * Older change that the model does not see.
  * Another older change, also cut away by prepare().

 -- Jane Maintainer <jane@example.org>  Sat, 10 Dec 2022 12:00:00 +0100
"""


def corpus(root: Path, size: int) -> Path:
    """``size`` sources under ``root`` and their results file; returns the results path."""
    lines = []
    for n in range(size):
        text = ENTRY.format(n=n)
        path = root / f"src{n // 1000}" / f"pkg{n}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        entry = debian_changelog.prepare(text)
        parsed = debian_changelog.parse_entry(text)
        assert parsed is not None
        output = parsed.model_dump(mode="json")
        spans: dict[str, list[list[int]]] = {}
        for field in ("package", "version", "distribution", "maintainer", "date"):
            start = entry.index(output[field])
            spans[field] = [[start, start + len(output[field])]]
        for i, change in enumerate(output["changes"]):
            start = entry.index(change)
            spans[f"changes[{i}]"] = [[start, start + len(change)]]
        spans["header"] = [[0, entry.index("\n")]]  # nests package, version, distribution
        record: dict[str, object] = {"id": str(path), "ok": True, "output": output,
                                     "spans": spans, "attempts": 1, "duration_s": 3.1}
        if n % 10 == 9:
            record = {"id": str(path), "ok": False, "attempts": 3,
                      "error": {"type": "DegenerateOutputError", "message": "rejected",
                                "reason": "repetition loop in version: d/d/d/d"}}
        if n % 100 == 0:
            lines.append(orjson.dumps({"id": str(path), "ok": False,
                                       "error": {"type": "ProviderTimeoutError"}}))
        lines.append(orjson.dumps(record))
    results = root / "out.jsonl"
    results.write_bytes(b"\n".join(lines) + b"\n")
    return results


def floor(results: Path, out: Path) -> None:
    """Read the records and every source, write the sources HTML-escaped."""
    with out.open("w", encoding="utf-8") as sink:
        for line in results.read_bytes().splitlines():
            record = orjson.loads(line)
            sink.write(html.escape(Path(record["id"]).read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 8000])
    args = parser.parse_args()
    print(f"{'records':>8} {'floor s':>8} {'page s':>8} {'x floor':>8} {'µs/record':>10} "
          f"{'page MB':>8} {'peak MB':>8} {'records MB':>10}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
            root = Path(tmp)
            results = corpus(root, size)
            start = time.perf_counter()
            floor(results, root / "floor.html")
            floor_s = time.perf_counter() - start
            start = time.perf_counter()
            stats = write_review(results, root / "page.html", inputs=[str(root)],
                                 prepare=debian_changelog.prepare)
            page_s = time.perf_counter() - start
            assert stats.records == size and stats.spans > 0 and not stats.unavailable
            tracemalloc.start()
            write_review(results, root / "page.html", inputs=[str(root)],
                         prepare=debian_changelog.prepare)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            tracemalloc.start()
            read_records(results)
            records_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            page_mb = (root / "page.html").stat().st_size / 1e6
            print(f"{size:>8} {floor_s:>8.2f} {page_s:>8.2f} {page_s / floor_s:>8.1f} "
                  f"{page_s / size * 1e6:>10.0f} {page_mb:>8.1f} {peak / 1e6:>8.1f} "
                  f"{records_peak / 1e6:>10.1f}")


if __name__ == "__main__":
    main()
