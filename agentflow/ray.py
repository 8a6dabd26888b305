"""Extraction on a Ray cluster: a Ray Data pipeline (optional extra ``ray``).

    import ray
    from agentflow.ray import extract_dataset, read_documents, write_jsonl

    ray.init()                       # local; with RAY_ADDRESS set, that cluster
    docs = read_documents(["/data/contracts/*.txt"])       # columns id, text
    results = extract_dataset(docs, "schema.py:Contract", model="openai:gpt-4o-mini",
                              actors=8, concurrency=128)
    write_jsonl(results, "/data/out/")    # one CLI record per input, as JSON lines

Inputs: a ``ray.data.Dataset`` with an ``id`` and a ``text`` column (a str
each: a row whose text is null or binary gets an ``InvalidInputError`` record,
never the text ``"None"``; and,
optionally, ``problem``: why a document cannot be used, ``problem_type`` and
``reason`` (its error type and what to do), ``source_offset``, and ``pages``:
a PDF's page map as JSON text). ``read_documents`` builds one from paths,
globs, directories, ``.gz``, PDF, HTML and JSONL files (read in Ray tasks,
with the CLI's ids and decoding),
``read_jsonl`` / ``read_parquet`` from record files.

``extract_dataset`` is ``map_batches`` over an actor pool: each actor owns one
event loop, one model (so one HTTP session and one rate governor) and runs
``extract_many`` on each batch with its share of the concurrency, so validation,
grounding and chunking are the same as in one process. The output has columns
``id``, ``ok`` and ``record``: the JSON text of the CLI's record for that input
(``id, ok, output | error, spans, usage, attempts, duration_s, chunks,
truncated, source_offset, pages, span_pages``). ``write_jsonl`` writes the records as JSON lines
through Ray Data's file datasink; ``write_parquet`` is Ray Data's Parquet writer.

Fault tolerance is Ray's: actors are restarted and a batch whose actor died
is run again elsewhere (Ray Data's defaults for actor pools:
``max_restarts=-1``, ``max_task_retries=-1``); a batch's
output exists only once it has completed, so the written output holds one
record per input. Nothing here schedules, queues or retries on its own.

Rate limits across actors: every actor calls ``set_process_share(1 / actors)``,
so its governor uses an even share of each limit (and of each ``remaining``
header). A central Ray actor granting tokens would be exact, but it puts a
cross-process round trip in front of every request, is a single point of
failure for the whole job, and has to be kept alive through Ray's own
restarts; an even split needs no coordination, keeps each actor's admission
local, and since every actor runs the same kind of batch its share is what
it would be granted anyway. The price: a share left idle by a slow actor is
not lent to the others.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agentflow.batch import ExtractInput, extract_many
from agentflow.batch_types import not_text
from agentflow.documents.inputs import Document, _expand, iter_documents
from agentflow.documents.seen import SeenIds
from agentflow.ratelimit import set_process_share

if TYPE_CHECKING:
    import ray.data

__all__ = [
    "ExtractionSpec",
    "NotDone",
    "OutputDir",
    "done_ids",
    "extract_dataset",
    "read_documents",
    "read_jsonl",
    "read_output_dir",
    "read_parquet",
    "write_jsonl",
    "write_parquet",
]

ModelFactory = Callable[[], Any]
"""A zero-argument callable returning a ``ChatModel`` (called once per actor)."""


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError("agentflow.ray needs Ray Data: pip install 'agentflow[ray]'") from exc
    return ray


def _resolve(ref: Any) -> Any:
    """``ref`` itself, or the object a ``module:name`` / ``path.py:name`` string names."""
    if not isinstance(ref, str):
        return ref
    from agentflow.extraction.setup import load_schema

    return load_schema(ref)[0]


def _resolve_value(ref: str) -> Any:
    """The value a ``module:name`` / ``path.py:name`` string names (any value)."""
    from agentflow.extraction.setup import _load_module

    module_ref, _, name = ref.rpartition(":")
    return getattr(_load_module(module_ref), name)


def absolute_ref(ref: str) -> str:
    """``path.py:name`` with an absolute path (workers do not share the driver's cwd)."""
    module, sep, name = ref.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module):
        return f"{Path(module).resolve()}:{name}"
    if ref.endswith(".json"):
        return str(Path(ref).resolve())
    return ref


