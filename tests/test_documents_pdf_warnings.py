"""pypdf's warnings on malformed PDFs (agentflow.documents._pdf_warnings): to
agentflow's log with the file named, nothing on stderr; pypdf's logger untouched
outside a read."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentflow.documents import read_pdf
from agentflow.documents._pdf_warnings import pdf_scope
from tests.pdfs import text_pdf


def bad_startxref_pdf() -> bytes:
    """A PDF whose startxref points nowhere: pypdf warns, rebuilds, reads it."""
    raw = text_pdf()
    return raw[:raw.rfind(b"startxref")] + b"startxref\n999999\n%%EOF\n"


def test_nothing_reaches_stderr_without_logging_configured(tmp_path: Path) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(bad_startxref_pdf())
    code = ("import sys; from pathlib import Path; from agentflow.documents import read_pdf;"
            f"print(read_pdf(Path({str(path)!r}).read_bytes(), name='bad.pdf').text[:9])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "Quarterly" and done.stderr == ""


def test_the_warnings_go_to_agentflows_log_with_the_file_named(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        text = read_pdf(bad_startxref_pdf(), name="reports/bad.pdf").text
    assert text.startswith("Quarterly")
    ours = [r for r in caplog.records if r.name == "agentflow.documents"]
    assert ours and all("pdf_reader_warning" in r.getMessage() for r in ours)
    assert any("startxref" in r.getMessage() and "reports/bad.pdf" in r.getMessage()
               for r in ours)
    assert all(r.levelno == logging.INFO for r in ours)
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # not twice


def test_pypdfs_logger_is_as_the_application_left_it_outside_a_read() -> None:
    logger = logging.getLogger("pypdf")
    handlers, propagate = list(logger.handlers), logger.propagate
    read_pdf(bad_startxref_pdf(), name="bad.pdf")
    assert logger.handlers == handlers and logger.propagate == propagate


def test_concurrent_reads_name_their_own_files(caplog: pytest.LogCaptureFixture) -> None:
    barrier = threading.Barrier(2)

    def read(name: str) -> None:
        with pdf_scope(name):
            barrier.wait(timeout=10)
            logging.getLogger("pypdf._reader").warning("a fix applied to %s", name)
            barrier.wait(timeout=10)

    with caplog.at_level(logging.INFO):
        threads = [threading.Thread(target=read, args=(n,)) for n in ("a.pdf", "b.pdf")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = [r.getMessage() for r in caplog.records if r.name == "agentflow.documents"]
    for name in ("a.pdf", "b.pdf"):
        assert any(f"file='{name}'" in line and f"fix applied to {name}" in line
                   for line in lines), lines
    assert logging.getLogger("pypdf").handlers == [] or all(
        type(h).__name__ != "_Forward" for h in logging.getLogger("pypdf").handlers)
