"""What an ``agentflow extract`` run extracts with, from its flags and its
schema module: read once by the run, and again by each worker process
(``agentflow.cli.worker``) from the same flags, so both extract alike."""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from agentflow import errors
from agentflow.cli.options import DEFAULT_INSTRUCTIONS, CliError, chunking_for
from agentflow.errors import InvalidExampleError, InvalidModelError
from agentflow.extraction.budget import Chunking
from agentflow.extraction.chunked import check_items
from agentflow.extraction.defaults import extraction_marker
from agentflow.extraction.setup import SetupError, check_module_settings, load_schema
from agentflow.grounding import Grounded
from agentflow.model import resolve_model
from agentflow.output.examples import CheckedExample, check_examples

__all__ = ["RunPlan", "model_of", "plan_of"]


@dataclass(frozen=True)
class RunPlan:
    """The schema and the ``extract_many`` settings of a run.

    Attributes:
        output_type: the schema (``--schema``).
        module: the module defining it (``None`` for a JSON Schema file).
        instructions: ``--instructions``, else the module's ``INSTRUCTIONS``,
            else ``DEFAULT_INSTRUCTIONS``.
        prepare: the module's ``prepare`` hook, if any.
        max_chars: ``--max-chars``, else the module's ``MAX_CHARS``.
        passes: ``--passes``, else the module's ``PASSES``, else 1.
        examples: the module's ``EXAMPLES`` (as written; checked), if any.
        checked: the examples as ``check_examples`` returns them (``()``: none).
        chunking: how long documents are split (``None``: sent whole).
    """

    output_type: Any
    module: ModuleType | None
    instructions: str
    prepare: Any
    max_chars: int | None
    passes: int
    examples: Any
    checked: tuple[CheckedExample, ...]
    chunking: Chunking | None


def plan_of(args: argparse.Namespace) -> RunPlan:
    """The run's ``RunPlan``; sets ``args.passes`` to the plan's.

    Raises:
        CliError: a bad ``PASSES``, ``--items`` or ``CHUNKING``.
        SetupError: the schema cannot be loaded, or its module's settings or
            ``EXAMPLES`` are wrong.
    """
    output_type, module = load_schema(args.schema)  # set-up first: nothing is asked before
    check_module_settings(module, args.schema)
    instructions = args.instructions or getattr(module, "INSTRUCTIONS", DEFAULT_INSTRUCTIONS)
    max_chars = args.max_chars or getattr(module, "MAX_CHARS", None)
    args.passes = args.passes if args.passes is not None else getattr(module, "PASSES", 1)
    if not isinstance(args.passes, int) or isinstance(args.passes, bool) or args.passes < 1:
        raise CliError(f"{args.schema}: PASSES must be an int >= 1, got {args.passes!r}")
    examples = getattr(module, "EXAMPLES", None)
    checked: tuple[CheckedExample, ...] = ()
    if examples is not None:
        try:
            checked = check_examples(examples, output_type,
                                     _cli_marker(args, examples, output_type))
        except InvalidExampleError as exc:
            raise SetupError(f"{args.schema}: EXAMPLES: {exc}") from None
    chunking = chunking_for(args, module)
    try:
        check_items(output_type, chunking.items if chunking is not None else None)
    except errors.UsageError as exc:
        raise CliError(f"--items / CHUNKING: {exc}") from None
    return RunPlan(output_type, module, instructions, getattr(module, "prepare", None),
                   max_chars, args.passes, examples, checked, chunking)


def _cli_marker(args: argparse.Namespace, examples: Any, output_type: Any) -> Grounded | None:
    """The run's grounding default: none under ``--no-ground``, else the
    extraction default relaxed by the examples (``agentflow.extraction.defaults``)."""
    return None if getattr(args, "no_ground", False) else extraction_marker(examples, output_type)


def model_of(args: argparse.Namespace) -> Any:
    """The model ``--model`` names, with ``--base-url``, ``--api-key`` and (the
    embedded model) ``--threads`` and ``--concurrency`` as its slots.

    Raises:
        SetupError: ``--threads`` for a vendor model, or a flag the model's
            class does not take.
        InvalidModelError: a bad model name or setting.
    """
    local = args.model.split(":", 1)[0] == "local"
    threads = getattr(args, "threads", None)
    if threads is not None and not local:
        raise SetupError(f"--threads is for the embedded model (--model local), not {args.model}")
    if not (args.base_url or args.api_key or local):
        return resolve_model(args.model)
    registry = importlib.import_module("agentflow.providers.registry")
    kwargs: dict[str, Any] = {
        k: v for k, v in (("base_url", args.base_url), ("api_key", args.api_key)) if v}
    if local:  # the embedded model: --threads, and one decoding slot per call in flight
        kwargs |= {k: v for k, v in (("threads", threads), ("parallel", args.concurrency))
                   if v is not None}
    try:
        return registry.get_model(args.model, **kwargs)
    except InvalidModelError:  # a bad setting (AGENTFLOW_THREADS=abc): its own message
        raise
    except TypeError as exc:  # a model class without that keyword (the embedded one)
        flags = " or ".join(f"--{name.replace('_', '-')}" for name in kwargs)
        raise SetupError(f"--model {args.model}: takes no {flags} ({exc})") from None
