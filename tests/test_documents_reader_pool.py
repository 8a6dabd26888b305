"""The reader pool: a script needs no ``if __name__ == "__main__":`` guard,
standard input is read under the same work budget as a file, and a small
text file read in the listing thread is the document the pool would make."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import multiprocessing
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentflow.documents.budget import WorkBudget
from agentflow.documents.inputs import Document
from agentflow.documents.readahead import read_ahead
from agentflow.documents.reader_pool import BudgetedReader, spool_stdin
from tests.pdfs import text_pdf

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import asyncio, contextlib, sys
from pathlib import Path
from agentflow.documents.readahead import read_ahead
from agentflow.extraction.review import write_review

print("top-level ran", flush=True)
folder = sys.argv[1]

async def read():
    async with contextlib.aclosing(read_ahead([folder], inline_bytes=0)) as docs:
        return [doc async for doc in docs]

for doc in asyncio.run(read()):
    print("read", Path(doc.id).name, repr(doc.text.strip()), doc.problem)
out = Path(folder).parent / "out.jsonl"
out.write_text('{"id": "%s", "ok": true, "output": {}}\\n' % (Path(folder) / "b.pdf"))
stats = write_review(out, Path(folder).parent / "page.html", inputs=[folder])
print("review", stats.records, stats.unavailable_total)
print("main file kept", __file__ == sys.argv[0] or __spec__ is not None)
"""


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Ann: a person")
    (folder / "b.pdf").write_bytes(text_pdf(["Bo: a person"]))
    return folder


def _expected(stdout: str) -> None:
    assert stdout.count("top-level ran") == 1, stdout  # never again in a worker process
    assert "read a.txt 'Ann: a person' None" in stdout
    assert "read b.pdf 'Bo: a person' None" in stdout  # read in the pool
    assert "review 1 0" in stdout  # the report's reader re-read the PDF in its worker
    assert "main file kept True" in stdout


