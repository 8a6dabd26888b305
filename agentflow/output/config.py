"""``OutputConfig``: an agent's structured-output settings and policies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import ValidationError

from agentflow._arguments import (
    check_choice,
    check_function,
    check_instance,
    check_int,
    check_list,
    check_optional,
)
from agentflow.errors import ModelRetry
from agentflow.grounding import Grounded
from agentflow.messages import ToolUseBlock
from agentflow.output.examples import Example
from agentflow.output.strategies import AutoStrategy, OutputStrategy, StructuredOutputReminder

__all__ = ["EndStrategy", "InvalidPolicy", "MultiplePolicy", "OutputConfig", "OutputValidator"]

InvalidPolicy: TypeAlias = (
    Literal["retry", "raise"] | Callable[[ValidationError | ModelRetry], str]
)
"""What to do with an output that fails validation: retry with the field
errors, raise ``StructuredOutputValidationError``, or retry with the message
the callable returns."""

MultiplePolicy: TypeAlias = (
    Literal["retry", "raise"] | Callable[[Sequence[ToolUseBlock]], ToolUseBlock | None]
)
"""What to do with several output calls in one reply: answer each with an
error asking for exactly one, raise ``MultipleStructuredOutputsError``, or
use the call the callable picks (``None``: retry)."""

EndStrategy: TypeAlias = Literal["safe", "early", "exhaustive"]
"""What a valid output-tool call means when the same reply calls other tools
too (after Pydantic AI's ``end_strategy``):

============  ===================================================================
strategy      decision
============  ===================================================================
``safe``      (default) run the other calls; accept the output only if none of
              them failed, else the model reads the failures and answers again
``early``     accept the output at once; the other calls are answered "Not
              executed" and never run
``exhaustive`` run the other calls and accept the output whatever they returned
============  ===================================================================

Every call keeps its result in memory. An invalid output is never accepted:
the other calls run and the model is asked again, whatever the strategy.
Nor is an output given beside calls that wait for a decision outside the
loop (a tool that needs approval, a client tool): whatever the strategy,
those calls never run here, the call pauses without its output, and the
model gives it again once they are decided."""

OutputValidator: TypeAlias = Callable[[Any], Any]
"""Runs on a validated output; returns a replacement (or ``None`` to keep it),
or raises ``ModelRetry(message)`` to ask the model again."""


@dataclass(frozen=True, slots=True)
class OutputConfig:
    """Structured-output settings of an agent.

    Attributes:
        strategy: ``AutoStrategy()`` (default) or a fixed strategy.
        reminder: how to force a missed output; ``None`` follows the profile.
        max_forcing: forcing retries per call (default 3).
        output_retries: validation retries per call, cumulative (default 2).
        on_invalid: an ``InvalidPolicy`` (default ``"retry"``).
        on_multiple: a ``MultiplePolicy`` (default ``"retry"``).
        validators: ``OutputValidator``s, run in order.
        ground: ground every free-text string leaf of every output (``True``
            or a ``Grounded`` giving the rules; see
            ``agentflow.grounding``); fields marked ``Grounded()``
            are grounded either way. A call's ``ground=`` overrides it.
        end_strategy: an ``EndStrategy`` (default ``"safe"``).
        examples: few-shot ``Example``s shown before every call's input
            (``agentflow.output.examples``); a call's ``examples=``
            overrides them. Checked against each call's output type before
            its first request (``InvalidExampleError``).
        attempts_in_context: failed output attempts each retry request holds
            whole, the latest ones (default 1: the last wrong output and its
            errors); older ones become one line each naming their errors
            (``agentflow.middleware.output_history``), so retries do not grow
            the prompt by a whole reply each. ``None`` keeps every attempt.

    Raises:
        ValueError: a negative retry count or ``attempts_in_context``, an
            unknown policy or ``end_strategy`` name.
        TypeError: a setting of the wrong type, naming it.
    """

    strategy: OutputStrategy = field(default_factory=AutoStrategy)
    reminder: StructuredOutputReminder | None = None
    max_forcing: int = 3
    output_retries: int = 2
    on_invalid: InvalidPolicy = "retry"
    on_multiple: MultiplePolicy = "retry"
    validators: tuple[OutputValidator, ...] = ()
    ground: bool | Grounded = False
    end_strategy: EndStrategy = "safe"
    examples: tuple[Example, ...] = ()
    attempts_in_context: int | None = 1

    def __post_init__(self) -> None:
        """Each setting checked (``agentflow._arguments``): a misspelt policy
        (``on_invalid="raize"``) was taken as ``"retry"``, silently.

        Raises:
            TypeError / ValueError: naming the setting, what it must be and
                what it got.
        """
        check_int("attempts_in_context", self.attempts_in_context, 0, optional=True)
        check_int("max_forcing", self.max_forcing, 0)
        check_int("output_retries", self.output_retries, 0)
        check_choice("end_strategy", self.end_strategy, ("safe", "early", "exhaustive"))
        check_choice("on_invalid", self.on_invalid, ("retry", "raise"), call=True)
        check_choice("on_multiple", self.on_multiple, ("retry", "raise"), call=True)
        check_instance("ground", self.ground, (bool, Grounded), "True, False or a Grounded()")
        check_optional("reminder", self.reminder, StructuredOutputReminder,
                       "a StructuredOutputReminder")
        check_list("validators", self.validators, "functions", kind=Sequence)
        for n, validator in enumerate(self.validators):
            check_function(f"validators[{n}]", validator, "a function (output -> output)")
