"""The ``agentflow`` command.

    agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz' --limit 20 --out results.jsonl
    agentflow report results.jsonl -o review.html \\
        --schema examples/debian_changelog.py:ChangelogEntry
    agentflow models
    agentflow --version

``extract`` writes one JSON line per input (``id``, ``ok``, ``output`` or
``error`` ``{type, message, reason?}``, ``spans`` of grounded values,
``source_offset`` when ``prepare`` cut a prefix, ``pages`` and ``span_pages`` for a
PDF (``agentflow.documents.pages``), ``usage``, ``attempts``,
``duration_s``, ``chunks`` for a long document, ``truncated``), appends to
``--out`` (locked; ``_outfile``) and skips inputs already there, shows a
progress line (``_progress``: documents, and chunks of long ones), prints a
summary, and exits 1 if any input failed. Bad set-up (``_setup``: schema, API
key, ``--out``) exits 2 before any request.

Documents longer than the model's context window are split into chunks and
merged, never cut; a cap (``--max-chars`` or the schema module's
``MAX_CHARS``) still cuts, and the record says so in ``truncated``.

``--mode batch`` (or ``auto``) sends first requests through the vendor's batch
API at about half price (``agentflow.batch_api``), journalled in
``OUT.batches.json`` so a rerun resumes the same batches; the summary adds the
batch tokens and, with ``genai-prices``, the estimated cost.

A schema module may define ``INSTRUCTIONS`` (the system prompt),
``prepare(text) -> text`` (applied to each document), ``MAX_CHARS``,
``EXAMPLES`` (few-shot ``Example``s, ``agentflow.extraction.examples``;
checked against the schema before any request) and
``CHUNKING`` (a ``Chunking``: e.g. ``Chunking(items="entries")`` reads a long
document item by item; ``--items FIELD`` does the same from the command line)
and ``PASSES`` (extraction passes per document, ``--passes``;
``agentflow.extraction.recall``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import itertools
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from agentflow import __version__, errors
from agentflow._inputs import FORMATS, Document, InputError, iter_documents
from agentflow._outfile import OutFile, open_out, waiting_notice
from agentflow._progress import SUSPECT_LABELS, Progress
from agentflow._secrets import mask_secrets, mask_value
from agentflow._setup import SetupError, check_api_key, check_batch_mode, load_schema
from agentflow.batch import ExtractInput, ExtractResult, extract_many
from agentflow.batch_api.cost import usage_summary
from agentflow.batch_api.journal import journal_path
from agentflow.batch_api.runner import BatchSettings
from agentflow.content import DocumentBlock
from agentflow.deferred import DeferredDocument
from agentflow.documents.pages import span_pages
from agentflow.documents.routing import PDF_MODES, pdf_delivery
from agentflow.errors import AgentflowError, InvalidExampleError
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.chunked import check_items
from agentflow.extraction.examples import check_examples
from agentflow.extraction.grounding import Grounded, grounding_plan
from agentflow.extraction.review import write_review
from agentflow.model import Usage, resolve_model

__all__ = ["DEFAULT_CONCURRENCY", "load_schema", "main"]

DEFAULT_CONCURRENCY = 4
"""Calls in flight when neither ``--concurrency`` nor the model's profile
(``concurrent_requests``: 1 for the embedded model) says otherwise."""

DEFAULT_INSTRUCTIONS = (
    "Extract the requested fields from the document. Use only information present in "
    "the document."
)


CliError = SetupError
"""Bad usage: printed without a traceback, exit status 2 (an alias of ``SetupError``)."""


@dataclass
class _Sink:
    """Where records go: the locked ``--out`` file, or stdout; counts what it saved."""

    out: OutFile | None = None
    saved: int = 0

    def write(self, record: dict[str, Any]) -> None:
        if self.out is not None:
            self.out.write(record)
        else:
            sys.stdout.write(orjson.dumps(record).decode() + "\n")
            sys.stdout.flush()
        self.saved += 1


def _transient(error_type: str) -> bool:
    """Whether a record's error type is a transient provider failure (rate
    limit, overload, 5xx, timeout, connection): retried on a rerun unasked."""
    cls = getattr(errors, error_type, None)
    return isinstance(cls, type) and issubclass(cls, errors.ProviderError) and cls.retryable


def _problem_record(doc: Document) -> dict[str, Any]:
    error = {"type": doc.problem_type or "InputError", "message": doc.problem}
    if doc.reason:
        error["reason"] = doc.reason
    return {"id": doc.id, "ok": False, "error": error, "attempts": 0}


def _record(result: ExtractResult, source_offset: int = 0,
            pages: Sequence[tuple[int, int]] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": result.id, "ok": result.ok}
    if result.ok:
        output = result.output
        record["output"] = mask_value(output.model_dump(mode="json") if isinstance(
            output, BaseModel) else output)
    else:
        record["error"] = {"type": type(result.error).__name__,
                           "message": mask_secrets(str(result.error))}
        reason = getattr(result.error, "detail", None) or getattr(result.error, "reason", None)
        if isinstance(reason, str) and reason:
            record["error"]["reason"] = mask_secrets(reason)
    if result.spans:
        record["spans"] = {path: [list(s) for s in spans] for path, spans in result.spans.items()}
    if source_offset:
        record["source_offset"] = source_offset
    if pages is not None:  # a PDF: page n is pages[n - 1]; agentflow.documents.pages
        record["pages"] = [list(p) for p in pages]
        if result.spans:
            record["span_pages"] = span_pages(result.spans, pages)
    record["usage"] = {f.name: getattr(result.usage, f.name) for f in fields(result.usage)}
    record["attempts"] = result.attempts
    record["duration_s"] = round(result.duration, 3)
    if result.chunks is not None:
        c = result.chunks
        record["chunks"] = {"total": c.total, "failed": c.failed}
        if c.missing:
            record["chunks"]["missing"] = [list(r) for r in c.missing]
        if c.hard_cuts:
            record["chunks"]["hard_cuts"] = list(c.hard_cuts)
        if c.passes > 1:
            record["chunks"]["passes"] = c.passes
    t = result.truncated
    record["truncated"] = {"kept_chars": t.kept_chars, "total_chars": t.total_chars} if t else (
        False)
    if result.conflicts:
        record["conflicts"] = [{"path": c.path, "rule": c.rule, "chosen": c.chosen,
                                "values": [{"value": v, "start": s, "end": e}
                                           for v, s, e in c.values]} for c in result.conflicts]
    return record


def chunking_for(args: argparse.Namespace, module: Any) -> Chunking | None:
    """How the run splits long documents: ``None`` with ``--no-chunking``, else
    the schema module's ``CHUNKING`` (default ``Chunking()``) with
    ``--chunk-chars`` and ``--items`` applied.

    Raises:
        CliError: the module's ``CHUNKING`` is not a ``Chunking``.
    """
    if args.no_chunking:
        return None
    base = getattr(module, "CHUNKING", DEFAULT_CHUNKING)
    if not isinstance(base, Chunking):
        raise CliError(f"the schema module's CHUNKING must be an agentflow Chunking, got "
                       f"{type(base).__name__}")
    if args.chunk_chars:
        base = dataclasses.replace(base, max_chars=args.chunk_chars)
    if getattr(args, "items", None):
        base = dataclasses.replace(base, items=args.items)
    return base


async def _extract(args: argparse.Namespace, sink: _Sink) -> int:
    output_type, module = load_schema(args.schema)  # set-up first: nothing is asked before
    instructions = args.instructions or getattr(module, "INSTRUCTIONS", DEFAULT_INSTRUCTIONS)
    prepare = getattr(module, "prepare", None)
    max_chars = args.max_chars or getattr(module, "MAX_CHARS", None)
    args.passes = args.passes if args.passes is not None else getattr(module, "PASSES", 1)
    if not isinstance(args.passes, int) or isinstance(args.passes, bool) or args.passes < 1:
        raise CliError(f"{args.schema}: PASSES must be an int >= 1, got {args.passes!r}")
    examples = getattr(module, "EXAMPLES", None)
    if examples is not None:
        try:
            check_examples(examples, output_type, Grounded() if args.ground else None)
        except InvalidExampleError as exc:
            raise SetupError(f"{args.schema}: EXAMPLES: {exc}") from None
    chunking = chunking_for(args, module)
    try:
        check_items(output_type, chunking.items if chunking is not None else None)
    except errors.UsageError as exc:
        raise CliError(f"--items / CHUNKING: {exc}") from None
    check_api_key(args.model, api_key=args.api_key, base_url=args.base_url)
    check_batch_mode(None, args.mode, args.engine)
    if args.engine == "ray":  # the same flags on a Ray cluster (agentflow/_ray_cli.py)
        from agentflow import _ray_cli

        return await asyncio.to_thread(_ray_cli.run, args, module, instructions, max_chars)
    model = _model(args)
    try:
        check_batch_mode(model, args.mode)
        if args.out and args.out != "-":
            sink.out = open_out(args.out, wait=args.wait, on_wait=waiting_notice(args.out))
        return await _extract_into(args, sink, model, output_type, instructions, prepare,
                                   max_chars, examples, chunking)
    finally:
        if sink.out is not None:
            sink.out.close()
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()


async def _extract_into(
    args: argparse.Namespace, sink: _Sink, model: Any, output_type: Any, instructions: str,
    prepare: Any, max_chars: int | None, examples: Any = None, chunking: Chunking | None = None,
) -> int:
    outcomes = sink.out.outcomes if sink.out is not None else {}
    skip = {i for i, error in outcomes.items()
            if error is None or not (args.retry_failed or _transient(error))}
    reads_pdf = "pdf" in model.profile.input_modalities

    def deliver(has_text: bool) -> str:
        return pdf_delivery(args.pdf, model_reads_pdf=reads_pdf, has_text=has_text)

    if deliver(True) == "unsupported":
        raise SetupError(f"--pdf document: model {args.model!r} does not read PDF documents "
                         "(see 'agentflow models'); use --pdf auto or --pdf text")
    docs: Iterator[Document] = (
        d for d in iter_documents(args.input, fmt=args.format, text_field=args.text_field,
                                  id_field=args.id_field, prepare=prepare, deliver=deliver)
        if d.id not in skip
    )
    if args.limit is not None:
        docs = itertools.islice(docs, args.limit)
    selected = list(docs)  # materialized: the progress line needs the total
    if _grounds(output_type, args.ground):  # a scan sent as a PDF has no text to point into
        selected = [_ungroundable(d) if d.data is not None and not d.text.strip() else d
                    for d in selected]
    unusable = [d for d in selected if d.problem]
    batch = [ExtractInput(d.id, d.text, _media(d)) for d in selected if not d.problem]
    sent_as = {d.id: "document+text" if d.text.strip() else "document" for d in selected
               if d.data is not None and not d.problem}
    offsets = {d.id: d.offset for d in selected if d.offset}
    pages = {d.id: d.pages for d in selected if d.pages is not None}
    concurrency = args.concurrency or model.profile.concurrent_requests or DEFAULT_CONCURRENCY
    progress = Progress(len(selected), sys.stderr)
    start = time.perf_counter()
    usage, batch_usage = Usage(), [Usage()]
    faults: dict[str, int] = {}
    try:
        for doc in unusable:
            print(f"agentflow: skipped {doc.problem}", file=sys.stderr)
            record = _problem_record(doc)
            sink.write(record)
            progress.add(record)
        if batch:
            async for result in extract_many(
                model, batch, output_type, concurrency=concurrency, order="completed",
                instructions=instructions, chunking=chunking, passes=args.passes,
                allow_partial=args.allow_partial, max_chars=max_chars,
                ground=True if args.ground else None, on_progress=progress.chunk,
                mode=args.mode, batch=_batch_settings(args, batch_usage),
                examples=examples,
            ):
                if getattr(result.error, "same_for_every_input", False):  # nothing else works
                    raise SetupError(f"{type(result.error).__name__}: {result.error}")
                record = _record(result, offsets.get(result.id, 0), pages.get(result.id))
                if result.id in sent_as:  # the model read the PDF itself
                    record["sent_as"] = sent_as[result.id]
                sink.write(record)
                progress.add(record)
                kind = SUSPECT_LABELS.get(type(result.error).__name__) if result.error else None
                if kind:
                    faults[kind] = faults.get(kind, 0) + 1
                usage = usage + result.usage
    finally:
        progress.close()
    if sink.out is not None and sink.out.superseded:
        try:  # one record per id: the retried ones replace their failures
            sink.out.compact()
        except OSError as exc:
            print(f"agentflow: {sink.out.path} not compacted ({exc.strerror}); when it is "
                  "read, the newest record of each id wins", file=sys.stderr)
    elapsed = time.perf_counter() - start
    counts = progress.counts
    before = [i for i in outcomes if i in skip]
    failed_before = sum(outcomes[i] is not None for i in before)
    skipped = f", {len(before)} already done" if before else ""
    if failed_before:
        skipped += f" ({failed_before} of them failed: --retry-failed tries them again)"
    failed = counts["failed"] + counts["suspect"]
    apart = ", ".join(f"{n} {name}" for name, n in sorted(faults.items()))
    tokens = usage_summary(model, usage, batch_usage[0])  # and the cost, where prices are known
    print(f"{counts['ok']} ok, {failed} failed{f' ({apart})' if apart else ''}{skipped}; "
          f"{tokens}; {elapsed:.1f}s{f' -> {sink.out.path}' if sink.out else ''}",
          file=sys.stderr)
    return 1 if failed else 0


def _grounds(output_type: Any, ground: bool) -> bool:
    """Whether extraction grounds values in the text (``--ground``, or a ``Grounded()``
    field); a schema whose markers are wrong fails later, at its first call."""
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
    file: read when its input is sent, ``agentflow.deferred``)."""
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


