"""The Ray engine's inputs: Datasets of documents (``read_documents``: files,
globs, directories, ``.gz``, PDF, HTML and JSONL, read in Ray tasks with the
CLI's ids and decoding) and of records (``read_jsonl``, ``read_parquet``),
each with the columns ``extract_dataset`` reads."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agentflow.documents.inputs import Document, iter_documents
from agentflow.ray._listing import input_listing
from agentflow.ray._refs import absolute_ref, ray_module, resolve

if TYPE_CHECKING:
    import ray.data

__all__ = ["read_documents", "read_jsonl", "read_parquet"]


def _doc_row(doc: Document) -> dict[str, Any]:
    return {"id": doc.id, "text": doc.text, "problem": doc.problem, "source_offset": doc.offset,
            "problem_type": doc.problem_type or "", "reason": doc.reason or "",
            "pages": orjson.dumps(doc.pages).decode() if doc.pages is not None else ""}


def read_documents(
    specs: str | Sequence[str],
    *,
    fmt: str = "auto",
    text_field: str = "text",
    id_field: str = "id",
    prepare: Callable[[str], str] | str | None = None,
    exclude: str | os.PathLike[str] | None = None,
    on_exclude: Callable[[Path], None] | None = None,
    on_skip: Callable[[Path, str], None] | None = None,
) -> ray.data.Dataset:
    """A Dataset of the documents ``specs`` name (files, globs, directories,
    ``.gz``, JSONL), as the ``extract`` command reads them.

    What the specs name is listed lazily in a Ray task as the pipeline runs
    (``agentflow.ray._listing``: never all listed up front); the files are read
    and decoded in Ray tasks, so the paths must be visible to the workers (a
    local cluster, a shared file system).

    Args:
        fmt / text_field / id_field: as ``iter_documents``.
        prepare: applied to each text; a function, or a ``module:name`` /
            ``path.py:name`` reference (resolved in the workers).
        exclude: a folder whose files are never inputs (the run's output
            folder, met through a link in an input folder), each one left out
            told to ``on_exclude``: records are never read back as documents.
        on_skip: told each entry left out on purpose and why (a link to a folder
            met in a walk: ``agentflow.documents.listing``).
        on_exclude and on_skip are called on the driver by ``tell_listing_notes()``
        once the pipeline has run (the listing runs in a task).

    Returns:
        Columns ``id``, ``text``, ``problem`` (``None``, or why the document
        cannot be used), ``problem_type`` and ``reason`` (``""`` when none),
        ``source_offset``, ``pages`` (a PDF's page map as JSON text, else ``""``).

    Raises:
        InputError: a spec matches no file.
    """
    rt = ray_module()
    listing = input_listing([specs] if isinstance(specs, str) else list(specs),
                            exclude=exclude, on_exclude=on_exclude, on_skip=on_skip)
    prep = absolute_ref(prepare) if isinstance(prepare, str) else prepare

    def read(row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if row["problem"]:  # found while listing (a directory entry that cannot be read)
            yield _doc_row(Document(row["path"], "", problem=row["problem"]))
            return
        for doc in iter_documents([row["path"]], fmt=fmt, text_field=text_field,
                                  id_field=id_field, prepare=resolve(prep)):
            yield _doc_row(doc)

    dataset: ray.data.Dataset = rt.data.read_datasource(listing).flat_map(read)
    return dataset


def _records_to_docs(text_field: str, id_field: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def convert(row: dict[str, Any]) -> dict[str, Any]:
        text, rid = row.get(text_field), row.get(id_field)
        body = text if isinstance(text, str) else ""
        if rid is None or rid != rid:  # null (NaN in a batch Ray filled): named by its text
            doc_id = f"#{hashlib.sha1(body.encode(errors='surrogatepass')).hexdigest()[:12]}"
            problem: str | None = (f"{doc_id}: no id in field {id_field!r} (ids key the "
                                   "results and the resume: give each record one)")
        else:
            doc_id = str(rid)
            problem = None if body.strip() else f"{doc_id}: no text in field {text_field!r}"
        return {"id": doc_id, "text": body, "problem": problem, "source_offset": 0}
    return convert


def read_jsonl(paths: str | Sequence[str], *, text_field: str = "text",
               id_field: str = "id") -> ray.data.Dataset:
    """A Dataset of JSONL records (Ray Data's JSON reader): columns ``id`` (the
    record's ``id_field`` as text), ``text``, ``problem``, ``source_offset``.
    A record with no ``id_field`` (null, or NaN where Ray filled the gap) is
    a ``problem`` row whose ``id`` is ``#`` and a digest of its text: Ray's
    reader gives no line number to key it by, and such records must not all
    share one id (``"None"``, ``"nan"``)."""
    rt = ray_module()
    dataset: ray.data.Dataset = rt.data.read_json(paths, lines=True).map(
        _records_to_docs(text_field, id_field))
    return dataset


def read_parquet(paths: str | Sequence[str], *, text_field: str = "text",
                 id_field: str = "id") -> ray.data.Dataset:
    """A Dataset of Parquet rows (Ray Data's Parquet reader; ``select_columns``,
    which Ray's planner pushes down into the read, so only the two columns are
    read): columns ``id``, ``text``, ``problem``, ``source_offset``."""
    rt = ray_module()
    dataset: ray.data.Dataset = rt.data.read_parquet(paths).select_columns(
        [id_field, text_field]).map(_records_to_docs(text_field, id_field))
    return dataset
