"""``agentflow extract`` itself: set-up checks, the documents a run reads,
the extraction (live, batch, or on Ray) and its summary line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

from agentflow.batch import ExtractInput, UniqueIds, extract_many
from agentflow.batch_api.cost import usage_summary
from agentflow.batch_api.journal import journal_path
from agentflow.batch_api.runner import BatchSettings
from agentflow.cli.input_done import Reach, Settle
from agentflow.cli.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_INSTRUCTIONS,
    CliError,
    chunking_for,
    run_settings_of,
)
from agentflow.cli.out_file import inputs_but_out, open_for_run
from agentflow.cli.plan import model_of, plan_of
from agentflow.cli.progress import Progress
from agentflow.cli.workers import WorkItem, check_workers, extract_in_workers
from agentflow.content import DocumentBlock
from agentflow.documents.deferred import DeferredDocument
from agentflow.documents.inputs import Document, prepared
from agentflow.documents.named import check_named
from agentflow.documents.names import printable
from agentflow.documents.readahead import PdfDelivery, read_ahead
from agentflow.documents.routing import pdf_delivery
from agentflow.documents.seen import MISSING
from agentflow.errors import AgentflowError
from agentflow.errors.run_wide import run_wide
from agentflow.extraction.budget import Chunking
from agentflow.extraction.fingerprint import schema_fingerprint
from agentflow.extraction.records import RecordSink, is_transient, problem_record
from agentflow.extraction.settings_fingerprint import settings_fingerprint
from agentflow.extraction.setup import (
    SetupError,
    check_api_key,
    check_batch_mode,
)
from agentflow.extraction.targets import check_new_files
from agentflow.grounding import grounding_plan
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import learn_locators
from agentflow.model import Usage

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_INSTRUCTIONS", "CliError", "_extract", "chunking_for"]

async def _extract(args: argparse.Namespace, sink: RecordSink) -> int:
    plan = plan_of(args)  # set-up first: nothing is asked before
    output_type, module = plan.output_type, plan.module
    instructions, prepare, max_chars = plan.instructions, plan.prepare, plan.max_chars
    examples, chunking = plan.examples, plan.chunking
    if examples is not None:  # what the examples taught, said once before any request
        for line in learned_lines(learn_locators(plan.checked, output_type), plan.checked,
                                  output_type):
            print(f"agentflow: {printable(line)}", file=sys.stderr)
    check_workers(args)  # what the flags alone refuse, before the key is looked for
    check_api_key(args.model, api_key=args.api_key, base_url=args.base_url)
    check_batch_mode(None, args.mode, args.engine)
    check_named(args.input, args.format)  # an empty folder, a glob matching nothing...
    if args.engine == "ray":  # the same flags on a Ray cluster (agentflow/cli/ray.py)
        from agentflow.cli.ray import run as run_on_ray

        return await asyncio.to_thread(run_on_ray, args, module, instructions, max_chars)
    model = model_of(args)
    try:
        check_batch_mode(model, args.mode)
        sink.schema = schema_fingerprint(output_type)
        sink.settings = {**settings_fingerprint(output_type, module),
                         **run_settings_of(args, instructions, max_chars, chunking)}
        if args.out and args.out != "-":
            sink.out = open_for_run(args, sink.schema, sink.settings)
            if args.mode != "live":  # the journal is made beside it before a batch is sent
                check_new_files(sink.out.path.parent, f"--mode {args.mode}: the batch journal "
                                f"{printable(str(journal_path(args.out)))}")
        return await _extract_into(args, sink, model, output_type, instructions, prepare,
                                   max_chars, examples, chunking)
    except BaseException:
        if sink.out is not None:  # a set-up error (exit 2) or an interruption before
            sink.out.discard()    # any record: a file this run created goes again
        raise
    finally:
        if sink.out is not None:
            sink.out.close()
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()


async def _extract_into(
    args: argparse.Namespace, sink: RecordSink, model: Any, output_type: Any, instructions: str,
    prepare: Any, max_chars: int | None, examples: Any = None, chunking: Chunking | None = None,
) -> int:
    outcomes = sink.out.outcomes if sink.out is not None else None
    before = [0, 0]  # inputs skipped: done in an earlier run, and of them failed

    def done_before(doc_id: str) -> bool:
        """Whether ``--out`` holds ``doc_id``'s record and it is not to be tried
        again (ok; or failed, not transiently, without ``--retry-failed``)."""
        if not outcomes:
            return False
        error = outcomes.get(doc_id)
        if error is MISSING or not (error is None or not (args.retry_failed
                                                          or is_transient(str(error)))):
            return False
        before[0] += 1
        before[1] += error is not None
        return True

    reads_pdf = "pdf" in model.profile.input_modalities

    def deliver(has_text: bool) -> str:
        return pdf_delivery(args.pdf, model_reads_pdf=reads_pdf, has_text=has_text)

    if deliver(True) == "unsupported":
        raise SetupError(f"--pdf document: model {args.model!r} does not read PDF documents "
                         "(see 'agentflow models'); use --pdf auto or --pdf text")
    concurrency = args.concurrency or model.profile.concurrent_requests or DEFAULT_CONCURRENCY
    check_workers(args, concurrency)
    progress = Progress(None, sys.stderr)
    # a scan sent as a PDF has no text to point into: Grounded() fields cannot be
    # (the default grounding of every string does not apply to a document without text)
    grounds = _grounds(output_type, False)
    # what each input's record needs besides its result, kept only while it is in flight
    sent_as: dict[str, str] = {}
    offsets: dict[str, int] = {}
    pages: dict[str, Any] = {}

    def problem(doc: Document) -> None:
        print(f"agentflow: skipped {printable(doc.problem or '')}", file=sys.stderr)
        record = problem_record(doc)
        sink.write(record)
        progress.add(record)

    not_followed = [0]  # links to folders met in a walk (said when met and in the summary)

    def skip(_path: Path, why: str) -> None:  # (from the reader's thread)
        not_followed[0] += 1
        print(f"agentflow: skipped {printable(why)}", file=sys.stderr, flush=True)

    async def inputs() -> AsyncIterator[ExtractInput]:
        """The documents to extract from, read as slots free up; the unusable
        ones are recorded here, as they are met."""
        taken = 0
        async with contextlib.aclosing(read_ahead(
                args.input, fmt=args.format, text_field=args.text_field,
                id_field=args.id_field, deliver=PdfDelivery(args.pdf, reads_pdf),
                ahead=concurrency, on_skip=skip, **inputs_but_out(sink.out))) as docs:
            async for raw in docs:
                if done_before(raw.id):
                    continue
                if args.limit is not None and taken >= args.limit:
                    break
                taken += 1
                doc = prepared(raw, prepare)
                if grounds and doc.data is not None and not doc.text.strip():
                    doc = _ungroundable(doc)  # a scan sent as a PDF has no text to point into
                if doc.problem:
                    problem(doc)
                    continue
                if doc.data is not None:
                    sent_as[doc.id] = "document+text" if doc.text.strip() else "document"
                if doc.offset:
                    offsets[doc.id] = doc.offset
                if doc.pages is not None:
                    pages[doc.id] = doc.pages
                yield ExtractInput(doc.id, doc.text, _media(doc))
        progress.total = taken  # every input is known now: the line shows the share done

    start = time.perf_counter()
    usage, batch_usage = Usage(), [Usage()]
    faults: dict[str, int] = {}
    try:
        results, settle = _done(args, model, inputs(), output_type, concurrency, instructions,
                                chunking, max_chars, examples, progress, batch_usage, offsets,
                                pages)
        async with (_stops_the_run() if settle is not None else contextlib.nullcontext(),
                    contextlib.aclosing(results) as finished):
            reach = Reach()  # a request went through: later connection faults are transient
            async for one in finished:
                if settle is not None:  # extract_many's result, read here: no generator
                    # layer between it and this loop
                    one = settle(one, offsets.pop(one.id, 0), pages.pop(one.id, None))
                if (stop := reach.stop(one)) is not None:
                    raise SetupError(stop)
                record = one.record
                if one.id in sent_as:  # the model read the PDF itself
                    record["sent_as"] = sent_as.pop(one.id)
                sink.write(record)
                progress.add(record)
                if one.fault:
                    faults[one.fault] = faults.get(one.fault, 0) + 1
                usage = usage + one.usage
    finally:
        progress.close()
    if sink.out is not None and sink.out.superseded:
        try:  # one record per id: the retried ones replace their failures
            sink.out.compact()
        except OSError as exc:
            print(f"agentflow: {printable(str(sink.out.path))} not compacted "
                  f"({exc.strerror}); when it is read, the newest record of each id wins",
                  file=sys.stderr)
    elapsed = time.perf_counter() - start
    counts = progress.counts
    skipped = f", {before[0]} already done" if before[0] else ""
    if before[1]:
        skipped += f" ({before[1]} of them failed: --retry-failed tries them again)"
    if not_followed[0]:
        n = not_followed[0]
        skipped += f", {n} link{'s' * (n != 1)} to a folder not followed"
    failed = counts["failed"]  # suspect ones included: the progress line counts alike
    apart = ", ".join(f"{n} {name}" for name, n in sorted(faults.items()))
    tokens = usage_summary(model, usage, batch_usage[0])  # and the cost, where prices are known
    done = counts["ok"] + failed
    rate = f" ({done / elapsed * 60:.1f} documents/min{_engine(model, args.workers)})" if (
        done and elapsed > 0) else ""
    print(f"{counts['ok']} ok, {failed} failed{f' ({apart})' if apart else ''}{skipped}"
          f"{progress.review_note()}; {tokens}; {elapsed:.1f}s{rate}"
          f"{f' -> {printable(str(sink.out.path))}' if sink.out else ''}",
          file=sys.stderr)
    return 1 if failed else 0


def _done(
    args: argparse.Namespace, model: Any, inputs: AsyncIterator[ExtractInput], output_type: Any,
    concurrency: int, instructions: str, chunking: Chunking | None, max_chars: int | None,
    examples: Any, progress: Progress, batch_usage: list[Usage], offsets: dict[str, int],
    pages: dict[str, Any],
) -> tuple[AsyncGenerator[Any, None], Settle | None]:
    """The inputs' results as they complete, and how each becomes its
    ``InputDone``: ``extract_many``'s ``ExtractResult``s in this process with
    the ``Settle`` to apply to each (together with its ``offsets`` and
    ``pages`` entries, popped) under ``_stops_the_run``; or, under
    ``--workers``, the ``InputDone``s of the worker processes
    (``agentflow.cli.workers``) and ``None``. Nothing runs until the
    generator is first read."""
    if args.workers > 1:
        async def items() -> AsyncIterator[WorkItem]:
            async for item in inputs:
                yield WorkItem(item, offsets.pop(item.id, 0), pages.pop(item.id, None))

        return extract_in_workers(args, items(), workers=args.workers,
                                  concurrency=concurrency), None
    return extract_many(
        # ids are unique by construction (each file once, each JSONL id once per file)
        model, UniqueIds(inputs), output_type, concurrency=concurrency, order="completed",
        instructions=instructions, chunking=chunking, passes=args.passes,
        allow_partial=args.allow_partial, max_chars=max_chars,
        ground=not getattr(args, "no_ground", False), on_progress=progress.chunk,
        mode=args.mode, batch=_batch_settings(args, batch_usage), examples=examples,
    ), Settle(model, args.base_url)


@contextlib.asynccontextmanager
async def _stops_the_run() -> AsyncIterator[None]:
    """The fault ``extract_many`` stops at (the run's, not one input's:
    ``run_wide``) as the set-up error it is here (exit 2, naming its type)."""
    try:
        yield
    except AgentflowError as exc:
        if run_wide(exc) is not exc:
            raise
        raise SetupError(f"{type(exc).__name__}: {exc}") from exc


def _engine(model: Any, workers: int = 1) -> str:
    """`` on N threads, M slots`` for the embedded model, `` in N worker
    processes`` under ``--workers`` (what the rate depends on)."""
    if workers > 1:
        return f" in {workers} worker processes"
    threads, slots = getattr(model, "threads", None), getattr(model, "parallel", None)
    if not isinstance(threads, int) or not isinstance(slots, int):
        return ""
    return f" on {threads} thread{'s' * (threads != 1)}, {slots} slot{'s' * (slots != 1)}"


def _grounds(output_type: Any, ground: bool) -> bool:
    """Whether extraction grounds values in the text (the default, or a ``Grounded()``
    field under ``--no-ground``); a schema whose markers are wrong fails later, at its
    first call."""
    if ground:
        return True
    try:
        return grounding_plan(output_type)
    except Exception:
        return False


def _ungroundable(doc: Document) -> Document:
    """A scanned PDF for a grounded schema: a failed record, before any request."""
    return dataclasses.replace(
        doc, data=None, problem=f"{doc.id}: PDF without a text layer; grounded fields need one",
        problem_type="NoTextLayerError",
        reason="the model could read the scanned pages, but a grounded value must be found in "
               "the document's text and this PDF has none; run OCR on it first (e.g. "
               "ocrmypdf), or extract with a schema without Grounded() fields and no --ground")


def _media(doc: Document) -> tuple[DocumentBlock | DeferredDocument, ...]:
    """The PDF itself as a document block, when it goes to the model that way (a
    file: read when its input is sent, ``agentflow.documents.deferred``)."""
    if doc.data is None:
        return ()
    if isinstance(doc.data, DeferredDocument):
        return (doc.data,)
    name = "document.pdf" if doc.id.startswith("-#") else Path(doc.id).name
    return (DocumentBlock.from_bytes(doc.data, "application/pdf", filename=name),)


def _batch_settings(args: argparse.Namespace, batch_usage: list[Usage]) -> BatchSettings:
    """The batch mode's settings: the journal beside ``--out``, progress lines on
    stderr, the batch replies' usage summed into ``batch_usage[0]``."""
    journal = str(journal_path(args.out)) if args.out and args.out != "-" else None
    if journal is None and args.mode != "live":
        print(f"agentflow: warning: --mode {args.mode} without --out FILE keeps no batch journal: "
              "batches of an interrupted run cannot be resumed, and a rerun pays for them again",
              file=sys.stderr)

    def add(u: Usage) -> None:
        batch_usage[0] = batch_usage[0] + u

    return BatchSettings(batch_only=args.batch_only, journal=journal, on_usage=add,
                         poll_initial=args.batch_poll, poll_max=max(args.batch_poll, 300.0),
                         on_progress=lambda p: print(f"agentflow: {p.line()}", file=sys.stderr))