# ----------------------------------------------------------------------------- inputs


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
) -> ray.data.Dataset:
    """A Dataset of the documents ``specs`` name (files, globs, directories,
    ``.gz``, JSONL), as the ``extract`` command reads them.

    Globs are expanded here (file names only); the files are read and decoded
    in Ray tasks, so the paths must be visible to the workers (a local
    cluster, a shared file system).

    Args:
        fmt / text_field / id_field: as ``iter_documents``.
        prepare: applied to each text; a function, or a ``module:name`` /
            ``path.py:name`` reference (resolved in the workers).

    Returns:
        Columns ``id``, ``text``, ``problem`` (``None``, or why the document
        cannot be used), ``problem_type`` and ``reason`` (``""`` when none),
        ``source_offset``, ``pages`` (a PDF's page map as JSON text, else ``""``).

    Raises:
        InputError: a spec matches no file.
    """
    rt = _ray()
    files = [{"path": str(path), "problem": problem}
             for spec in ([specs] if isinstance(specs, str) else specs)
             for path, problem in _expand(spec)]
    prep = absolute_ref(prepare) if isinstance(prepare, str) else prepare

    def read(row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if row["problem"]:  # found while listing (a directory entry that cannot be read)
            yield _doc_row(Document(row["path"], "", problem=row["problem"]))
            return
        for doc in iter_documents([row["path"]], fmt=fmt, text_field=text_field,
                                  id_field=id_field, prepare=_resolve(prep)):
            yield _doc_row(doc)

    items = rt.data.from_items(files)
    dataset: ray.data.Dataset = items.flat_map(read)
    return dataset


def _records_to_docs(text_field: str, id_field: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def convert(row: dict[str, Any]) -> dict[str, Any]:
        text, rid = row.get(text_field), row.get(id_field)
        problem = None if isinstance(text, str) and text.strip() else (
            f"{rid}: no text in field {text_field!r}")
        return {"id": str(rid), "text": text if isinstance(text, str) else "",
                "problem": problem, "source_offset": 0}
    return convert


def read_jsonl(paths: str | Sequence[str], *, text_field: str = "text",
               id_field: str = "id") -> ray.data.Dataset:
    """A Dataset of JSONL records (Ray Data's JSON reader): columns ``id`` (the
    record's ``id_field`` as text), ``text``, ``problem``, ``source_offset``."""
    rt = _ray()
    dataset: ray.data.Dataset = rt.data.read_json(paths, lines=True).map(
        _records_to_docs(text_field, id_field))
    return dataset


def read_parquet(paths: str | Sequence[str], *, text_field: str = "text",
                 id_field: str = "id") -> ray.data.Dataset:
    """A Dataset of Parquet rows (Ray Data's Parquet reader; ``select_columns``,
    which Ray's planner pushes down into the read, so only the two columns are
    read): columns ``id``, ``text``, ``problem``, ``source_offset``."""
    rt = _ray()
    dataset: ray.data.Dataset = rt.data.read_parquet(paths).select_columns(
        [id_field, text_field]).map(_records_to_docs(text_field, id_field))
    return dataset


# ----------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class ExtractionSpec:
    """What each actor needs (pickled to the actors once).

    Attributes:
        output: the output type, or a ``module:Class`` / ``path.py:Class`` /
            ``schema.json`` reference resolved in the actor.
        model: ``"vendor:model"`` or a ``ModelFactory``.
        model_kwargs: given to the registry with a ``"vendor:model"`` (``base_url``,
            ``api_key``: never in a repr).
        instructions: the system prompt.
        concurrency: calls in flight per actor.
        actors: actors in the pool (each governor's share is ``1 / actors``).
        options: further ``extract_many`` keywords (``ground``, ``chunking``,
            ``passes``, ``allow_partial``, ``max_chars``, ``examples``: a
            list, or a ``module:name`` / ``path.py:name`` reference resolved
            in the actor).
    """

    output: Any
    model: str | ModelFactory
    model_kwargs: Mapping[str, Any] = field(default_factory=dict, repr=False)
    instructions: str | None = None
    concurrency: int = 8
    actors: int = 2
    options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, str] | None = None


class _Extractor:
    """One actor: one event loop, one model, ``extract_many`` per batch."""

    def __init__(self, spec: ExtractionSpec) -> None:
        set_process_share(1.0 / spec.actors)
        self.spec = spec
        self.loop = asyncio.new_event_loop()
        self.output = _resolve(spec.output)
        from agentflow.extraction.fingerprint import schema_fingerprint

        self.schema = schema_fingerprint(self.output)  # on every record: one output, one shape
        self.options = dict(spec.options)
        if isinstance(self.options.get("examples"), str):  # a reference, resolved here
            self.options["examples"] = _resolve_value(self.options["examples"])
        if isinstance(spec.model, str):
            from agentflow.model import resolve_model

            registry = importlib.import_module("agentflow.providers.registry")
            self.model = (registry.get_model(spec.model, **spec.model_kwargs)
                          if spec.model_kwargs else resolve_model(spec.model))
        else:
            self.model = spec.model()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        return self.loop.run_until_complete(self._run(batch))

    async def _run(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        from agentflow.extraction.records import _problem_record, _record

        ids = [str(x) for x in batch["id"]]
        texts = list(batch["text"])  # a str each; anything else is refused, never str()-ed
        problems = list(batch["problem"]) if "problem" in batch else [None] * len(ids)
        offsets = [int(x) for x in batch["source_offset"]] if "source_offset" in batch else (
            [0] * len(ids))
        def column(name: str) -> list[str]:
            return [str(x or "") for x in batch[name]] if name in batch else [""] * len(ids)

        problem_types, reasons, page_maps = column("problem_type"), column("reason"), [
            [tuple(p) for p in orjson.loads(x)] if x else None for x in column("pages")]
        ordered: list[dict[str, Any]] = [{} for _ in ids]
        usable: list[ExtractInput] = []
        rows: list[int] = []  # the batch row of each usable input
        for row, (rid, text, problem) in enumerate(zip(ids, texts, problems, strict=True)):
            if isinstance(problem, str) and problem:
                ordered[row] = _problem_record(Document(
                    rid, "", problem=problem, problem_type=problem_types[row] or None,
                    reason=reasons[row] or None))
            elif not isinstance(text, str):  # a null (None) or binary text column value
                ordered[row] = _problem_record(Document(
                    rid, "", problem=not_text(rid, text), problem_type="InvalidInputError"))
            else:
                usable.append(ExtractInput(rid, text))
                rows.append(row)
        async for result in extract_many(
            self.model, usable, self.output, concurrency=self.spec.concurrency,
            order="completed", instructions=self.spec.instructions, **self.options,
        ):
            row = rows[result.index]
            ordered[row] = _record(result, offsets[row], page_maps[row])
        for record in ordered:
            record["schema"] = self.schema
            if self.spec.settings is not None:
                record["settings"] = dict(self.spec.settings)
        return {"id": ids, "ok": [bool(r["ok"]) for r in ordered],
                "record": [orjson.dumps(r).decode() for r in ordered]}


def extract_dataset(
    ds: ray.data.Dataset,
    output: Any,
    *,
    model: str | ModelFactory = "local",
    api_key: str | None = None,
    base_url: str | None = None,
    instructions: str | None = None,
    actors: int = 2,
    concurrency: int = 16,
    batch_size: int | None = None,
    num_cpus: float = 0.5,
    settings: Mapping[str, str] | None = None,
    **options: Any,
) -> ray.data.Dataset:
    """Extract ``output`` from every row of ``ds`` on an actor pool (lazy: runs
    when the result is consumed or written).

    Args:
        ds: columns ``id`` and ``text`` (optional ``problem``, ``problem_type``,
            ``reason``, ``source_offset``, ``pages``).
        output: the output type, or a reference string (see ``ExtractionSpec``).
        model: ``"vendor:model"`` or a zero-argument factory called in each actor.
        api_key / base_url: for a ``"vendor:model"`` (default: the vendor's).
        actors: actors in the pool (>= 1).
        concurrency: calls in flight in all actors together (>= actors); each
            actor runs ``ceil(concurrency / actors)``.
        batch_size: rows per batch (default: 4 x the per-actor concurrency).
        num_cpus: CPUs each actor reserves (default 0.5: an actor mostly waits
            on the network, and the read tasks upstream need CPUs too).
        settings: stamped on every record as ``"settings"``
            (``agentflow.extraction.settings_fingerprint``; ``None``: not stamped).
        options: ``extract_many`` keywords (``ground``, ``chunking``, ...).

    Returns:
        A Dataset with columns ``id``, ``ok`` and ``record`` (the CLI record's JSON).

    Raises:
        ValueError: ``actors`` < 1 or ``concurrency`` < ``actors``.
    """
    if actors < 1:
        raise ValueError(f"actors must be >= 1, got {actors}")
    if concurrency < actors:
        raise ValueError(f"concurrency ({concurrency}) must be >= actors ({actors})")
    per_actor = math.ceil(concurrency / actors)
    kwargs = {k: v for k, v in (("api_key", api_key), ("base_url", base_url)) if v}
    spec = ExtractionSpec(
        output=absolute_ref(output) if isinstance(output, str) else output, model=model,
        model_kwargs=kwargs, instructions=instructions, concurrency=per_actor, actors=actors,
        options=options, settings=settings)
    pool = _ray().data.ActorPoolStrategy(size=actors)
    return ds.map_batches(
        _Extractor, fn_constructor_kwargs={"spec": spec}, compute=pool,
        batch_size=batch_size or 4 * per_actor, batch_format="numpy", num_cpus=num_cpus,
    )  # Ray Data's actor pools restart actors and retry their batches (max_restarts=-1,
    # max_task_retries=-1 by default): that is the fault tolerance


# ----------------------------------------------------------------------------- outputs


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


@dataclass
class OutputDir:
    """What a directory of ``write_jsonl`` files holds (``read_output_dir``).

    Attributes:
        done: ids of the inputs with an ok record (failed inputs are not
            done), in a ``SeenIds`` (``agentflow.documents.seen``: constant
            memory, whatever the number of ids).
        schemas: schema fingerprint -> records carrying it (``"schema"``, which
            every record of ``extract_dataset`` carries:
            ``agentflow.extraction.fingerprint``; older records without one are
            not counted).
        files: ``(path, size in bytes)`` of each file read, in order: what
            ``NotDone`` reads again in Ray's workers.
        settings: the distinct ``"settings"`` of the records, each with its
            count (``agentflow.extraction.outfile.count_settings``).
    """

    done: SeenIds = field(default_factory=SeenIds)
    schemas: dict[str, int] = field(default_factory=dict)
    files: tuple[tuple[str, int], ...] = ()
    settings: dict[str, tuple[dict[str, str], int]] = field(default_factory=dict)


def read_output_dir(path: str | os.PathLike[str]) -> OutputDir:
    """Read every ``*.jsonl`` file under the directory ``path`` once (a torn
    line is skipped; a missing directory holds nothing). Ray names its files
    at random, so file order says nothing of which run came last: one ok
    record is enough for an id to be done."""
    root = Path(path)
    held = OutputDir()
    files = []
    for file in sorted(root.glob("*.jsonl")) if root.is_dir() else ():
        files.append((str(file), file.stat().st_size))
        _read_done(file, held.done, held.schemas, held.settings)
    held.files = tuple(files)
    return held


def _read_done(file: Path, done: SeenIds, schemas: dict[str, int] | None = None,
               settings: dict[str, tuple[dict[str, str], int]] | None = None) -> None:
    """Add the id of each ok record of ``file`` (``read_records``) to ``done``
    and, with ``schemas``, count each record's schema fingerprint there (with
    ``settings``, its settings: ``count_settings``)."""
    from agentflow.extraction.outfile import count_settings, read_records

    for _, record in read_records(file):
        if record.get("ok") is True:
            done.setdefault(record["id"], None)
        schema = record.get("schema")
        if schemas is not None and isinstance(schema, str):
            schemas[schema] = schemas.get(schema, 0) + 1
        if settings is not None:
            count_settings(record, settings)


@dataclass(frozen=True)
class NotDone:
    """A Ray Data row filter (``Dataset.filter``): the rows whose ``id`` has
    no ok record in the output files ``files`` (``OutputDir.files``, as the
    driver read them).

    What goes to the workers is the file list, not the ids: each worker
    process reads those files once into a ``SeenIds`` of its own (constant
    memory; kept for the next rows and blocks of the same run), so neither
    the driver nor a worker holds a set that grows with the corpus. The
    workers write the output directory, so they can read it too.
    """

    files: tuple[tuple[str, int], ...]

    def __call__(self, row: Mapping[str, Any]) -> bool:
        with _DONE_LOCK:  # a SeenIds serves one thread at a time
            return row["id"] not in _done_in(self.files)


_DONE: dict[tuple[tuple[str, int], ...], SeenIds] = {}
"""The worker process's done ids, for the one file list it last read."""
_DONE_LOCK = threading.Lock()


def _done_in(files: tuple[tuple[str, int], ...]) -> SeenIds:
    """The done ids of ``files`` (read now, or kept from the last call); lock held."""
    done = _DONE.get(files)
    if done is None:
        for old in _DONE.values():  # another run's files: not needed any more
            old.close()
        _DONE.clear()
        done = _DONE[files] = SeenIds()
        for name, _ in files:
            _read_done(Path(name), done)
    return done


def done_ids(path: str | os.PathLike[str]) -> set[str]:
    """Ids of the inputs with an ok record in any ``*.jsonl`` file under the
    directory ``path``, as a ``set`` in memory (``read_output_dir(path).done``
    holds them in constant memory)."""
    return {key for key, _ in read_output_dir(path).done.items()}