@pytest.mark.parametrize("guard", [False, True])
def test_a_script_with_or_without_the_main_guard_reads_through_the_pool(
        tmp_path: Path, guard: bool) -> None:
    folder = _corpus(tmp_path)
    body = SCRIPT
    if guard:
        body = "if __name__ == '__main__':\n" + "".join(
            f"    {line}\n" for line in SCRIPT.strip().splitlines())
    script = tmp_path / "user_script.py"
    script.write_text(body)
    done = subprocess.run([sys.executable, str(script), str(folder)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    _expected(done.stdout)
    assert "bootstrapping phase" not in done.stderr


def test_a_module_run_with_dash_m_without_the_guard_reads_through_the_pool(
        tmp_path: Path) -> None:
    folder = _corpus(tmp_path)
    package = tmp_path / "userpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "job.py").write_text(SCRIPT)
    env_path = f"{tmp_path}:{ROOT}"
    done = subprocess.run([sys.executable, "-m", "userpkg.job", str(folder)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    _expected(done.stdout)


def _stdin(monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))


def _read(specs: list[str], **options: object) -> list[Document]:
    async def read() -> list[Document]:
        async with contextlib.aclosing(read_ahead(specs, workers=1, **options)) as docs:
            return [doc async for doc in docs]

    return anyio.run(read)


def test_standard_input_is_read_in_the_pool_with_its_id_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, "Ann: a person, café".encode())
    [doc] = _read(["-"], inline_bytes=0)  # (a small text is read inline: see below)
    digest = hashlib.sha1("Ann: a person, café".encode()).hexdigest()[:12]
    assert (doc.id, doc.text, doc.problem) == (f"-#{digest}", "Ann: a person, café", None)


def _read_watching_workers(specs: list[str], **options: object
                           ) -> tuple[list[Document], set[object]]:
    """``_read``'s documents, and the worker processes alive as each arrived."""
    async def read() -> tuple[list[Document], set[object]]:
        before = set(multiprocessing.active_children())
        started: set[object] = set()
        got = []
        async with contextlib.aclosing(read_ahead(specs, workers=1, **options)) as docs:
            async for doc in docs:  # the pool's workers live until the reading ends
                started |= set(multiprocessing.active_children()) - before
                got.append(doc)
        return got, started

    return anyio.run(read)


@pytest.mark.parametrize("raw", [b"", b"\n", "Ann: a person, caf\u00e9".encode()])
def test_small_standard_input_starts_no_worker_and_reads_as_the_pool_does(
        monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    """An empty document piped in was flagged seconds after the same empty
    file: standard input always went to the pool, whose worker process
    (forkserver) is slow to start on a busy machine."""
    _stdin(monkeypatch, raw)
    [doc], started = _read_watching_workers(["-"])
    assert not started
    _stdin(monkeypatch, raw)
    [in_pool], started = _read_watching_workers(["-"], inline_bytes=0)
    assert started  # (the watch sees a worker where one runs)
    assert doc == in_pool and doc.id == f"-#{hashlib.sha1(raw).hexdigest()[:12]}"


def test_standard_input_past_a_budget_limit_is_a_failed_document_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, b"word " * 100)
    [doc] = _read(["-"], budget=WorkBudget(chars=50))
    assert doc.problem_type == "DocumentTooComplexError"
    assert doc.problem == "-: too costly to read: characters of text: 500 (limit 50)"
    # the memory limit too: it was decoded in the run's own process, with none
    _stdin(monkeypatch, b"<html><body>" + b"<b>x</b>" * 250_000 + b"</body></html>")
    [doc] = _read(["-"], budget=WorkBudget(memory_bytes=48 * 1024 * 1024))
    assert doc.problem_type == "DocumentTooComplexError" and doc.id == "-"
    assert doc.problem == "-: too costly to read: bytes of memory: more than 50,331,648"


def test_standard_input_is_spooled_a_chunk_at_a_time_up_to_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, b"x" * 11)
    failed = spool_stdin(limit=10)
    assert isinstance(failed, Document)
    assert failed.problem == "-: larger than 10 bytes; not read"
    assert failed.problem_type == "UnreadableDocumentError"
    _stdin(monkeypatch, b"x" * 10)
    spooled = spool_stdin(limit=10)
    assert isinstance(spooled, Path)
    try:
        assert spooled.read_bytes() == b"x" * 10
    finally:
        spooled.unlink()


def test_the_report_reader_reads_standard_input_under_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, b"word " * 100)
    reader = BudgetedReader(WorkBudget(chars=50))
    try:
        assert reader.read("-").problem_type == "DocumentTooComplexError"
    finally:
        reader.close()


def test_a_small_text_file_read_inline_is_the_document_the_pool_makes(
        tmp_path: Path) -> None:
    """Read in the listing thread or in a worker, every kind of small file
    gives the same document (failed ones with the same problem)."""
    files = {
        "a-utf8.txt": "Ann: a person, café\n".encode(),
        "b-cp1251.txt": "Привет, это Борис из Москвы. " .encode("cp1251") * 20,
        "c-binary.txt": bytes(range(256)) * 4,
        "d-empty.txt": b"",
        "e-page.html": b"<html><body><p>Cy: a person</p></body></html>",
        "f-report.pdf": text_pdf(["Di: a person"]),
        "g-bom.txt": b"\xff\xfe" + "Eve".encode("utf-16-le"),
        "h-undecodable.txt": b"Ann \xff\xfe\xfd caf\xe9 " + b"plain words " * 40,
    }
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    with gzip.open(tmp_path / "i-notes.txt.gz", "wb") as f:
        f.write(b"Fay: a person")
    inline = _read([str(tmp_path)])
    pooled = _read([str(tmp_path)], inline_bytes=0)
    assert [Path(d.id).name for d in inline] == sorted([*files, "i-notes.txt.gz"])
    assert inline == pooled
    assert [d.problem_type for d in inline if d.problem] == ["UnreadableDocumentError"]


def test_the_chars_limit_holds_for_every_kind(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("word " * 100)
    (tmp_path / "b.html").write_text("<p>" + "word " * 100 + "</p>")
    for inline in (0, 1024):  # a budget below the inline floor sends it to the pool anyway
        docs = _read([str(tmp_path)], budget=WorkBudget(chars=50), inline_bytes=inline)
        assert [(d.problem_type, d.kind) for d in docs] == [
            ("DocumentTooComplexError", "text"), ("DocumentTooComplexError", "html")]
