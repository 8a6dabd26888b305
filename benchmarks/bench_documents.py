"""Text extraction from PDFs and HTML pages: agentflow's readers against a floor.

PDF: a generated N-page PDF (fpdf2; each page about 40 lines of report text in
a core font, so about 2,900 characters a page) is read

* by the floor: a bare pypdf loop, ``PdfReader`` then ``page.extract_text()``
  for every page, nothing else;
* by ``agentflow.documents.read_pdf`` (the same pypdf calls, plus the page map
  and the joined text);
* by ``agentflow.documents.inputs.iter_documents`` on the file (what ``agentflow
  extract`` does per input: read, sniff the kind, the text checks, the page
  map).

HTML: a generated page of N sections (headings, paragraphs with inline markup
and entities, a table, a list, a script and a style to drop), parsed

* by the floor: Lexbor's own parse and flat text (``LexborHTMLParser(html).body
  .text()``: no line breaks for blocks, scripts not dropped);
* by ``agentflow.documents.html_to_text`` (parse, the charset prescan for bytes,
  and the innerText rules: blocks, cells, hidden and script content).

Hostile HTML: a page of ``--nested`` nested ``<div>`` (100,000 by default),
which Lexbor alone takes minutes to parse (its work per block element grows
with the depth), against ``html_to_text``, which refuses it with a
``DocumentTooComplexError`` after its linear depth scan; and a page of blocks
nested right at the cap (``MAX_HTML_DEPTH``), repeated to about 1 MB, which is
read: the worst a page that passes the cap costs, beside Lexbor on a flat page
of the same size (the floor). Lexbor on the hostile page itself is timed only
with ``--nested-floor`` (slow: about 170 s at 100,000).

Each figure is the median of ``--repeat`` runs, in CPU seconds of this process
(``time.process_time``: on a machine shared with other jobs, wall time mostly
measures them), the readers interleaved run by run so that drifting load hits
them alike; pages/s and characters/s (of HTML input) are derived from it. The
extracted texts are checked against the floor's, so speed is never bought
with lost text.

    python benchmarks/bench_documents.py [--pages 100] [--sections 400] [--repeat 5]
        [--nested 100000] [--nested-floor]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from fpdf import FPDF
from pypdf import PdfReader
from selectolax.lexbor import LexborHTMLParser

from agentflow.documents import MAX_HTML_DEPTH, PAGE_SEPARATOR, html_to_text, read_pdf
from agentflow.documents.inputs import iter_documents
from agentflow.errors import DocumentTooComplexError

LINE = ("Item {n}: valve inspection at station {s}, flange torque {t} Nm, "
        "status nominal; cost {c}.00 EUR.")


def make_pdf(pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=9)
    for page in range(pages):
        pdf.add_page()
        pdf.cell(0, 6, f"Maintenance report, page {page + 1}", new_x="LMARGIN", new_y="NEXT")
        for n in range(40):
            pdf.cell(0, 6, LINE.format(n=n, s=page, t=40 + n, c=100 * n + page),
                     new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def make_html(sections: int) -> str:
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Report</title>",
             "<style>td { padding: 2px }</style><script>var x = 1;</script></head><body>"]
    for s in range(sections):
        parts.append(
            f"<section><h2>Station {s}</h2><p>Inspected on <b>2024-03-{s % 28 + 1:02}</b> by "
            f"<a href='/p/{s}'>Ren&eacute;e F.</a>; pressure&nbsp;{s}&nbsp;bar &amp; rising."
            f"</p><table><tr><th>Unit</th><th>Status</th></tr><tr><td>P-{s}</td>"
            f"<td>ok</td></tr></table><ul><li>valve V-{s} closed<li>crew notified</ul>"
            f"<script>track({s});</script></section>")
    parts.append("</body></html>")
    return "".join(parts)


def median_seconds(works: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """The median CPU seconds of each of ``works``, run interleaved ``repeat`` times."""
    times: list[list[float]] = [[] for _ in works]
    for _ in range(repeat):
        for index, work in enumerate(works):
            start = time.process_time()
            work()
            times[index].append(time.process_time() - start)
    return [statistics.median(t) for t in times]


def floor_pdf(raw: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(raw)).pages]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--sections", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--nested", type=int, default=100_000)
    parser.add_argument("--nested-floor", action="store_true")
    args = parser.parse_args()

    raw = make_pdf(args.pages)
    floor_text = floor_pdf(raw)
    ours = read_pdf(raw)
    assert ours.text == PAGE_SEPARATOR.join(floor_text), "read_pdf lost or changed text"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.pdf"
        path.write_bytes(raw)
        (doc,) = iter_documents([str(path)])
        assert doc.text == ours.text and doc.pages == ours.pages
        names = ["floor: pypdf extract_text loop", "read_pdf (page map)",
                 "iter_documents (file, as extract)"]
        rows = list(zip(names, median_seconds(
            [lambda: floor_pdf(raw), lambda: read_pdf(raw),
             lambda: list(iter_documents([str(path)]))], args.repeat), strict=True))
    chars = len(ours.text)
    print(f"PDF: {args.pages} pages, {len(raw) / 1024:.0f} KB, {chars:,} characters of text; "
          f"median of {args.repeat}, CPU seconds")
    print("| reader | s | pages/s | × floor |\n|--|--:|--:|--:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {args.pages / seconds:,.0f} | "
              f"{seconds / rows[0][1]:.2f} |")

    html = make_html(args.sections)
    data = html.encode("utf-8")
    text = html_to_text(data)
    flat = LexborHTMLParser(html).body.text()  # type: ignore[union-attr]
    for needle in ("Station 7", "Renée F.", "P-7\tok", "crew notified"):
        assert needle in text, needle
    assert "track(" not in text and "track(" in flat
    hnames = ["floor: Lexbor parse + flat text", "html_to_text (str)",
              "html_to_text (bytes: charset prescan)"]
    hrows = list(zip(hnames, median_seconds(
        [lambda: LexborHTMLParser(html).body.text(),  # type: ignore[union-attr]
         lambda: html_to_text(html), lambda: html_to_text(data)], args.repeat), strict=True))
    print(f"\nHTML: {args.sections} sections, {len(html):,} characters in, {len(text):,} "
          f"characters of text out; median of {args.repeat}, CPU seconds")
    print("| reader | s | M chars/s of HTML | × floor |\n|--|--:|--:|--:|")
    for name, seconds in hrows:
        print(f"| {name} | {seconds:.3f} | {len(html) / seconds / 1e6:.1f} | "
              f"{seconds / hrows[0][1]:.2f} |")
    sys.stdout.flush()
    hostile_html(args.nested, args.repeat, args.nested_floor)


def refused(page: bytes) -> None:
    try:
        html_to_text(page)
    except DocumentTooComplexError:
        return
    raise AssertionError("the hostile page was not refused")


def hostile_html(nested: int, repeat: int, with_floor: bool) -> None:
    hostile = ("<div>" * nested + "x" + "</div>" * nested).encode()
    block = "<div>" * MAX_HTML_DEPTH + "x" + "</div>" * MAX_HTML_DEPTH
    at_cap = (block * max(1, 1_000_000 // len(block))).encode()
    flat = ("<div>x</div>" * (len(at_cap) // 12)).encode()
    assert html_to_text(at_cap).count("x") == at_cap.count(b"x")
    names = [f"html_to_text, {nested:,} nested (refused)",
             "floor: Lexbor parse, flat page of the at-cap page's size",
             f"html_to_text, {MAX_HTML_DEPTH} deep blocks (read)"]
    works: list[Callable[[], object]] = [
        lambda: refused(hostile), lambda: LexborHTMLParser(flat), lambda: html_to_text(at_cap)]
    rows = list(zip(names, median_seconds(works, repeat), strict=True))
    if with_floor:
        start = time.process_time()
        LexborHTMLParser(hostile)
        rows.append((f"Lexbor parse alone, {nested:,} nested (once)", time.process_time() - start))
    print(f"\nHostile HTML: {len(hostile):,} bytes nested {nested:,} deep; at-cap page "
          f"{len(at_cap):,} bytes; median of {repeat}, CPU seconds")
    print("| page | s |\n|--|--:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
