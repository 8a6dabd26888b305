"""Hostile inputs as a batch user meets them: each is one typed failed
document that names what is wrong (the limit, when one was passed), never a
stall or a crash, and the inputs beside it are read."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget
from agentflow.documents.inputs import Document, Source, iter_sources
from agentflow.documents.readahead import read_ahead
from agentflow.documents.reader_pool import BudgetedReader, read_in_worker
from agentflow.documents.reading import MAX_INPUT_BYTES
from agentflow.documents.small import read_small
from tests.pdfs import text_pdf


def _read(folder: Path, **options: Any) -> dict[str, Document]:
    return {Path(d.id).name: d for d in _docs(folder, **options)}


def _docs(folder: Path, **options: Any) -> list[Document]:
    options.setdefault("workers", 1)

    async def read() -> list[Document]:
        with anyio.fail_after(300):  # a stall fails the test, not hangs it (load 20: >120 s)
            async with contextlib.aclosing(read_ahead([str(folder)], **options)) as docs:
                return [doc async for doc in docs]

    return anyio.run(read)


def test_each_hostile_file_is_one_typed_failed_document(tmp_path: Path) -> None:
    files: dict[str, bytes] = {
        "a-oneline.txt": b"word" * 20_000,  # one line, no space, past the chars limit
        "b-binary.txt": bytes(range(1, 256)) * 400,  # binary, named .txt, no NUL
        "c-encrypted.pdf": text_pdf(["Secret: x"], owner_password="o", user_password="u"),
        "d-nested.html": b"<html><body>" + b"<div>" * 200_000 + b"x",
        "e-ok.txt": b"Ann: a person",
    }
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    with (tmp_path / "f-sparse.txt").open("wb") as f:
        f.truncate(4 * 1024**3)  # 4 GB long, no block written: refused unread
    docs = _read(tmp_path, budget=WorkBudget(chars=50_000))
    got = {name: (d.problem_type, d.problem) for name, d in docs.items()}
    assert got["a-oneline.txt"] == ("DocumentTooComplexError", (
        f"{tmp_path / 'a-oneline.txt'}: too costly to read: characters of text: 80,000 "
        "(limit 50,000)"))
    assert got["b-binary.txt"] == ("UnreadableDocumentError",
                                   f"{tmp_path / 'b-binary.txt'}: binary file, not text")
    assert got["c-encrypted.pdf"][0] == "EncryptedDocumentError"
    assert got["d-nested.html"][0] == "DocumentTooComplexError"
    assert "nested more than" in (got["d-nested.html"][1] or "")
    assert got["e-ok.txt"] == (None, None) and docs["e-ok.txt"].text == "Ann: a person"
    sparse = docs["f-sparse.txt"]
    assert sparse.problem_type == "UnreadableDocumentError"
    assert f"larger than {MAX_INPUT_BYTES} bytes" in (sparse.problem or "")
    assert "256 MiB (MAX_INPUT_BYTES" in (sparse.reason or "")  # the limit, and what to do


def _listed(path: Path) -> Source:
    [source] = [s for s in iter_sources([str(path)]) if isinstance(s, Source)]
    return source


def _in_worker(source: Source) -> Document:
    return read_in_worker(str(source.path), "auto", None, DEFAULT_BUDGET)


@pytest.mark.parametrize("read", [lambda s: read_small(s, "auto"), _in_worker],
                         ids=["listing thread", "worker"])
def test_a_file_replaced_by_a_pipe_after_it_was_listed_is_refused_not_waited_on(
        tmp_path: Path, read: Callable[[Source], Document | None]) -> None:
    """Opening a pipe blocks until a writer comes: a file swapped for one
    between the listing and the read stalled the read forever."""
    path = tmp_path / "notes.txt"
    path.write_text("Ann: a person")
    source = _listed(path)
    path.unlink()
    os.mkfifo(path)
    doc = read(source)
    if doc is None:  # the listing thread leaves what is not a small regular file to the pool
        doc = _in_worker(source)
    assert (doc.problem_type, doc.problem) == (
        "UnreadableDocumentError", f"{path}: not a regular file; not read")


@pytest.mark.parametrize("read", [lambda s: read_small(s, "auto"), _in_worker],
                         ids=["listing thread", "worker"])
def test_a_file_gone_after_it_was_listed_is_a_failed_document(
        tmp_path: Path, read: Callable[[Source], Document | None]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Ann: a person")
    source = _listed(path)
    path.unlink()
    doc = read(source) or _in_worker(source)
    assert doc.problem == f"{path}: cannot read: [Errno 2] No such file or directory: '{path}'"


def test_a_folder_deeper_than_a_path_can_be_is_one_failed_document(tmp_path: Path) -> None:
    """Past the system's longest path (PATH_MAX: 4096 bytes on Linux) a
    folder cannot be listed by its path: that folder is a failed document and
    every file above it is read (the walk keeps no recursion to overflow).
    Folders of 250-character names reach it 17 levels down: a tree that
    pytest's own clean-up (a recursive ``rmtree``) can delete."""
    name = "d" * 250
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for depth in range(20):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
            if depth % 7 == 0:
                with open(os.open("f.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "w") as f:
                    f.write(f"depth {depth}")
    finally:
        os.close(fd)
    docs = _docs(tmp_path)
    assert [d.text for d in docs if not d.problem] == ["depth 0", "depth 7", "depth 14"]
    [deep] = [d for d in docs if d.problem]
    assert deep.problem_type == "UnreadableDocumentError"
    assert (deep.problem or "").endswith("cannot read directory: File name too long")


def _select_bomb(options: int = 40_000) -> bytes:
    """An HTML page Lexbor parses in quadratic time, in native code (each
    ``<option>`` walks the list before it): 16 s of CPU at 40,000 options,
    minutes at 500,000; the CPU limit's signal, handled in Python, waited."""
    return b"<html><body><select>" + b"<option>x" * options


def test_a_parse_in_native_code_past_the_cpu_limit_is_stopped_and_named(
        tmp_path: Path) -> None:
    """Past ``cpu_seconds`` plus ``CPU_GRACE`` its worker process is ended; the
    documents read beside it in the broken pool are read again alone, so only
    the bomb fails, as ``DocumentTooComplexError`` naming ``cpu_seconds``."""
    (tmp_path / "a-notes.txt").write_bytes(b"Ann: a person " * 30_000)  # not read inline
    (tmp_path / "b-select.html").write_bytes(_select_bomb())
    (tmp_path / "c-page.html").write_bytes(b"<html><body><p>Bo: a person</p></body></html>")
    budget = WorkBudget(cpu_seconds=1)
    docs = _read(tmp_path, budget=budget, inline_bytes=0, workers=2)
    bomb = docs["b-select.html"]
    assert bomb.problem_type == "DocumentTooComplexError"
    assert bomb.problem == f"{tmp_path / 'b-select.html'}: too costly to read: CPU seconds: " \
                           "more than 1"
    assert "native code" in (bomb.reason or "")
    assert docs["a-notes.txt"].text.startswith("Ann: a person")
    assert docs["c-page.html"].text == "Bo: a person"
    reader = BudgetedReader(budget)  # agentflow report re-reads it under the same limit
    try:
        assert reader.read(str(tmp_path / "b-select.html")).problem == bomb.problem
    finally:
        reader.close()


def test_a_reader_error_on_a_small_file_in_the_listing_thread_fails_that_file_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error a reader does not describe (the charset detector meeting
    bytes it trips on) must not escape the listing thread and end the run:
    the file is left to the pool, whose read fails it alone."""
    import charset_normalizer

    def trips(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("the detector tripped")

    path = tmp_path / "notes.txt"
    path.write_bytes(b"Ann: caf\xe9 au lait \xff\xfe odd bytes " * 20)  # not UTF-8: detected
    monkeypatch.setattr(charset_normalizer, "from_bytes", trips)
    assert read_small(_listed(path), "auto") is None
