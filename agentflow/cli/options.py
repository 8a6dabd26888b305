"""What ``extract`` and its Ray engine share from the command line: the
defaults, the usage error, and the chunking a run's flags ask for."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.settings_fingerprint import changed_settings
from agentflow.extraction.setup import SetupError

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_INSTRUCTIONS", "CliError", "chunking_for",
           "schema_refusal", "settings_refusal"]

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



def settings_refusal(target: str, held: list[tuple[dict[str, str], int]],
                     settings: dict[str, str], beside: str) -> SetupError:
    """The error of a run whose ``--out`` (``target``) holds records of this
    schema extracted with other settings (``held``: each settings and its
    records; ``agentflow.extraction.settings_fingerprint``); ``beside``: where
    ``--schema-changed new`` would write."""
    changed: list[str] = []
    for other, _ in held:
        changed += [c for c in changed_settings(other, settings) if c not in changed]
    n = sum(count for _, count in held)
    return SetupError(
        f"--out {target}: {' and '.join(changed)} changed since its {n} "
        f"record{'s' * (n != 1)} of this schema: they are not what this run extracts, and "
        "it would skip their inputs as done. One output holds one schema and its settings: "
        f"write to another one, or pass --schema-changed new to write {beside}")