def _model(args: argparse.Namespace) -> Any:
    if not (args.base_url or args.api_key):
        return resolve_model(args.model)
    registry = importlib.import_module("agentflow.providers.registry")
    kwargs = {k: v for k, v in (("base_url", args.base_url), ("api_key", args.api_key)) if v}
    return registry.get_model(args.model, **kwargs)


def _report(args: argparse.Namespace) -> int:
    results = Path(args.results)
    if not results.exists():
        raise CliError(f"results file {args.results!r} does not exist")
    module = load_schema(args.schema)[1] if args.schema else None
    out = None if args.out == "-" else Path(args.out or results.with_suffix(".html"))
    if out is not None:
        _check_page_target(out)
    stats = write_review(results, out, prepare=getattr(module, "prepare", None),
                         text_field=args.text_field, id_field=args.id_field, title=args.title,
                         stdout=sys.stdout.write, fmt=args.format)
    for _, rid, why in stats.unavailable[:5]:
        print(f"agentflow: source not available for {rid}: {why}", file=sys.stderr)
    missing = f", {len(stats.unavailable)} sources not available" if stats.unavailable else ""
    docs = f"{stats.records} document{'s' * (stats.records != 1)}"
    print(f"{docs}: {stats.ok} ok, {stats.failed} failed ({stats.suspect} suspect); "
          f"{stats.spans} spans{missing}{f' -> {out}' if out else ''}", file=sys.stderr)
    return 0


