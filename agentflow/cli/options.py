"""What ``extract`` and its Ray engine share from the command line: the
defaults, the usage error, and the chunking a run's flags ask for."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from agentflow._secrets import register_secret
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.run_settings import run_settings
from agentflow.extraction.settings_changes import words
from agentflow.extraction.setup import SetupError

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_INSTRUCTIONS", "CliError", "chunking_for",
           "run_settings_of", "schema_refusal", "settings_refusal"]

DEFAULT_CONCURRENCY = 4
"""Calls in flight when neither ``--concurrency`` nor the model's profile
(``concurrent_requests``: the embedded model's decoding slots, 4 by default) says otherwise."""

DEFAULT_INSTRUCTIONS = (
    "Extract the requested fields from the document. Use only information present in "
    "the document."
)


CliError = SetupError
"""Bad usage: printed without a traceback, exit status 2 (an alias of ``SetupError``)."""


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


def schema_refusal(target: str, others: dict[str, int], schema: str, beside: str) -> SetupError:
    """The error of a run whose ``--out`` (``target``, a file or a Ray output
    directory) holds records of other schemas (``others``: fingerprint ->
    records); ``beside``: where ``--schema-changed new`` would write."""
    held = ", ".join(f"{fp} ({n} record{'s' * (n != 1)})" for fp, n in sorted(others.items()))
    return SetupError(
        f"--out {target} holds records of another schema ({held}); this run's schema is "
        f"{schema}. One output holds one schema: write to another one, or pass "
        f"--schema-changed new to write {beside}")


def run_settings_of(args: argparse.Namespace, instructions: str, max_chars: int | None,
                    chunking: Chunking | None) -> dict[str, str]:
    """The run's settings to stamp on its records (``agentflow.extraction.run_settings``)
    from its flags and what the schema module gave: ``instructions``, ``max_chars``,
    ``chunking`` and ``args.passes`` as the run uses them. The API key is
    masked wherever it would show (an endpoint that spells it in its path)."""
    register_secret(getattr(args, "api_key", None))
    return run_settings(
        model=args.model, base_url=args.base_url, instructions=instructions,
        passes=args.passes if args.passes is not None else 1, max_chars=max_chars,
        chunking=chunking, ground=not getattr(args, "no_ground", False),
        allow_partial=bool(getattr(args, "allow_partial", False)),
        fmt=getattr(args, "format", "auto"), pdf=getattr(args, "pdf", "auto"),
        text_field=getattr(args, "text_field", "text"), id_field=getattr(args, "id_field", "id"))


def settings_refusal(target: str, held: list[tuple[dict[str, str], int]],
                     settings: dict[str, str], beside: str) -> SetupError:
    """The error of a run whose ``--out`` (``target``) holds records of this
    schema made with other settings (``held``: each settings and its records;
    ``agentflow.extraction.settings_changes``), naming each setting that differs
    with its value in the records and in this run (no secret: values are recorded
    masked); ``beside``: where ``--schema-changed new`` would write."""
    changed = words((other, settings) for other, _ in held)
    n = sum(count for _, count in held)
    return SetupError(
        f"--out {target} holds {n} record{'s' * (n != 1)} of this schema made with other "
        f"settings ({'; '.join(changed)}): they are not what this run extracts, and it "
        "would skip their inputs as done. One output holds one schema and its settings: "
        f"write to another one, or pass --schema-changed new to write {beside}")
