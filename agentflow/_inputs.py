"""Documents for the ``extract`` command: paths, globs, directories, ``.gz``,
JSONL and stdin -> ``ExtractInput`` items, lazily.

Ids are stable across runs (the path, plus ``#<line>`` or the record's id for
JSONL), so an output file can be resumed.
"""

from __future__ import annotations

import glob
import gzip
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from agentflow.batch import ExtractInput

__all__ = ["InputError", "iter_documents"]


class InputError(ValueError):
    """An input path that matches nothing, or a JSONL record without the text field."""


def _expand(spec: str) -> list[Path]:
    if spec == "-":
        return [Path("-")]
    path = Path(spec)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    if path.exists():
        return [path]
    matches = sorted(Path(p) for p in glob.glob(spec, recursive=True))
    files = [p for p in matches if p.is_file()]
    if not files:
        raise InputError(f"input {spec!r} matches no file")
    return files


def _read(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def _is_jsonl(path: Path, fmt: str) -> bool:
    if fmt != "auto":
        return fmt == "jsonl"
    suffixes = path.suffixes
    return ".jsonl" in suffixes or ".ndjson" in suffixes


def _jsonl_records(path: Path, text_field: str, id_field: str) -> Iterator[ExtractInput]:
    content = _read(path)
    for number, line in enumerate(io.StringIO(content), start=1):
        if not line.strip():
            continue
        try:
            record: Any = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(record, dict) or not isinstance(record.get(text_field), str):
            raise InputError(f"{path}:{number}: no string field {text_field!r}")
        rid = record.get(id_field)
        yield ExtractInput(f"{path}#{rid if rid is not None else number}", record[text_field])


def iter_documents(
    specs: Sequence[str],
    *,
    fmt: str = "auto",
    text_field: str = "text",
    id_field: str = "id",
    prepare: Callable[[str], str] | None = None,
    max_chars: int | None = None,
) -> Iterator[ExtractInput]:
    """Every document named by ``specs`` (files, globs, directories, ``-``).

    Args:
        fmt: ``auto`` (JSONL by suffix), ``text`` or ``jsonl``.
        text_field / id_field: JSONL record fields.
        prepare: applied to each text (e.g. keep a changelog's latest entry).
        max_chars: texts longer than this are cut (small local models).

    Raises:
        InputError: a spec matches nothing, or a JSONL line is malformed.
    """
    for spec in specs:
        for path in _expand(spec):
            if _is_jsonl(path, fmt):
                docs = _jsonl_records(path, text_field, id_field)
            else:
                docs = iter([ExtractInput(str(path), _read(path))])
            for doc in docs:
                text = prepare(doc.text) if prepare else doc.text
                if max_chars is not None and len(text) > max_chars:
                    text = text[:max_chars]
                yield ExtractInput(doc.id, text)
