"""Whether an output is accepted (the structured-output engine, DESIGN.md §3
rule 4): the failures that reject it (``REJECTED``), and ``accepted``: the
user's validators, then, for a grounded call, the grounding and degeneracy
checks against the call's source (``source_of``, ``taken_of``: worked out
once per call)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentflow.errors import DegenerateOutputError, GroundingError, ModelRetry
from agentflow.execution import CallExecution
from agentflow.grounding.output_checks import call_source, call_taken, check_output
from agentflow.middleware._output_run import OutputRun
from agentflow.output.config import OutputConfig
from agentflow.output.parsing import NoJSONFound

__all__ = ["REJECTED", "accepted", "source_of", "taken_of"]


REJECTED = (ValidationError, ModelRetry, NoJSONFound, GroundingError, DegenerateOutputError)

def accepted(config: OutputConfig, ex: CallExecution, run: OutputRun, value: Any) -> Any:
    """Run the user's validators, then the grounding and degeneracy checks;
    the (possibly replaced) value, its spans recorded in ``ex.spans``.

    Raises:
        ModelRetry: from a validator.
        GroundingError / DegenerateOutputError: the checks failed.
    """
    for validator in config.validators:
        replaced = validator(value)
        if replaced is not None:
            value = replaced
    if run.grounded:
        ex.spans = _trusted(ex, run, value)
    return value

def source_of(ex: CallExecution, run: OutputRun) -> str:
    """The call's source text (``call_source``), worked out once per call."""
    if run.source is None:
        run.source = call_source(ex.inputs)
    return run.source


def taken_of(ex: CallExecution, run: OutputRun) -> frozenset[tuple[int, int]]:
    """Spans of the call's source an earlier extraction pass took as list
    items (``call_taken``, worked out once per call; empty for any other call)."""
    if run.taken is None:
        run.taken = call_taken(ex.inputs)
    return run.taken


def _trusted(ex: CallExecution, run: OutputRun, value: Any) -> dict[str, list[tuple[int, int]]]:
    """``check_output`` of ``value`` against the call's source."""
    return check_output(value, run.spec.output_type, run.ground, source_of(ex, run),
                        taken_of(ex, run), run.locators)
