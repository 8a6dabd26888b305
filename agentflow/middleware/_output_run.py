"""What the structured-output engine keeps for one call (``ex.extra``), shared
by the engine (``structured_output``) and the compression at call end
(``output_compression``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow.execution import CallExecution
from agentflow.grounding import Grounded
from agentflow.messages import Msg
from agentflow.output.partial import PartialOutput, ValueStarts
from agentflow.output.schema import OutputSpec
from agentflow.output.strategies import StrategyKind

__all__ = ["KEY", "NO_OUTPUT", "OutputRun", "run_of"]

NO_OUTPUT: Any = object()
"""``OutputRun.pending`` when no output waits."""

KEY = "structured_output"
"""The ``ex.extra`` key of a call's ``OutputRun``."""


@dataclass(eq=False, slots=True)
class OutputRun:
    """What the engine keeps for one call (in ``ex.extra``)."""

    spec: OutputSpec
    kind: StrategyKind
    has_tools: bool
    partial: PartialOutput
    strip_tools: bool = False
    prose_fallback: bool = False
    """The call stepped down from native to tool after a reply without JSON."""
    give_up: bool = False
    ground: Grounded | None = None
    grounded: bool = False
    source: str | None = None
    """The call's source text (``output_answers.source_of``: the caller's
    input messages, ``CallExecution.inputs``; worked out once per call)."""
    taken: frozenset[tuple[int, int]] | None = None
    """Spans of ``source`` an earlier extraction pass took as list items
    (``output_acceptance.taken_of``; worked out once per call)."""
    discards: int = 0
    last_invalid: Exception | None = None
    """The last output of the call that failed its checks (a tool call's
    arguments or a reply text that held one): a give-up says what was wrong."""
    examples: Sequence[Msg] = ()
    """The few-shot example messages put before the call's input in each
    request (the call's ``OutputSetup``'s: shared, never changed)."""
    locators: Mapping[str, Any] | None = None
    """Field name -> ``agentflow.grounding.locators.Locator`` learned from the
    call's examples: the only values a substring grammar offers the field."""
    pending: Any = NO_OUTPUT
    value_starts: ValueStarts | None = None
    """Where the latest JSON value of the streamed reply text starts (native
    and prompt paths under ``stream()``; made on first use)."""
    accepted: Msg | None = None
    """The reply whose text was accepted as the output: compression removes it
    like a failed attempt (no tagged copy is made for a reply that ends the call)."""
    """A valid output waiting for the reply's other tool calls (end strategy ``safe``)."""


def run_of(ex: CallExecution) -> OutputRun | None:
    """The call's ``OutputRun`` (``None``: the call asks no output)."""
    run: OutputRun | None = ex.extra.get(KEY)
    return run
