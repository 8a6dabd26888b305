"""``agentflow extract --out FILE`` opened for a run: locked
(``agentflow.extraction.outfile``), holding one schema and one way of making
its records (``agentflow.extraction.settings_changes``), and never one of the
run's inputs (``agentflow.documents.named``; met under another name, left out
where the reader finds it)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agentflow.cli.options import schema_refusal, settings_refusal
from agentflow.documents.named import out_among_inputs
from agentflow.documents.names import printable
from agentflow.extraction.outfile import OutFile, open_out, waiting_notice
from agentflow.extraction.settings_changes import knows_the_run, unlike_settings
from agentflow.extraction.settings_fingerprint import run_fingerprint
from agentflow.extraction.setup import SetupError

__all__ = ["inputs_but_out", "open_for_run"]


def open_for_run(args: argparse.Namespace, schema: str,
                 settings: dict[str, str] | None = None) -> OutFile:
    """``--out``, locked, when it holds no record of another schema, nor of this
    one made with other settings (``agentflow.extraction.settings_changes``;
    records that predate a setting are not compared on it, and said); else, with
    ``--schema-changed new``, the file beside it named by the schema (by the
    schema and its settings, ``run_fingerprint``, when only they changed).

    Raises:
        SetupError: ``--out`` holds records of another schema or other settings
            (and no ``--schema-changed new``), or the new file does; ``--out``
            is one of the inputs.
    """
    settings = settings or {}
    out = open_out(args.out, wait=args.wait, on_wait=waiting_notice(args.out))
    try:
        _refuse_an_input(out, args)
    except BaseException:
        out.discard()
        raise
    others = {fp: n for fp, n in out.schemas.items() if fp != schema}
    unlike = _other_settings(out, settings)
    if not others and not unlike:
        _say_foreign_lines(out)
        _say_unknown_settings(out)
        return out
    out.close()
    path = Path(args.out)
    named = schema if others else run_fingerprint(schema, settings)  # settings alone: both
    beside = path.with_name(f"{path.stem}.{named}{path.suffix or '.jsonl'}")
    if getattr(args, "schema_changed", "refuse") != "new":
        if others:
            raise schema_refusal(printable(args.out), others, schema, printable(str(beside)))
        raise settings_refusal(printable(args.out), unlike, settings, printable(str(beside)))
    what = "another schema" if others else "records of other settings"
    print(f"agentflow: {printable(args.out)} holds {what}; writing to "
          f"{printable(str(beside))}", file=sys.stderr)
    new = open_out(str(beside), wait=args.wait, on_wait=waiting_notice(str(beside)))
    try:
        _refuse_an_input(new, args)
    except BaseException:
        new.discard()
        raise
    if any(fp != schema for fp in new.schemas) or _other_settings(new, settings):
        new.close()
        raise SetupError(f"--schema-changed new: {printable(str(beside))} holds records of "
                         "another schema (or other settings) too")
    _say_foreign_lines(new)
    _say_unknown_settings(new)
    return new


def _other_settings(out: OutFile, settings: dict[str, str]) -> list[tuple[dict[str, str], int]]:
    """The settings of ``out``'s records that differ from ``settings``, each with
    its record count (``agentflow.extraction.settings_changes``: records without
    settings are not compared, nor the run settings of records without them)."""
    return unlike_settings(out.settings.values(), settings)


def _say_unknown_settings(out: OutFile) -> None:
    """Say how many of ``out``'s records were written before agentflow recorded
    how a run made them (no ``"settings"``, or no run settings): they are not
    compared with this run's, and count as done."""
    n = out.without_settings + sum(c for s, c in out.settings.values() if not knows_the_run(s))
    if n:
        print(f"agentflow: --out {printable(str(out.path))}: {n} record{'s' * (n != 1)} "
              f"{'were' if n != 1 else 'was'} written before agentflow recorded the model and "
              "flags a run used: not compared with this run's (their inputs count as done; "
              "to redo them this way, write to another --out)", file=sys.stderr)


def _refuse_an_input(out: OutFile, args: argparse.Namespace) -> None:
    """Refuse an ``--out`` file the run also reads as an input (named as it is,
    through a link, in a folder or by a glob): records would be appended to a
    document, and read back as documents. Told from the paths, without listing
    a folder (``out_among_inputs``); one reached another way (a link to it in an
    input folder) is left out where the reader meets it (``inputs_but_out``).

    Raises:
        SetupError: naming the file and the ``--input`` that reads it.
    """
    found = out_among_inputs(out.path, out.fileno(), args.input)
    if found is None:
        return
    spec, path = found
    via = "" if spec == path else f", read through --input {printable(spec)}"
    raise SetupError(f"--out {printable(str(out.path))} is one of the inputs "
                     f"({printable(str(path))}{via}): records would be appended to a document "
                     "the run reads; write them to another file")


def inputs_but_out(out: OutFile | None) -> dict[str, Any]:
    """``read_ahead``'s keywords that leave ``out`` out of the inputs, met under
    a name the paths did not tell (a link to it in an input folder, a hard link),
    saying so on stderr: records are never read back as documents."""
    if out is None:
        return {}
    st = os.fstat(out.fileno())

    def skipped(path: Path) -> None:
        print(f"agentflow: skipped {printable(str(path))}: it is the --out file "
              f"{printable(str(out.path))} (records are not read back as documents)",
              file=sys.stderr, flush=True)

    return {"exclude": (st.st_dev, st.st_ino), "on_exclude": skipped}


def _say_foreign_lines(out: OutFile) -> None:
    """Say that ``--out`` holds lines that are not records (someone's notes) and
    what happens to them: kept as they are, the records appended after them."""
    if out.foreign:
        n = out.foreign
        print(f"agentflow: --out {printable(str(out.path))} holds {n} line{'s' * (n != 1)} "
              f"that {'are' if n != 1 else 'is'} not agentflow records: kept as "
              f"{'they are' if n != 1 else 'it is'}; records are appended after "
              f"{'them' if n != 1 else 'it'} (write to a .jsonl file of its own to keep "
              "records apart)", file=sys.stderr)
