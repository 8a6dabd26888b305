"""The ``agentflow`` command.

    agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz' --limit 20 --out results.jsonl
    agentflow report results.jsonl -o review.html \\
        --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz'
    agentflow models
    agentflow --version

``extract`` writes one line of strict JSON per input (``id``, with ``id_bytes``
for a name that is not UTF-8: ``agentflow.documents.names``; ``ok``, ``output`` or
``error`` ``{type, message, reason?}``, ``spans`` of grounded values,
``source_offset`` when ``prepare`` cut a prefix, ``pages`` and ``span_pages`` for a
PDF (``agentflow.documents.pages``), ``usage``, ``attempts``,
``duration_s``, ``chunks`` for a long document, ``truncated``, ``schema`` and
``settings``: ``agentflow.extraction.fingerprint``,
``agentflow.extraction.settings_fingerprint`` and
``agentflow.extraction.run_settings``), appends to
``--out`` (locked; ``agentflow.cli.out_file``) and skips inputs already there, shows a
progress line (``_progress``: documents, and chunks of long ones), prints a
summary, and exits 1 if any input failed. Bad set-up (``_setup``: schema, API
key, ``--out``; an input that names nothing to extract from,
``agentflow.documents.named``) exits 2 before any request, and leaves no new
``--out`` file behind.

Documents longer than the model's context window are split into chunks and
merged, never cut; a cap (``--max-chars`` or the schema module's
``MAX_CHARS``) still cuts, and the record says so in ``truncated``.

``--mode batch`` (or ``auto``) sends first requests through the vendor's batch
API at about half price (``agentflow.batch_api``), journalled in
``OUT.batches.json`` so a rerun resumes the same batches; the summary adds the
batch tokens and, with ``genai-prices``, the estimated cost.

A schema module may define ``INSTRUCTIONS`` (the system prompt),
``prepare(text) -> text`` (applied to each document), ``MAX_CHARS``,
``EXAMPLES`` (few-shot ``Example``s, ``agentflow.output.examples``;
checked against the schema before any request) and
``CHUNKING`` (a ``Chunking``: e.g. ``Chunking(items="entries")`` reads a long
document item by item; ``--items FIELD`` does the same from the command line)
and ``PASSES`` (extraction passes per document, ``--passes``;
``agentflow.extraction.recall``).

This module is the command line (its parser, ``report``, ``models``, ``main``);
``extract`` itself lives in ``agentflow.cli.extract`` and the records it
writes in ``agentflow.extraction.records``.
"""

from __future__ import annotations

import argparse
import importlib
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from agentflow._secrets import mask_secrets
from agentflow._version import __version__
from agentflow.cli.extract import DEFAULT_CONCURRENCY, _extract
from agentflow.cli.extract import DEFAULT_INSTRUCTIONS as DEFAULT_INSTRUCTIONS
from agentflow.cli.extract import CliError as CliError
from agentflow.cli.extract import chunking_for as chunking_for
from agentflow.cli.loop import run_loop
from agentflow.documents.inputs import FORMATS, InputError
from agentflow.documents.names import printable
from agentflow.documents.routing import PDF_MODES
from agentflow.errors import AgentflowError
from agentflow.extraction.records import RecordSink
from agentflow.extraction.review import write_review
from agentflow.extraction.setup import check_module_settings, load_schema
from agentflow.extraction.targets import check_new_files

__all__ = ["DEFAULT_CONCURRENCY", "load_schema", "main"]


def _report(args: argparse.Namespace) -> int:
    results = Path(args.results)
    if not results.exists():
        raise CliError(f"results file {args.results!r} does not exist")
    module = load_schema(args.schema)[1] if args.schema else None
    check_module_settings(module, args.schema)
    out = None if args.out == "-" else Path(args.out or results.with_suffix(".html"))
    if out is not None:
        _check_page_target(out)
    stats = write_review(results, out, inputs=args.input or (),
                         prepare=getattr(module, "prepare", None),
                         text_field=args.text_field, id_field=args.id_field, title=args.title,
                         stdout=sys.stdout.write, fmt=args.format)
    for _, rid, why in stats.unavailable[:5]:
        print(f"agentflow: source not available for {printable(rid)}: {printable(why)}",
              file=sys.stderr)
    missing = (f", {stats.unavailable_total} sources not available"
               if stats.unavailable_total else "")
    docs = f"{stats.records} document{'s' * (stats.records != 1)}"
    print(f"{docs}: {stats.ok} ok, {stats.failed} failed ({stats.suspect} suspect)"
          f"{printable(stats.review_note())}; {stats.spans} spans{missing}"
          f"{f' -> {out}' if out else ''}", file=sys.stderr)
    return 0


