"""The work budget's memory limit: a document whose read needs more memory
than ``WorkBudget.memory_bytes`` is a failed document naming the limit,
read in a worker process, and the other inputs are read; a reader failing in
a way of its own fails its file, not the run."""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio

from agentflow.documents.budget import WorkBudget
from agentflow.documents.readahead import BudgetedReader, read_ahead
from tests.pdfs import text_pdf

SMALL = WorkBudget(memory_bytes=48 * 1024 * 1024)


def _corpus(tmp_path: Path) -> dict[str, bytes]:
    files = {
        # 250,000 elements: Lexbor's tree and the walk need far more than 48 MB
        "a-tags.html": b"<html><body>" + b"<b>x</b>" * 250_000 + b"</body></html>",
        # 8 MB of text in one node: the text is copied several times on the way out
        "b-text.html": b"<html><body><p>" + b"word " * 1_600_000 + b"</p></body></html>",
        "c-page.html": b"<html><body><p>Ann: a person</p></body></html>",
        "d-report.pdf": text_pdf(["Bo: a person"]),
        "e-notes.txt": b"Cy: a person",
    }
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    return files


def test_a_read_past_the_memory_limit_fails_its_document_and_the_others_are_read(
        tmp_path: Path) -> None:
    _corpus(tmp_path)

    async def read() -> list[object]:
        async with contextlib.aclosing(read_ahead([str(tmp_path)], ahead=2, workers=1,
                                                  budget=SMALL)) as docs:
            return [doc async for doc in docs]

    docs = {Path(d.id).name: d for d in anyio.run(read)}  # type: ignore[attr-defined]
    for name in ("a-tags.html", "b-text.html"):
        doc = docs[name]
        assert doc.problem_type == "DocumentTooComplexError", (name, doc.problem)
        assert doc.problem == (f"{tmp_path / name}: too costly to read: bytes of memory: "
                               "more than 50,331,648")
        assert "memory_bytes limit (50,331,648 bytes of memory)" in (doc.reason or "")
    assert docs["c-page.html"].text == "Ann: a person"  # the same worker, after both
    assert docs["d-report.pdf"].text.strip() == "Bo: a person"
    assert docs["e-notes.txt"].text == "Cy: a person"


def test_the_report_reader_keeps_the_same_limit(tmp_path: Path) -> None:
    _corpus(tmp_path)
    reader = BudgetedReader(SMALL)
    try:
        assert reader.read(str(tmp_path / "a-tags.html")).problem_type == (
            "DocumentTooComplexError")
        assert reader.read(str(tmp_path / "c-page.html")).text == "Ann: a person"
    finally:
        reader.close()


def test_iter_documents_reads_under_the_budgets_count_limits(tmp_path: Path) -> None:
    """What the Ray engine's tasks read with: a PDF past a count limit (pages,
    operators, characters) is a failed document in this process too (it was
    read without a budget: the hostile PDF took 30 s of CPU per page)."""
    from agentflow.documents.inputs import iter_documents
    from tests.pdfs import hostile_pdf

    (tmp_path / "four.pdf").write_bytes(hostile_pdf(pages=4, operators=10))
    (tmp_path / "notes.txt").write_text("Cy: a person")
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)],
                                                       budget=WorkBudget(pages=3))}
    assert docs["four.pdf"].problem_type == "DocumentTooComplexError"
    assert "pages: 4 (limit 3)" in (docs["four.pdf"].problem or "")
    assert docs["notes.txt"].text == "Cy: a person"
    (tmp_path / "four.pdf").write_bytes(hostile_pdf())  # 20 pages x 1M operators: the default
    [pdf] = [d for d in iter_documents([str(tmp_path)]) if d.id.endswith(".pdf")]
    assert pdf.problem_type == "DocumentTooComplexError" and "operators" in (pdf.problem or "")


def _gzip_bomb(path: Path, megabytes: int) -> None:
    """A small ``.gz`` of plain text that inflates to ``megabytes`` MiB."""
    import gzip

    line = b"word " * 200 + b"\n"
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(megabytes * 1024 * 1024 // len(line)):
            f.write(line)


def test_plain_text_is_read_under_the_same_budget_and_fails_alone(tmp_path: Path) -> None:
    """A text file is read in the worker pool under the memory limit as a PDF
    or an HTML page is (it was decoded in a thread of the run's own process,
    with no limit): a ``.gz`` of 200 KB that inflates to 64 MiB is a failed
    document naming ``memory_bytes``, and every other input is read."""
    _gzip_bomb(tmp_path / "b-bomb.txt.gz", 64)
    (tmp_path / "a-notes.txt").write_text("Ann: a person")
    (tmp_path / "c-page.html").write_bytes(b"<html><body><p>Bo: a person</p></body></html>")
    (tmp_path / "d-notes.txt").write_text("Cy: a person")

    async def read() -> list[object]:
        async with contextlib.aclosing(read_ahead([str(tmp_path)], ahead=2, workers=1,
                                                  budget=SMALL)) as docs:
            return [doc async for doc in docs]

    docs = {Path(d.id).name: d for d in anyio.run(read)}  # type: ignore[attr-defined]
    bomb = docs["b-bomb.txt.gz"]
    assert bomb.problem_type == "DocumentTooComplexError" and bomb.kind == "text", bomb
    assert bomb.problem == (f"{tmp_path / 'b-bomb.txt.gz'}: too costly to read: bytes of "
                            "memory: more than 50,331,648")
    assert [docs[n].text for n in ("a-notes.txt", "c-page.html", "d-notes.txt")] == [
        "Ann: a person", "Bo: a person", "Cy: a person"]
    reader = BudgetedReader(SMALL)  # agentflow report re-reads it under the same limit
    try:
        assert reader.read(str(tmp_path / "b-bomb.txt.gz")).problem == bomb.problem
        assert reader.read(str(tmp_path / "a-notes.txt")).text == "Ann: a person"
    finally:
        reader.close()
