"""``agentflow extract --engine ray``: the same flags, on a Ray cluster.

``--out`` is a directory of JSONL files written by Ray Data (one file per
output block, new files on each run); inputs with an ok record in any of them
are skipped, failed ones are tried again. Every record carries its schema's
fingerprint: a directory holding records of another schema is refused (exit
2), or with ``--schema-changed new`` the run writes the directory beside it
named by its fingerprint (``out.<fingerprint>``), as the local engine does
with a file. ``--concurrency`` is the total of
calls in flight, split over ``--actors`` actors (default: ``PER_ACTOR`` per
actor). The cluster is the one
``RAY_ADDRESS`` names, else a local one started here.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["PER_ACTOR", "run"]

PER_ACTOR = 4
"""Calls in flight per actor when ``--concurrency`` is not given (the local
engine's default, ``agentflow.cli.options.DEFAULT_CONCURRENCY``, in each actor)."""


def run(args: argparse.Namespace, module: ModuleType | None, instructions: str,
        max_chars: int | None) -> int:
    """Run ``extract`` on Ray; the exit status (0 all ok, 1 some failed).

    Raises:
        CliError: no ``--out`` directory, ``--out`` is a file, JSONL on stdin
            (stdin is read on the driver, as one document), bad ``--actors``, or
            Ray Data is not installed.
        SetupError: ``--out`` holds records of another schema (without
            ``--schema-changed new``), or the directory beside it does too; or
            an actor met a fault that is the run's (a wrong key, a spent
            quota: ``run_wide``), named with its type, as the local engine
            stops at one.
    """
    from agentflow.cli.options import CliError
    from agentflow.documents.names import printable

    if not args.out or args.out == "-":
        raise CliError("--engine ray writes files: --out must name a directory")
    if "-" in args.input and args.format == "jsonl":
        raise CliError("--engine ray reads stdin (-) on the driver, as one document: save "
                       "JSONL records to a file the Ray workers can read")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--engine ray: --out {printable(args.out)} is a file; it must be a "
                       "directory")
    if getattr(args, "pdf", "auto") == "document":
        raise CliError("--engine ray sends PDFs as their text layers: --pdf document is for "
                       "--engine local")
    if args.actors is None or args.actors < 1:
        raise CliError("--engine ray: need --actors >= 1")
    concurrency = args.concurrency if args.concurrency is not None else PER_ACTOR * args.actors
    if concurrency < args.actors:
        raise CliError(f"--engine ray: need --concurrency ({concurrency}) >= --actors "
                       f"({args.actors})")
    from agentflow import ray as engine

    # before the cluster: a refusal costs nothing
    from agentflow.cli.options import chunking_for, run_settings_of
    from agentflow.extraction.settings_fingerprint import settings_fingerprint
    from agentflow.extraction.setup import load_schema
    from agentflow.extraction.targets import check_new_files
    from agentflow.ray.refs import absolute_ref, ray_module

    chunking = chunking_for(args, module)
    settings = {**settings_fingerprint(load_schema(args.schema)[0], module),
                **run_settings_of(args, instructions, max_chars, chunking)}
    _refuse_an_input(out, args.input)
    out, held = _output_for_schema(out, _fingerprint(args.schema), args, settings)
    _refuse_an_input(out, args.input)  # (the folder beside it, with --schema-changed new)
    check_new_files(out, f"--out {printable(str(out))}/")  # records: written after each request
    done = held.done
    try:
        ray = ray_module()
    except ImportError as exc:
        raise CliError(str(exc)) from None
    if not ray.is_initialized():
        ray.init(logging_level="WARNING", log_to_driver=False)  # RAY_ADDRESS, if set
    # an actor's failure reaches the driver as the exception the actor raised (Ray Data wraps
    # it in UserCodeException otherwise, and its cause is lost on the way): _run_fault reads it
    ray.data.DataContext.get_current().raise_original_map_exception = True
    module_ref = args.schema.rpartition(":")[0]
    prepare = f"{module_ref}:prepare" if module is not None and hasattr(module, "prepare") else (
        None)
    start = time.perf_counter()
    ds = engine.read_documents(args.input, fmt=args.format, text_field=args.text_field,
                               id_field=args.id_field, prepare=prepare, exclude=out,
                               on_exclude=_skipped(out), on_skip=_not_followed)
    if done:  # the workers read the output files again: no set of ids shipped to them
        ds = ds.filter(engine.NotDone(held.files))
    if args.limit is not None:
        ds = ds.limit(args.limit)
    options: dict[str, Any] = {"chunking": chunking, "passes": args.passes,
                               "allow_partial": args.allow_partial, "max_chars": max_chars,
                               "ground": not getattr(args, "no_ground", False)}
    if module is not None and hasattr(module, "EXAMPLES"):  # resolved in each actor
        options["examples"] = absolute_ref(f"{module_ref}:EXAMPLES")
    results = engine.extract_dataset(
        ds, args.schema, model=args.model, api_key=args.api_key, base_url=args.base_url,
        instructions=instructions, actors=args.actors, concurrency=concurrency,
        settings=settings, **options,
    )
    try:
        results = results.materialize()
    except Exception as exc:  # a Ray task's failure: the run's own fault is raised as itself
        fault = _run_fault(exc)
        if fault is None:
            raise
        from agentflow.extraction.setup import SetupError

        raise SetupError(f"{type(fault).__name__}: {fault}") from None  # exit 2, as run locally
    engine.tell_listing_notes()  # the inputs left out, met by the listing task
    engine.write_jsonl(results, out)
    total = results.count()
    ok = int(results.sum("ok") or 0) if total else 0
    failed = total - ok
    skipped = f", {len(done)} already done" if done else ""
    print(f"{ok} ok, {failed} failed{skipped}; {time.perf_counter() - start:.1f}s -> "
          f"{printable(str(out))}/", file=sys.stderr)
    return 1 if failed else 0


