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
        assert peak < 1024 * 1024, peak  # the old read held 256 MiB before refusing
        path.unlink()


def test_a_file_one_byte_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"Ann: a person\n")
    os.truncate(path, MAX_INPUT_BYTES + 1)
    [doc] = iter_documents([str(path)])
    assert doc.problem is not None and "larger than" in doc.problem
