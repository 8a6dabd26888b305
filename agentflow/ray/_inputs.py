"""The Ray engine's inputs: Datasets of documents (``read_documents``: files,
globs, directories, ``.gz``, PDF, HTML and JSONL, read in Ray tasks with the
CLI's ids, decoding and work budget: ``agentflow.ray._reading``) and of
records (``read_jsonl``, ``read_parquet``), each with the columns
``extract_dataset`` reads."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget, over_budget
from agentflow.documents.reading import InputError
from agentflow.ray._listing import input_listing
from agentflow.ray._reading import read_batch, read_stdin
from agentflow.ray.refs import absolute_ref, ray_module, resolve

if TYPE_CHECKING:
    import ray.data

__all__ = ["read_documents", "read_jsonl", "read_parquet"]


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
    budget: WorkBudget = DEFAULT_BUDGET,
) -> ray.data.Dataset:
    """A Dataset of the documents ``specs`` name (files, globs, directories,
    ``.gz``, JSONL), as the ``extract`` command reads them.

    What the specs name is listed lazily in a Ray task as the pipeline runs
    (``agentflow.ray._listing``: never all listed up front); the files are read
    and decoded in Ray tasks, so the paths must be visible to the workers (a
    local cluster, a shared file system). Each is read under ``budget``, its
    CPU and memory limits included, in a worker process the task starts
    (``agentflow.ray._reading``): past a limit, a failed row
    (``DocumentTooComplexError`` naming it), and the other inputs go on.
    ``-`` is standard input: read on the driver when this is called, as one
    document, under the same budget.

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
        budget: what one document may cost to read (``agentflow.documents.budget``).

    Returns:
        Columns ``id``, ``text``, ``problem`` (``None``, or why the document
        cannot be used), ``problem_type`` and ``reason`` (``""`` when none),
        ``source_offset``, ``pages`` (a PDF's page map as JSON text, else ``""``).

    Raises:
        InputError: a spec matches no file, or ``-`` with ``fmt`` ``jsonl``
            (standard input is read on the driver, as one document).
    """
    names = [specs] if isinstance(specs, str) else list(specs)
    prep = absolute_ref(prepare) if isinstance(prepare, str) else prepare
    files = [name for name in names if name != "-"]
    if len(files) < len(names) and fmt == "jsonl":
        raise InputError("read_documents reads standard input (-) on the driver, as one "
                         "document: JSONL records there would all be held at once; save "
                         "them to a file the workers can read")
    rt = ray_module()
    listing = (input_listing(files, exclude=exclude, on_exclude=on_exclude, on_skip=on_skip)
               if files or not names else None)  # (a spec matching nothing: before stdin)
    # the driver's standard input (a task's is not the user's): read here, under the same budget
    stdin = (read_stdin(fmt=fmt, prepare=resolve(prep), budget=budget)
             if len(files) < len(names) else None)
    if listing is None and stdin is not None:
        return stdin

    def read(batch: Any) -> Iterator[Any]:
        yield from read_batch(batch, fmt=fmt, text_field=text_field, id_field=id_field,
                              prepare=resolve(prep), budget=budget)

    # a block of the listing at a time: one reader (and worker process) per block
    dataset: ray.data.Dataset = rt.data.read_datasource(listing).map_batches(
        read, batch_size=None, batch_format="pyarrow")
    return dataset.union(stdin) if stdin is not None else dataset


def _records_to_docs(text_field: str, id_field: str, budget: WorkBudget
                     ) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def convert(row: dict[str, Any]) -> dict[str, Any]:
        text, rid = row.get(text_field), row.get(id_field)
        body = text if isinstance(text, str) else ""
        kind = reason = ""
        if rid is None or rid != rid:  # null (NaN in a batch Ray filled): named by its text
            doc_id = f"#{hashlib.sha1(body.encode(errors='surrogatepass')).hexdigest()[:12]}"
            problem: str | None = (f"{doc_id}: no id in field {id_field!r} (ids key the "
                                   "results and the resume: give each record one)")
        else:
            doc_id = str(rid)
            problem = None if body.strip() else f"{doc_id}: no text in field {text_field!r}"
        if problem is None and budget.chars is not None and len(body) > budget.chars:
            exc = over_budget(doc_id, "chars", len(body), budget.chars)  # as a file's text
            problem, kind, reason, body = str(exc), type(exc).__name__, exc.reason or "", ""
        return {"id": doc_id, "text": body, "problem": problem, "source_offset": 0,
                "problem_type": kind, "reason": reason}
    return convert


def read_jsonl(paths: str | Sequence[str], *, text_field: str = "text", id_field: str = "id",
               budget: WorkBudget = DEFAULT_BUDGET) -> ray.data.Dataset:
    """A Dataset of JSONL records (Ray Data's JSON reader): columns ``id`` (the
    record's ``id_field`` as text), ``text``, ``problem``, ``problem_type``,
    ``reason``, ``source_offset``. A text past ``budget``'s ``chars`` is a
    ``problem`` row (``DocumentTooComplexError``), as a file's would be.
    A record with no ``id_field`` (null, or NaN where Ray filled the gap) is
    a ``problem`` row whose ``id`` is ``#`` and a digest of its text: Ray's
    reader gives no line number to key it by, and such records must not all
    share one id (``"None"``, ``"nan"``)."""
    rt = ray_module()
    dataset: ray.data.Dataset = rt.data.read_json(paths, lines=True).map(
        _records_to_docs(text_field, id_field, budget))
    return dataset


def read_parquet(paths: str | Sequence[str], *, text_field: str = "text", id_field: str = "id",
                 budget: WorkBudget = DEFAULT_BUDGET) -> ray.data.Dataset:
    """A Dataset of Parquet rows (Ray Data's Parquet reader; ``select_columns``,
    which Ray's planner pushes down into the read, so only the two columns are
    read): the columns of ``read_jsonl``, each text within ``budget``'s ``chars``."""
    rt = ray_module()
    dataset: ray.data.Dataset = rt.data.read_parquet(paths).select_columns(
        [id_field, text_field]).map(_records_to_docs(text_field, id_field, budget))
    return dataset
