"""The ``agentflow`` command.

    agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz' --limit 20 --out results.jsonl
    agentflow report results.jsonl -o review.html \\
        --schema examples/debian_changelog.py:ChangelogEntry
    agentflow models
    agentflow --version

``extract`` writes one JSON line per input (``id``, ``ok``, ``output`` or
``error`` ``{type, message, reason?}``, ``spans`` of grounded values,
``source_offset`` when ``prepare`` cut a prefix, ``usage``, ``attempts``,
``duration_s``, ``chunks`` for a long document, ``truncated``), appends to
``--out`` and skips inputs already there, shows progress bars (documents, and
chunks of long ones) on a terminal, prints a summary, and exits 1 if any input
failed (2 on bad usage).

Documents longer than the model's context window are split into chunks and
merged, never cut; a cap (``--max-chars`` or the schema module's
``MAX_CHARS``) still cuts, and the record says so in ``truncated``.

A schema module may define ``INSTRUCTIONS`` (the system prompt),
``prepare(text) -> text`` (applied to each document) and ``MAX_CHARS``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import itertools
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

import orjson
from pydantic import BaseModel, create_model

from agentflow import __version__
from agentflow._inputs import Document, InputError, iter_documents
from agentflow.batch import ExtractInput, ExtractResult, extract_many
from agentflow.errors import AgentflowError
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.chunked import ChunkProgress
from agentflow.extraction.review import write_review
from agentflow.model import resolve_model

__all__ = ["load_schema", "main"]

DEFAULT_INSTRUCTIONS = (
    "Extract the requested fields from the document. Use only information present in "
    "the document."
)


class CliError(Exception):
    """Bad usage: printed without a traceback, exit status 2."""


def _load_module(ref: str) -> ModuleType:
    if ref.endswith(".py") or "/" in ref:
        path = Path(ref)
        if not path.exists():
            raise CliError(f"schema file {ref!r} does not exist")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CliError(f"cannot import {ref!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(ref)
    except ImportError as exc:
        raise CliError(f"cannot import schema module {ref!r}: {exc}") from exc


def _from_json_schema(path: Path) -> type[BaseModel]:
    """A pydantic model for a flat JSON Schema file (object of simple properties)."""
    try:
        schema = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise CliError(f"{path}: not JSON: {exc}") from exc
    kinds: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                             "array": list[Any], "object": dict[str, Any]}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if (
        not isinstance(schema, dict) or schema.get("type") != "object"
        or not isinstance(props, dict) or not all(isinstance(p, dict) for p in props.values())
    ):
        raise CliError(f"{path}: the JSON Schema must be an object whose properties are objects")
    required = set(schema.get("required", ()))
    definitions: dict[str, Any] = {}
    for name, prop in props.items():
        tp = kinds.get(prop.get("type"), Any)
        definitions[name] = (tp, ...) if name in required else (tp | None, None)
    model: type[BaseModel] = create_model(schema.get("title", path.stem), **definitions)
    return model


def load_schema(ref: str) -> tuple[Any, ModuleType | None]:
    """The output type named by ``module:Class``, ``path.py:Class`` or ``schema.json``.

    Raises:
        CliError: the reference cannot be resolved.
    """
    if ref.endswith(".json"):
        path = Path(ref)
        if not path.exists():
            raise CliError(f"schema file {ref!r} does not exist")
        return _from_json_schema(path), None
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name:
        raise CliError(f"--schema must be module:Class, path.py:Class or a .json file, got {ref!r}")
    module = _load_module(module_ref)
    try:
        return getattr(module, name), module
    except AttributeError:
        raise CliError(f"{module_ref!r} has no attribute {name!r}") from None


def _done_ids(out: Path | None) -> set[str]:
    if out is None or not out.exists():
        return set()
    done = set()
    for line in out.read_bytes().splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a torn last line from an interrupted run
        if isinstance(record, dict) and record.get("ok") is True and isinstance(
                record.get("id"), str):
            done.add(record["id"])  # failed inputs are tried again
    return done


def _open_for_append(path: Path) -> TextIO:
    """``path`` opened to append whole lines (after a torn last line, a newline first)."""
    torn = path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    sink = path.open("a", encoding="utf-8")
    if torn:
        sink.write("\n")
    return sink


def _problem_record(doc: Document) -> dict[str, Any]:
    return {"id": doc.id, "ok": False, "error": {"type": "InputError", "message": doc.problem},
            "attempts": 0}


def _record(result: ExtractResult, source_offset: int = 0) -> dict[str, Any]:
    record: dict[str, Any] = {"id": result.id, "ok": result.ok}
    if result.ok:
        output = result.output
        record["output"] = output.model_dump(mode="json") if isinstance(output, BaseModel) else (
            output)
    else:
        record["error"] = {"type": type(result.error).__name__, "message": str(result.error)}
        reason = getattr(result.error, "detail", None) or getattr(result.error, "reason", None)
        if isinstance(reason, str) and reason:
            record["error"]["reason"] = reason
    if result.spans:
        record["spans"] = {path: [list(s) for s in spans] for path, spans in result.spans.items()}
    if source_offset:
        record["source_offset"] = source_offset
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


def _progress(total: int | None, stream: TextIO) -> Any:
    """A rich progress display on a terminal (task 0: documents), else ``None``."""
    if not stream.isatty():
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
    progress.start()
    progress.add_task("extracting", total=total)
    return progress


class _ChunkBar:
    """The chunk progress of long documents: a second bar, added on the first chunk."""

    def __init__(self, progress: Any) -> None:
        self.progress, self.task = progress, None
        self.docs: dict[str, tuple[int, int]] = {}

    def __call__(self, event: ChunkProgress) -> None:
        self.docs[event.id] = (event.done, event.total)
        done = sum(d for d, _ in self.docs.values())
        total = sum(t for _, t in self.docs.values())
        if self.task is None:
            self.task = self.progress.add_task("chunks of long documents", total=total)
        self.progress.update(self.task, completed=done, total=total)


async def _extract(args: argparse.Namespace) -> int:
    output_type, module = load_schema(args.schema)
    instructions = args.instructions or getattr(module, "INSTRUCTIONS", DEFAULT_INSTRUCTIONS)
    prepare = getattr(module, "prepare", None)
    max_chars = args.max_chars or getattr(module, "MAX_CHARS", None)
    if args.engine == "ray":  # the same flags on a Ray cluster (agentflow/_ray_cli.py)
        from agentflow import _ray_cli

        return await asyncio.to_thread(_ray_cli.run, args, module, instructions, max_chars)
    out_path = Path(args.out) if args.out and args.out != "-" else None
    done = _done_ids(out_path)
    docs: Iterator[Document] = (
        d for d in iter_documents(args.input, fmt=args.format, text_field=args.text_field,
                                  id_field=args.id_field, prepare=prepare)
        if d.id not in done
    )
    if args.limit is not None:
        docs = itertools.islice(docs, args.limit)
    selected = list(docs)  # materialized: the progress bar needs the total
    unusable = [d for d in selected if d.problem]
    batch = [ExtractInput(d.id, d.text) for d in selected if not d.problem]
    offsets = {d.id: d.offset for d in selected if d.offset}
    sink: TextIO = _open_for_append(out_path) if out_path else sys.stdout
    start = time.perf_counter()
    try:
        for doc in unusable:
            print(f"agentflow: skipped {doc.problem}", file=sys.stderr)
            sink.write(orjson.dumps(_problem_record(doc)).decode() + "\n")
        ok, failed, tokens, faults = await _run(args, batch, output_type, instructions, sink,
                                                offsets, max_chars)
    finally:
        if out_path:
            sink.close()
    failed += len(unusable)
    elapsed = time.perf_counter() - start
    skipped = f", {len(done)} already done" if done else ""
    apart = ", ".join(f"{n} {name}" for name, n in sorted(faults.items()))
    print(f"{ok} ok, {failed} failed{f' ({apart})' if apart else ''}{skipped}; {tokens} tokens; "
          f"{elapsed:.1f}s"
          f"{f' -> {out_path}' if out_path else ''}", file=sys.stderr)
    return 1 if failed else 0


_FAULTS = {"GroundingError": "not grounded", "DegenerateOutputError": "degenerate"}
"""Failures the summary counts apart: records that were valid but not right."""


async def _run(
    args: argparse.Namespace, batch: list[ExtractInput], output_type: Any, instructions: str,
    sink: TextIO, offsets: dict[str, int], max_chars: int | None = None,
) -> tuple[int, int, int, dict[str, int]]:
    """Extract ``batch`` and write a line per result; ``(ok, failed, tokens,
    failures counted apart by kind)``."""
    faults: dict[str, int] = {}
    if not batch:
        return 0, 0, 0, faults
    model = _model(args)
    progress = _progress(len(batch), sys.stderr)
    ok = failed = tokens = 0
    try:
        chunking = (None if args.no_chunking else Chunking(max_chars=args.chunk_chars)
                    if args.chunk_chars else DEFAULT_CHUNKING)
        async for result in extract_many(
            model, batch, output_type, concurrency=args.concurrency, order="completed",
            instructions=instructions, chunking=chunking, passes=args.passes,
            allow_partial=args.allow_partial, max_chars=max_chars,
            ground=True if args.ground else None,
            on_progress=_ChunkBar(progress) if progress is not None else None,
        ):
            record = _record(result, offsets.get(result.id, 0))
            sink.write(orjson.dumps(record).decode() + "\n")
            sink.flush()
            ok, failed = ok + result.ok, failed + (not result.ok)
            kind = _FAULTS.get(type(result.error).__name__) if result.error else None
            if kind:
                faults[kind] = faults.get(kind, 0) + 1
            tokens += result.usage.total_tokens
            if progress is not None:
                progress.advance(0)
    finally:
        if progress is not None:
            progress.stop()
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()
    return ok, failed, tokens, faults


def _model(args: argparse.Namespace) -> Any:
    if not (args.base_url or args.api_key):
        return resolve_model(args.model)
    registry = importlib.import_module("agentflow.providers.registry")
    kwargs = {k: v for k, v in (("base_url", args.base_url), ("api_key", args.api_key)) if v}
    return registry.get_model(args.model, **kwargs)


def _report(args: argparse.Namespace) -> int:
    results = Path(args.results)
    if not results.is_file():
        raise CliError(f"results file {args.results!r} does not exist")
    if args.max_chars is not None and args.max_chars < 1:
        raise CliError("--max-chars must be >= 1")
    module = load_schema(args.schema)[1] if args.schema else None
    max_chars = args.max_chars or getattr(module, "MAX_CHARS", None)
    out = None if args.out == "-" else Path(args.out or results.with_suffix(".html"))
    stats = write_review(results, out, prepare=getattr(module, "prepare", None),
                         max_chars=max_chars, text_field=args.text_field,
                         id_field=args.id_field, title=args.title, stdout=sys.stdout.write)
    for _, rid, why in stats.unavailable[:5]:
        print(f"agentflow: source not available for {rid}: {why}", file=sys.stderr)
    missing = f", {len(stats.unavailable)} sources not available" if stats.unavailable else ""
    print(f"{stats.records} documents: {stats.ok} ok, {stats.failed} failed ({stats.suspect} "
          f"suspect); {stats.spans} spans{missing}{f' -> {out}' if out else ''}", file=sys.stderr)
    return 0


def _models() -> int:
    registry = importlib.import_module("agentflow.providers.registry")
    rows = registry.list_profiles()
    print(f"{'vendor':10} {'model pattern':28} {'tools':6} {'tool_choice':28} {'native':12} "
          f"{'dialect':14} thinking")
    for vendor, pattern, p in rows:
        modes = ",".join(sorted(p.tool_choice_modes)) if p.supports_tools else "-"
        thinking = ("on" if p.thinking_default else "opt-in") if p.supports_thinking else "-"
        if p.supports_thinking and not p.forced_tool_choice_with_thinking:
            thinking += " (no forcing)"
        print(f"{vendor:10} {pattern:28} {'yes' if p.supports_tools else 'no':6} {modes:28} "
              f"{p.native_output or '-':12} {p.schema_dialect:14} {thinking}")
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
            "Gemma 3 270M weights (offline; needs the 'local' extra). Any 'vendor:model' works\n"
            "with its API key in the vendor's environment variable (see 'agentflow models').\n\n"
            "Each input gives one JSON line: {id, ok, output | error{type, message, reason},\n"
            "spans, source_offset, usage, attempts, duration_s, chunks?, truncated}; spans\n"
            "maps each grounded field path to [[start, end]] offsets in the text the model\n"
            "saw, which starts at source_offset in the file. With --out, lines are appended\n"
            "and inputs already ok there are skipped (failed ones are tried again).\n\n"
            "Long documents: a document that does not fit the model's context window is\n"
            "split into chunks at paragraph, line and sentence ends, the chunks are extracted\n"
            "concurrently and merged by the schema's merge rules; the record's 'chunks' says\n"
            "how many were read and failed. Nothing is cut unless --max-chars (or the\n"
            "schema module's MAX_CHARS) asks, and then 'truncated' says how much was kept.\n\n"
            "Exit status: 0 all ok, 1 some input failed, 2 bad usage or setup."
        ),
    )
    ex.add_argument("--schema", required=True,
                    help="output type: module:Class, path/to/file.py:Class, or schema.json")
    ex.add_argument("--input", nargs="+", required=True,
                    help="files, globs, directories, .gz, .jsonl, or - for stdin")
    ex.add_argument("--model", default="local", help="'vendor:model' (default: local)")
    ex.add_argument("--base-url", help="API root for the vendor (an OpenAI-compatible server...)")
    ex.add_argument("--api-key", help="API key (default: the vendor's environment variable)")
    ex.add_argument("--instructions", help="system prompt (default: the schema module's)")
    ex.add_argument("--concurrency", type=int, default=4, help="calls in flight (default 4)")
    ex.add_argument("--limit", type=int, help="process at most N new inputs")
    ex.add_argument("--out", help="JSONL file to append to (resumes); default stdout")
    ex.add_argument("--format", choices=["auto", "text", "jsonl"], default="auto",
                    help="how to read inputs: auto (.jsonl/.ndjson as JSONL), text or jsonl")
    ex.add_argument("--text-field", default="text", help="JSONL field holding the text")
    ex.add_argument("--id-field", default="id", help="JSONL field holding the id")
    ex.add_argument("--max-chars", type=int,
                    help="cut documents longer than this (recorded as 'truncated'); default: "
                         "the schema module's MAX_CHARS, else no cut")
    ex.add_argument("--chunk-chars", type=int,
                    help="characters per chunk at most (default: what fits the model)")
    ex.add_argument("--passes", type=int, default=1,
                    help="extraction passes over a chunked document (recall; default 1)")
    ex.add_argument("--allow-partial", action="store_true",
                    help="keep a long document's output when some chunks fail (the record "
                         "lists the missing ranges)")
    ex.add_argument("--no-chunking", action="store_true",
                    help="send every document whole, whatever its size")
    ex.add_argument("--engine", choices=["local", "ray"], default="local",
                    help="local: this process; ray: a Ray cluster (RAY_ADDRESS, else a local "
                         "one; --out is then a directory; needs the 'ray' extra)")
    ex.add_argument("--actors", type=int, default=2,
                    help="--engine ray: actors sharing --concurrency (default 2)")
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
            "through the module's prepare() and MAX_CHARS, as 'extract' read them.\n\n"
            "Exit status: 0 page written, 2 bad usage or unreadable results file."
        ),
    )
    rp.add_argument("results", help="JSONL results file written by 'agentflow extract'")
    rp.add_argument("-o", "--out", help="HTML file to write (default: RESULTS with .html; - for"
                                        " stdout)")
    rp.add_argument("--schema", help="the --schema given to extract (for prepare and MAX_CHARS)")
    rp.add_argument("--max-chars", type=int, help="the --max-chars given to extract")
    rp.add_argument("--text-field", default="text", help="JSONL inputs: field holding the text")
    rp.add_argument("--id-field", default="id", help="JSONL inputs: field holding the id")
    rp.add_argument("--title", help="page title (default: from the results file name)")
    sub.add_parser(
        "models", help="list vendors, model-name patterns and their profiles",
        description=(
            "Vendors, model-name patterns (first match wins) and what each can do: tools,\n"
            "the tool_choice modes the vendor enforces, native structured output, the JSON\n"
            "Schema dialect, and thinking ('no forcing': no forced tool_choice while thinking)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "models":
            return _models()
        if args.command == "report":
            return _report(args)
        if args.concurrency < 1:
            raise CliError("--concurrency must be >= 1")
        if args.limit is not None and args.limit < 0:
            raise CliError("--limit must be >= 0")
        if args.max_chars is not None and args.max_chars < 1:
            raise CliError("--max-chars must be >= 1")
        if args.chunk_chars is not None and args.chunk_chars < 2:
            raise CliError("--chunk-chars must be >= 2")
        if args.passes < 1:
            raise CliError("--passes must be >= 1")
        return asyncio.run(_extract(args))
    except (CliError, InputError, AgentflowError, OSError) as exc:
        print(f"agentflow: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("agentflow: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