def _check_page_target(out: Path) -> None:
    """Refuse a review-page target that is not a regular file (or a new file in an
    existing directory): the page is written beside it and renamed over it, which
    would replace a device, a pipe or a directory.

    Raises:
        CliError: the target exists and is not a regular file, or its directory is missing.
        SetupError: no file can be made in its directory (read-only, ``/proc``).
    """
    try:
        mode = out.stat().st_mode
    except FileNotFoundError:
        if not out.parent.is_dir():
            raise CliError(f"-o {str(out)!r}: directory does not exist") from None
        mode = stat.S_IFREG
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise CliError(f"-o {str(out)!r} is {kind}: give a file path for the page")
    check_new_files(out.parent, f"-o {str(out)!r}")  # the page is made beside it


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
            "The default model, 'local', is llama.cpp with bundled Gemma 3 270M weights,\n"
            "served by a child process on 127.0.0.1 that the run starts and stops (offline;\n"
            "needs the 'local' extra);\n"
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
            "missing API key, --out, an --out that is one of the inputs, an input that\n"
            "names nothing to extract from: a glob matching no file, a folder with no file,\n"
            "a JSONL file with no record), before any model request, or misuse the first call\n"
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
                    help="calls in flight (default: what the model serves at once: the "
                         "embedded model's decoding slots, 4; "
                         f"{DEFAULT_CONCURRENCY} for vendor APIs); on the embedded model also "
                         "its decoding slots")
    ex.add_argument("--threads", type=int,
                    help="embedded model: CPU threads (default: $AGENTFLOW_THREADS, else "
                         "one per physical core available, at most 8)")
    ex.add_argument("--workers", type=int, default=1,
                    help="processes sharing --concurrency and every rate limit (default 1); "
                         "for a fast endpoint where this process's CPU bounds the rate; "
                         "--mode live, vendor models only")
    ex.add_argument("--limit", type=int, help="process at most N new inputs")
    ex.add_argument("--out", help="JSONL file to append to: a regular file, locked while the "
                                  "run lasts, read back to resume (default: stdout)")
    ex.add_argument("--schema-changed", choices=["refuse", "new"], default="refuse",
                    help="when --out holds records of another schema, or of this one made "
                         "another way (another model or endpoint, other instructions, "
                         "examples, passes, cut, chunking, grounding, --allow-partial, "
                         "--format, --pdf, --text-field or --id-field): refuse (exit 2, the "
                         "default), or write to a new file beside it named by the schema's "
                         "fingerprint and those settings (OUT.<fingerprint>.jsonl)")
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
                         "lists the missing ranges), and a record whose optional fields' "
                         "values are not in the document after the retries (those fields "
                         "null, flagged, named under 'dropped' with why; without it only "
                         "values the document writes that a check refused are dropped so)")
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
                    help="ground every free-text string field in the document (the default; "
                         "kept for old scripts)")
    ex.add_argument("--no-ground", action="store_true",
                    help="do not ground free-text string fields by default (fields marked "
                         "Grounded() are grounded either way; mark a derived field Derived() "
                         "instead to leave only it ungrounded)")
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
            "Only files named by --input are read (give extract's --input): a results file\n"
            "may come from anyone, and an id such as /etc/shadow must not land in a page you\n"
            "share. Other ids get a note on the page, never their content; without --input\n"
            "no source is read.\n\n"
            "Exit status: 0 page written, 2 bad usage or unreadable results file."
        ),
    )
    rp.add_argument("results", help="JSONL results file written by 'agentflow extract' (or the"
                                    " directory of *.jsonl files of --engine ray)")
    rp.add_argument("--input", nargs="+", action="extend", metavar="SPEC",
                    help="files, globs or directories whose files may be re-read as sources "
                         "(the --input given to extract, in the same form: several after one "
                         "--input, or repeated; others are not read)")
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
    sink = RecordSink()
    try:
        if args.command == "models":
            return _models()
        if args.command == "report":
            return _report(args)
        if args.concurrency is not None and args.concurrency < 1:
            raise CliError("--concurrency must be >= 1")
        if getattr(args, "threads", None) is not None and args.threads < 1:
            raise CliError("--threads must be >= 1")
        if args.workers < 1:
            raise CliError("--workers must be >= 1")
        if args.workers > 1 and args.engine == "ray":
            raise CliError("--workers is for --engine local; --engine ray spreads calls over "
                           "--actors")
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
        return run_loop(_extract(args, sink))
    except (CliError, InputError, AgentflowError, OSError) as exc:
        print(f"agentflow: error: {printable(mask_secrets(str(exc)), lines=True)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        where = f" to {args.out}" if getattr(args, "out", None) not in (None, "-") else ""
        print(f"\nagentflow: interrupted; {sink.saved} record{'s' * (sink.saved != 1)} saved"
              f"{where}; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
