"""The set-up of an output call (DESIGN.md §3): what the structured-output
engine binds a call to that depends on the call's settings only, never on
its messages: the output type's spec, the strategy, the ``ground=`` marker
and whether the call grounds, and the few-shot example messages (and the
locators learned from them).

``StructuredOutputMiddleware`` keeps the last set-up it made and gives it to
the next call that asks the same (``OutputSetup.serves``: the same model and
profile, output type, has-tools, strategy, ``ground=`` and examples, and no
refusal since): an agent that extracts one type document after document
makes it once, and each call pays only for its own state (``OutputRun``).
A different type, tools, strategy, ``ground=``, examples or profile, or a
feature the vendor refused (which changes the strategy), makes a new one.

Everything a set-up holds is shared by the calls it serves, so none of it is
changed by a call: the spec and the markers are read-only, the example
messages are frozen ``Msg``s (inserted into each request, never into a
call's memory) and the locators are read only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow.grounding import Grounded
from agentflow.grounding.locators import learn_locators
from agentflow.messages import Msg
from agentflow.middleware.output_grounding import as_marker, has_markers
from agentflow.model import ChatModel, ModelProfile
from agentflow.output.examples import Example, check_examples, example_messages
from agentflow.output.schema import OutputSpec
from agentflow.output.strategies import StrategyKind

__all__ = ["OutputSetup", "make_setup"]


@dataclass(frozen=True, slots=True, eq=False)
class OutputSetup:
    """One output call's set-up, and the settings it was made for.

    Attributes:
        model / profile: the model and its profile when made (a model whose
            profile object changed is set up again).
        output_type / has_tools / strategy / ground_arg / examples_arg: the
            call's settings (``strategy``: the override or the engine's
            configured one; ``ground_arg`` / ``examples_arg``: the call's, or
            the engine's default).
        refusals: refusals the engine had heard of when it was made (a
            refusal since may change the strategy).
        spec / kind / ground / grounded / examples / locators: what
            ``OutputRun`` starts from (see there).
    """

    model: ChatModel
    profile: ModelProfile
    output_type: Any
    has_tools: bool
    strategy: Any
    ground_arg: Any
    examples_arg: Any
    refusals: int
    spec: OutputSpec
    kind: StrategyKind
    ground: Grounded | None
    grounded: bool
    examples: tuple[Msg, ...]
    locators: Mapping[str, Any]

    def serves(self, model: ChatModel, output_type: Any, has_tools: bool, strategy: Any,
               ground: Any, examples: Any, refusals: int) -> bool:
        """Whether a call with these settings may take this set-up. Compared
        by identity (a list of examples, which may be edited between calls,
        never serves: only a tuple is kept)."""
        return (self.output_type is output_type and self.model is model
                and self.profile is model.profile and self.has_tools == has_tools
                and self.strategy is strategy and self.ground_arg is ground
                and self.examples_arg is examples and self.refusals == refusals
                and (examples is None or type(examples) is tuple))


def make_setup(model: ChatModel, output_type: Any, has_tools: bool, strategy: Any,
               spec: OutputSpec, kind: StrategyKind, ground: Any,
               examples: Sequence[Example] | None, refusals: int) -> OutputSetup:
    """The set-up of a call with these settings (``spec``: the output type's,
    ``kind``: the strategy it binds).

    Raises:
        SchemaError: a ``Grounded()`` marker on a non-string field, or a
            ``ground=`` marker that cannot be every string's default.
        InvalidExampleError: an example that does not fit the type or its text.
    """
    marker = as_marker(ground)
    grounded = has_markers(output_type)
    grounded = marker is not None or grounded
    shown: tuple[Msg, ...] = ()
    locators: Mapping[str, Any] = {}
    if examples:
        checked = check_examples(examples, output_type, marker)
        shown = tuple(example_messages(checked, output_type))
        if grounded and model.profile.substring_grammar:
            locators = learn_locators(checked, output_type)
    return OutputSetup(model, model.profile, output_type, has_tools, strategy, ground, examples,
                       refusals, spec, kind, marker, grounded, shown, locators)
