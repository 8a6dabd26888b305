"""Extraction on a Ray cluster: a Ray Data pipeline (optional extra ``ray``).

    import ray
    from agentflow.ray import extract_dataset, read_documents, write_jsonl

    ray.init()                       # local; with RAY_ADDRESS set, that cluster
    docs = read_documents(["/data/contracts/*.txt"])       # columns id, text
    results = extract_dataset(docs, "schema.py:Contract", model="vendor:model",
                              actors=8, concurrency=128)
    write_jsonl(results, "/data/out/")    # one CLI record per input, as JSON lines

Inputs: a ``ray.data.Dataset`` with an ``id`` and a ``text`` column (a str
each: a row whose text is null or binary gets an ``InvalidInputError`` record,
never the text ``"None"``; and,
optionally, ``problem``: why a document cannot be used, ``problem_type`` and
``reason`` (its error type and what to do), ``source_offset``, and ``pages``:
a PDF's page map as JSON text). ``read_documents`` builds one from paths,
globs, directories, ``.gz``, PDF, HTML and JSONL files (read in Ray tasks,
with the CLI's ids and decoding, each under the work budget in a worker
process: ``_reading``; standard input on the driver),
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
The engine's parts: ``_inputs`` (Datasets of documents and of records),
``_extract`` (the actor pool), ``_outputs`` (writing the records),
``_listing`` (the inputs listed lazily, in a read task), ``_reading`` (each
input read under the work budget), ``_resume`` (what
an output directory already holds), ``refs`` (Ray itself, and references
resolved in the workers; public, since ``agentflow extract --engine ray``
uses it too).
"""

from __future__ import annotations

from agentflow.ray._extract import ExtractionSpec, extract_dataset
from agentflow.ray._inputs import read_documents, read_jsonl, read_parquet
from agentflow.ray._listing import tell_listing_notes
from agentflow.ray._outputs import write_jsonl, write_parquet
from agentflow.ray._resume import NotDone, OutputDir, done_ids, read_output_dir

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
    "tell_listing_notes",
    "write_jsonl",
    "write_parquet",
]
