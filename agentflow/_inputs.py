"""Documents for the ``extract`` command: paths, globs, directories, ``.gz``,
JSONL and stdin -> ``Document`` items, lazily.

Ids are stable across runs (the path, plus ``#<line>`` or the record's id for
JSONL; stdin: ``-#`` and a hash of the text), so an output file can be
resumed. A document that cannot be used (unreadable, corrupt ``.gz``, binary,
empty) comes out with its ``problem`` set, so the caller records it as
failed without asking a model to invent an answer.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import io
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Document", "InputError", "iter_documents"]


@dataclass(frozen=True, slots=True)
class Document:
    """One input document; ``problem`` says why it cannot be used, if so;
    ``offset``: where ``text`` starts in the decoded file when ``prepare``
    cut a prefix (0 otherwise, or when ``prepare`` rewrote the text)."""

    id: str
    text: str
    problem: str | None = None
    offset: int = 0


class InputError(ValueError):
    """An input path that matches nothing, or a JSONL record without the text field."""


class _Unusable(InputError):
    """One document cannot be read as text (reported per document, not raised)."""


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
    """The text of ``path`` (``-``: stdin), gunzipped by suffix.

    Raises:
        _Unusable: unreadable, corrupt ``.gz``, or binary (holds NUL bytes).
    """
    if str(path) == "-":
        return sys.stdin.read()
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise _Unusable(f"{path}: cannot read: {exc}") from exc
    if b"\0" in raw[:8192]:
        raise _Unusable(f"{path}: binary file, not text")
    return raw.decode("utf-8", errors="replace")


def _is_jsonl(path: Path, fmt: str) -> bool:
    if fmt != "auto":
        return fmt == "jsonl"
    suffixes = path.suffixes
    return ".jsonl" in suffixes or ".ndjson" in suffixes


def _jsonl_records(path: Path, text_field: str, id_field: str) -> Iterator[Document]:
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
        yield Document(f"{path}#{rid if rid is not None else number}", record[text_field])


def iter_documents(
    specs: Sequence[str],
    *,
    fmt: str = "auto",
    text_field: str = "text",
    id_field: str = "id",
    prepare: Callable[[str], str] | None = None,
) -> Iterator[Document]:
    """Every document named by ``specs`` (files, globs, directories, ``-``).

    Args:
        fmt: ``auto`` (JSONL by suffix), ``text`` or ``jsonl``.
        text_field / id_field: JSONL record fields.
        prepare: applied to each text (e.g. keep a changelog's latest entry).
            Texts are never cut here: a cap is ``extract_many(max_chars=)``,
            which records it.

    Raises:
        InputError: a spec matches nothing, or a JSONL line is malformed
            (unreadable, binary and empty documents come out with a ``problem``).
    """
    for spec in specs:
        for path in _expand(spec):
            try:
                if _is_jsonl(path, fmt):
                    docs: Iterator[Document] = _jsonl_records(path, text_field, id_field)
                else:
                    text = _read(path)
                    doc_id = str(path) if str(path) != "-" else f"-#{_digest(text)}"
                    docs = iter([Document(doc_id, text)])
                for doc in docs:
                    yield _prepared(doc, prepare)
            except _Unusable as exc:
                yield Document(str(path), "", problem=str(exc))


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]


def _prepared(doc: Document, prepare: Callable[[str], str] | None) -> Document:
    text = prepare(doc.text) if prepare else doc.text
    if not text.strip():
        return Document(doc.id, text, problem=f"{doc.id}: empty document")
    offset = max(doc.text.find(text), 0) if text and not doc.text.startswith(text) else 0
    return Document(doc.id, text, offset=offset)
