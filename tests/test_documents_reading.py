"""Reading an input's bytes: a file over the size limit is refused before any
of it is read, so a 2 GB file costs no memory (sparse files: no disk used)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from agentflow.documents.inputs import iter_documents, read_document
from agentflow.documents.reading import MAX_INPUT_BYTES


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    for name in ("big.txt", "big.pdf", "big"):
        path = tmp_path / name
        with path.open("wb") as f:
            f.truncate(2 * 1024**3)  # sparse: 2 GB long, no block written
        tracemalloc.start()
        try:
            doc = read_document(path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert doc.problem == (f"{path}: larger than {MAX_INPUT_BYTES} bytes "
                               f"(2,147,483,648 bytes); not read"), doc.problem
        assert doc.problem_type == "UnreadableDocumentError"
        assert peak < 16 * 1024 * 1024, peak  # the old read held 256 MiB before refusing
        path.unlink()


def test_a_file_one_byte_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"Ann: a person\n")
    os.truncate(path, MAX_INPUT_BYTES + 1)
    [doc] = iter_documents([str(path)])
    assert doc.problem is not None and "larger than" in doc.problem


def test_a_read_asks_for_no_more_memory_than_the_bytes_it_gets(tmp_path: Path) -> None:
    """A read of unknown size (a .gz, stdin) gathers chunks in place: about its
    size, never the 256 MiB of read(MAX_INPUT_BYTES + 1), which a worker's
    memory budget (RLIMIT_AS) refused for every file."""
    import gzip

    from agentflow.documents.reading import read_bytes

    text = b"Ann: a person\n" * 1_500_000  # 21 MB
    small = tmp_path / "small.txt"
    small.write_bytes(b"Ann: a person\n")
    packed = tmp_path / "big.txt.gz"
    packed.write_bytes(gzip.compress(text, compresslevel=1))
    for path, size in ((small, 14), (packed, len(text))):
        tracemalloc.start()
        try:
            raw = read_bytes(path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(raw) == size
        assert peak < 1.3 * size + 3 * 1024 * 1024, (path.name, peak)