def _run_fault(error: BaseException) -> BaseException | None:
    """The fault that is the run's (``run_wide``: a wrong key, a spent
    quota) carried by a Ray task's failure (``RayTaskError.cause``, the
    exception an actor's ``extract_many`` raised), or ``None``: then the
    failure is Ray's own, or a bug, and is raised as it is."""
    from agentflow.errors.run_wide import run_wide

    for _ in range(4):  # a task error wraps its cause once or twice; never loop on a cycle
        cause = getattr(error, "cause", None)
        if not isinstance(cause, BaseException) or cause is error:
            break
        error = cause
    return run_wide(error)


def _refuse_an_input(out: Path, specs: list[str]) -> None:
    """Refuse an ``--out`` folder the run reads as inputs (as the local engine
    refuses an ``--out`` file among them: ``agentflow.cli.out_file``): its
    records would be read back as documents on the next run.

    Raises:
        SetupError: naming the folder and the ``--input`` that reads it.
    """
    from agentflow.documents.named import out_dir_among_inputs
    from agentflow.documents.names import printable
    from agentflow.extraction.setup import SetupError

    found = out_dir_among_inputs(out, specs)
    if found is not None:
        spec, path = found
        raise SetupError(f"--out {printable(str(out))}/ is among the inputs (--input "
                         f"{printable(spec)} reads {printable(path)}): its records would be "
                         "read back as documents; write them to a folder outside the inputs")


def _skipped(out: Path) -> Callable[[Path], None]:
    """Say on stderr that an input file is left out: it is in the ``--out``
    folder (met under another name, as a link in an input folder)."""
    from agentflow.documents.names import printable

    def say(path: Path) -> None:
        print(f"agentflow: skipped {printable(str(path))}: it is in the --out folder "
              f"{printable(str(out))}/ (records are not read back as documents)",
              file=sys.stderr, flush=True)
    return say


def _not_followed(_path: Path, why: str) -> None:
    """Say on stderr that an entry of an input folder is left out (a link to a folder)."""
    from agentflow.documents.names import printable

    print(f"agentflow: skipped {printable(why)}", file=sys.stderr, flush=True)


def _fingerprint(ref: str) -> str:
    """The fingerprint of the schema ``ref`` names, as the actors stamp it."""
    from agentflow.extraction.fingerprint import schema_fingerprint
    from agentflow.extraction.setup import load_schema

    return schema_fingerprint(load_schema(ref)[0])


def _output_for_schema(out: Path, schema: str, args: argparse.Namespace,
                       settings: dict[str, str] | None = None) -> tuple[Path, Any]:
    """``out`` and what it holds, when it holds no record of another schema, nor
    of this one with other settings (``agentflow.extraction.settings_changes``, as
    the local engine compares them); else, with ``--schema-changed new``, the directory beside it
    named by the schema (``out.<schema>``; by the schema and its settings,
    ``run_fingerprint``, when only they changed) and what that holds.

    Raises:
        SetupError: another schema's (or other settings') records, and no
            ``--schema-changed new`` (or the directory beside ``out`` holds some too).
    """
    from agentflow import ray as engine
    from agentflow.cli.options import schema_refusal, settings_refusal
    from agentflow.documents.names import printable
    from agentflow.extraction.settings_changes import unlike_settings
    from agentflow.extraction.settings_fingerprint import run_fingerprint
    from agentflow.extraction.setup import SetupError

    settings = settings or {}
    held = engine.read_output_dir(out)
    others = {fp: n for fp, n in held.schemas.items() if fp != schema}
    unlike = unlike_settings(held.settings.values(), settings)
    if not others and not unlike:
        return out, held
    named = schema if others else run_fingerprint(schema, settings)  # settings alone: both
    beside = out.with_name(f"{out.name}.{named}")
    if getattr(args, "schema_changed", "refuse") != "new":
        if others:
            raise schema_refusal(f"{printable(str(out))}/", others, schema,
                                 f"{printable(str(beside))}/")
        raise settings_refusal(f"{printable(str(out))}/", unlike, settings,
                               f"{printable(str(beside))}/")
    if beside.exists() and not beside.is_dir():
        raise SetupError(f"--schema-changed new: {printable(str(beside))} is a file; it must "
                         "be a directory")
    what = "another schema" if others else "records of other settings"
    print(f"agentflow: {printable(str(out))}/ holds {what}; writing to "
          f"{printable(str(beside))}/", file=sys.stderr)
    held = engine.read_output_dir(beside)
    if any(fp != schema for fp in held.schemas) or unlike_settings(held.settings.values(),
                                                                   settings):
        raise SetupError(f"--schema-changed new: {printable(str(beside))}/ holds records of "
                         "another schema too")
    return beside, held

