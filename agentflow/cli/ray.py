"""``agentflow extract --engine ray``: the same flags, on a Ray cluster.

``--out`` is a directory of JSONL files written by Ray Data (one file per
output block, new files on each run); inputs with an ok record in any of them
are skipped, failed ones are tried again. ``--concurrency`` is the total of
calls in flight, split over ``--actors`` actors. The cluster is the one
``RAY_ADDRESS`` names, else a local one started here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["run"]


def run(args: argparse.Namespace, module: ModuleType | None, instructions: str,
        max_chars: int | None) -> int:
    """Run ``extract`` on Ray; the exit status (0 all ok, 1 some failed).

    Raises:
        CliError: no ``--out`` directory, ``--out`` is a file, stdin as an input,
            bad ``--actors``, or Ray Data is not installed.
    """
    from agentflow.cli.options import CliError

    if not args.out or args.out == "-":
        raise CliError("--engine ray writes files: --out must name a directory")
    if "-" in args.input:
        raise CliError("--engine ray reads files in Ray workers: stdin (-) is not an input there")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--engine ray: --out {args.out!r} is a file; it must be a directory")
    if getattr(args, "pdf", "auto") == "document":
        raise CliError("--engine ray sends PDFs as their text layers: --pdf document is for "
                       "--engine local")
    if args.actors < 1 or args.concurrency < args.actors:
        raise CliError("--engine ray: need --actors >= 1 and --concurrency >= --actors")
    from agentflow import ray as engine

    try:
        ray = engine._ray()
    except ImportError as exc:
        raise CliError(str(exc)) from None
    if not ray.is_initialized():
        ray.init(logging_level="WARNING", log_to_driver=False)  # RAY_ADDRESS, if set
    module_ref = args.schema.rpartition(":")[0]
    prepare = f"{module_ref}:prepare" if module is not None and hasattr(module, "prepare") else (
        None)
    done = engine.done_ids(out)
    start = time.perf_counter()
    ds = engine.read_documents(args.input, fmt=args.format, text_field=args.text_field,
                               id_field=args.id_field, prepare=prepare)
    if done:
        ds = ds.filter(lambda row: row["id"] not in done)
    if args.limit is not None:
        ds = ds.limit(args.limit)
    from agentflow.cli.options import chunking_for

    chunking = chunking_for(args, module)
    options: dict[str, Any] = {"chunking": chunking, "passes": args.passes,
                               "allow_partial": args.allow_partial, "max_chars": max_chars,
                               "ground": not getattr(args, "no_ground", False)}
    if module is not None and hasattr(module, "EXAMPLES"):  # resolved in each actor
        options["examples"] = engine.absolute_ref(f"{module_ref}:EXAMPLES")
    results = engine.extract_dataset(
        ds, args.schema, model=args.model, api_key=args.api_key, base_url=args.base_url,
        instructions=instructions, actors=args.actors, concurrency=args.concurrency, **options,
    ).materialize()
    engine.write_jsonl(results, out)
    total = results.count()
    ok = int(results.sum("ok") or 0) if total else 0
    failed = total - ok
    skipped = f", {len(done)} already done" if done else ""
    print(f"{ok} ok, {failed} failed{skipped}; {time.perf_counter() - start:.1f}s -> {out}/",
          file=sys.stderr)
    return 1 if failed else 0