def _check_page_target(out: Path) -> None:
    """Refuse a review-page target that is not a regular file (or a new file in an
    existing directory): the page is written beside it and renamed over it, which
    would replace a device, a pipe or a directory.

    Raises:
        CliError: the target exists and is not a regular file, or its directory is missing.
    """
    try:
        mode = out.stat().st_mode
    except FileNotFoundError:
        if not out.parent.is_dir():
            raise CliError(f"-o {str(out)!r}: directory does not exist") from None
        return
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise CliError(f"-o {str(out)!r} is {kind}: give a file path for the page")


def _models() -> int:
    registry = importlib.import_module("agentflow.providers.registry")
    rows = registry.list_profiles()
    print(f"{'vendor':10} {'model pattern':28} {'tools':6} {'tool_choice':28} {'native':12} "
          f"{'dialect':14} {'context':>9} {'output':>7} {'inputs':15} thinking")
    for vendor, pattern, p in rows:
        modes = ",".join(sorted(p.tool_choice_modes)) if p.supports_tools else "-"
        thinking = ("on" if p.thinking_default else "opt-in") if p.supports_thinking else "-"
        if p.supports_thinking and not p.forced_tool_choice_with_thinking:
            thinking += " (no forcing)"
        window = f"{p.context_window:,}" if p.context_window else "?"
        output = f"{p.max_output_tokens:,}" if p.max_output_tokens else "?"
        inputs = ",".join(m for m in ("text", "image", "pdf") if m in p.input_modalities)
        print(f"{vendor:10} {pattern:28} {'yes' if p.supports_tools else 'no':6} {modes:28} "
              f"{p.native_output or '-':12} {p.schema_dialect:14} {window:>9} {output:>7} "
              f"{inputs:15} {thinking}")
    bundled = registry.bundled_models()
    if bundled:
        print(f"\n{'model':34} {'licence':20} weights")
        for vendor, name, licence, installed, default in bundled:
            spec = f"{vendor}:{name}" + (f" (= {vendor})" if default else "")
            print(f"{spec:34} {licence:20} {'installed' if installed else 'not installed'}")
    print(f"\n{'vendor':10} API key from (first set wins; --api-key overrides)")
    for vendor in dict.fromkeys(vendor for vendor, _, _ in rows):
        names = registry.api_key_variables(vendor)
        print(f"{vendor:10} {' or '.join(names) if names else '- (no key needed)'}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentflow", description="agentflow command line")
    parser.add_argument("--version", action="version", version=f"agentflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser(
        "extract", help="extract one validated record per input document",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Extract one validated record per input document, concurrently.",
        epilog=(
            "The default model, 'local', is llama.cpp running in this process with bundled\n"
            "Gemma 3 270M weights (offline; needs the 'local' extra);\n"
            "'local:smollm2-135m-instruct' is the other bundled model. Any 'vendor:model' works\n"
            "with its API key in the vendor's environment variable (see 'agentflow models').\n\n"
            "Each input gives one JSON line: {id, ok, output | error{type, message, reason},\n"
            "spans, source_offset, usage, attempts, duration_s, chunks?, truncated}; spans\n"
            "maps each grounded field path to [[start, end]] offsets in the text the model\n"
            "saw, which starts at source_offset in the file.\n\n"
            "Inputs: plain text (any encoding), PDF (its text layer, page by page; the record\n"
            "adds pages: [[start, end]] of page n at index n-1, and span_pages: the page of\n"
            "each span) and HTML (its text as a browser shows it), told apart by their first\n"
            "bytes and suffix; .gz of any of them; JSONL records. A scanned PDF (no text\n"
            "layer), an encrypted or a corrupt one is a failed record saying so; a scan\n"
            "goes to a model that reads PDFs as the PDF itself (--pdf; the record says\n"
            "sent_as).\n\n"
            "With --out (a regular file), lines are appended under a\n"
            "lock (a second run on the file refuses, or waits with --wait) and inputs that\n"
            "already have a record are skipped, except transient failures (rate limit,\n"
            "overload, 5xx, timeout); --retry-failed tries every failed one again. The\n"
            "file is then compacted to one record per id (the newest).\n\n"
            "Long documents: a document that does not fit the model's context window is\n"
            "split into chunks at paragraph, line and sentence ends, the chunks are extracted\n"
            "concurrently and merged by the schema's merge rules; the record's 'chunks' says\n"
            "how many were read and failed. Nothing is cut unless --max-chars (or the\n"
            "schema module's MAX_CHARS) asks, and then 'truncated' says how much was kept.\n\n"
            "Exit status: 0 all ok; 1 some input failed; 2 bad usage or set-up (schema,\n"
            "missing API key, --out), before any model request, or misuse the first call\n"
            "reveals (a model file that does not exist...); 130 interrupted (the\n"
            "records saved so far stay; run the same command again to resume)."
        ),
    )
    ex.add_argument("--schema", required=True,
                    help="output type: module:Class, path/to/file.py:Class, or schema.json")
    ex.add_argument("--input", nargs="+", action="extend", required=True,
                    help="files (text, PDF, HTML), globs, directories, .gz, .jsonl, or - for "
                         "stdin (repeatable: every --input is read)")
    ex.add_argument("--model", default="local", help="'vendor:model' (default: local)")
    ex.add_argument("--base-url", help="API root for the vendor (an OpenAI-compatible server...)")
    ex.add_argument("--api-key", help="API key (default: the vendor's environment variable)")
    ex.add_argument("--instructions", help="system prompt (default: the schema module's)")
    ex.add_argument("--concurrency", type=int,
                    help="calls in flight (default: what the model serves at once; 1 for the "
                         f"embedded model, {DEFAULT_CONCURRENCY} for vendor APIs)")
    ex.add_argument("--limit", type=int, help="process at most N new inputs")
    ex.add_argument("--out", help="JSONL file to append to: a regular file, locked while the "
                                  "run lasts, read back to resume (default: stdout)")
    ex.add_argument("--wait", action="store_true",
                    help="wait for another run holding --out instead of refusing")
    ex.add_argument("--retry-failed", action="store_true",
                    help="try every input whose newest record failed again (transient "
                         "failures are retried without it)")
    ex.add_argument("--format", choices=FORMATS, default="auto",
                    help="how to read inputs: auto (.jsonl/.ndjson as JSONL; PDF and HTML by "
                         "their first bytes and suffix; else text), or force text, jsonl, pdf "
                         "or html")
    ex.add_argument("--pdf", choices=PDF_MODES, default="auto",
                    help="how PDFs reach the model: auto (the text layer; a scan without one "
                         "as the PDF itself when the model reads PDFs), text (the text layer "
                         "only), document (the PDF itself, with its text layer beside it for "
                         "spans; needs a model that reads PDFs)")
    ex.add_argument("--text-field", default="text", help="JSONL field holding the text")
    ex.add_argument("--id-field", default="id", help="JSONL field holding the id")
    ex.add_argument("--max-chars", type=int,
                    help="cut documents longer than this (recorded as 'truncated'); default: "
                         "the schema module's MAX_CHARS, else no cut")
    ex.add_argument("--chunk-chars", type=int,
                    help="characters per chunk at most (default: what fits the model)")
    ex.add_argument("--passes", type=int, default=None,
                    help="extraction passes over each document: later ones only add list "
                         "items (recall; default: the schema module's PASSES, else 1)")
    ex.add_argument("--allow-partial", action="store_true",
                    help="keep a long document's output when some chunks fail (the record "
                         "lists the missing ranges)")
    ex.add_argument("--items", metavar="FIELD",
                    help="read long documents item by item: FIELD is the schema's list field "
                         "whose items the document is a run of (chunks of whole blocks, as "
                         "many as the model reads well; default: the schema module's CHUNKING)")
    ex.add_argument("--no-chunking", action="store_true",
                    help="send every document whole, whatever its size")
    ex.add_argument("--engine", choices=["local", "ray"], default="local",
                    help="local: this process; ray: a Ray cluster (RAY_ADDRESS, else a local "
                         "one; --out is then a directory; needs the 'ray' extra)")
    ex.add_argument("--actors", type=int, default=2,
                    help="--engine ray: actors sharing --concurrency (default 2)")
    ex.add_argument("--mode", choices=["live", "batch", "auto"], default="live",
                    help="live requests (default), the vendor's batch API at about half price "
                         "(re-asks live; resumable: batch ids are kept in OUT.batches.json), "
                         "or auto (batch for 100 inputs or more where the vendor has one)")
    ex.add_argument("--batch-only", action="store_true",
                    help="with --mode batch/auto: re-asks go in follow-up batches too")
    ex.add_argument("--batch-poll", type=float, default=5.0, metavar="SECONDS",
                    help="first interval between polls of a batch (grows to 300 s; default 5)")
    ex.add_argument("--ground", action="store_true",
                    help="ground every free-text string field in the document (fields marked "
                         "Grounded() are grounded either way)")
    rp = sub.add_parser(
        "report", help="write the HTML review page of a results file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Write one self-contained HTML page (no network assets) showing, per record of a\n"
            "results file written by 'extract', the source text with each grounded span\n"
            "highlighted and labelled by field, the output beside it, failed records with their\n"
            "reasons, and a summary. The last record of each id wins. Sources are re-read from\n"
            "the paths in the ids (run from the directory 'extract' ran in); with --schema,\n"
            "through the module's prepare(), as 'extract' read them.\n\n"
            "Exit status: 0 page written, 2 bad usage or unreadable results file."
        ),
    )
    rp.add_argument("results", help="JSONL results file written by 'agentflow extract' (or the"
                                    " directory of *.jsonl files of --engine ray)")
    rp.add_argument("-o", "--out", help="HTML file to write (default: RESULTS with .html; - for"
                                        " stdout)")
    rp.add_argument("--schema", help="the --schema given to extract (for its prepare())")
    rp.add_argument("--format", choices=FORMATS, default="auto",
                    help="the --format given to extract (how sources are re-read)")
    rp.add_argument("--text-field", default="text", help="JSONL inputs: field holding the text")
    rp.add_argument("--id-field", default="id", help="JSONL inputs: field holding the id")
    rp.add_argument("--title", help="page title (default: from the results file name)")
    sub.add_parser(
        "models", help="list vendors, model-name patterns, profiles and API key variables",
        description=(
            "Vendors, model-name patterns (first match wins) and what each can do: tools,\n"
            "the tool_choice modes the vendor enforces, native structured output, the JSON\n"
            "Schema dialect, and thinking ('no forcing': no forced tool_choice while thinking);\n"
            "then the environment variables each vendor's API key is read from."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 some input
    failed, 2 bad usage or set-up, 130 interrupted)."""
    args = _parser().parse_args(argv)
    sink = _Sink()
    try:
        if args.command == "models":
            return _models()
        if args.command == "report":
            return _report(args)
        if args.concurrency is not None and args.concurrency < 1:
            raise CliError("--concurrency must be >= 1")
        if args.limit is not None and args.limit < 0:
            raise CliError("--limit must be >= 0")
        if args.max_chars is not None and args.max_chars < 1:
            raise CliError("--max-chars must be >= 1")
        if args.chunk_chars is not None and args.chunk_chars < 2:
            raise CliError("--chunk-chars must be >= 2")
        if args.passes is not None and args.passes < 1:
            raise CliError("--passes must be >= 1")
        if not args.batch_poll > 0 or args.batch_poll == float("inf"):  # NaN too
            raise CliError(f"--batch-poll must be a number of seconds > 0, got {args.batch_poll}")
        return asyncio.run(_extract(args, sink))
    except (CliError, InputError, AgentflowError, OSError) as exc:
        print(f"agentflow: error: {mask_secrets(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        where = f" to {args.out}" if getattr(args, "out", None) not in (None, "-") else ""
        print(f"\nagentflow: interrupted; {sink.saved} record{'s' * (sink.saved != 1)} saved"
              f"{where}; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
