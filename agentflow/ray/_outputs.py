"""The Ray engine's outputs: ``extract_dataset``'s records written as JSON
lines (a file datasink) or as Parquet (Ray Data's writer)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ray.data

__all__ = ["write_jsonl", "write_parquet"]


def _jsonl_datasink(path: str) -> Any:
    from ray.data.datasource import BlockBasedFileDatasink

    class JsonlRecordsDatasink(BlockBasedFileDatasink):
        """Writes the ``record`` column, one JSON line per row."""

        def __init__(self, path: str) -> None:
            super().__init__(path, file_format="jsonl")

        def write_block_to_file(self, block: Any, file: Any) -> None:
            column = block.to_arrow().column("record").to_pylist()
            file.write("".join(f"{line}\n" for line in column).encode())

    return JsonlRecordsDatasink(path)


def write_jsonl(ds: ray.data.Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``extract_dataset``'s records as JSON lines (``*.jsonl`` files under
    the directory ``path``), through Ray Data's file datasink: one file per
    output block, named by the write, so a rerun adds files and never overwrites."""
    ds.write_datasink(_jsonl_datasink(str(path)))


def write_parquet(ds: ray.data.Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``extract_dataset``'s output (``id``, ``ok``, ``record``) as Parquet
    files under the directory ``path`` (Ray Data's Parquet writer)."""
    ds.write_parquet(str(path))
