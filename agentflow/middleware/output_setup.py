"""The set-up of an output call (DESIGN.md §3): what the structured-output
engine binds a call to that depends on the call's settings only, never on
its messages: the output type's spec, the strategy, the ``ground=`` marker
and whether the call grounds, and the few-shot example messages (and the
locators learned from them; examples a run's plan checked already,
``CheckedExamples``, are not checked again).

``StructuredOutputMiddleware`` keeps the last set-up it made and gives it to
the next call that asks the same (``OutputSetup.key``: the same output type,
model and profile, has-tools, strategy, ``ground=`` and examples, and no
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
from typing import Any, TypeAlias

from agentflow.grounding import Grounded
from agentflow.grounding.locators import learn_locators
from agentflow.messages import Msg
from agentflow.middleware.output_grounding import as_marker, has_markers
from agentflow.model import ChatModel, ModelProfile
from agentflow.output.examples import (
    CheckedExamples,
    Example,
    check_examples,
    example_messages,
)
from agentflow.output.schema import OutputSpec
from agentflow.output.strategies import StrategyKind

__all__ = ["OutputSetup", "SetupKey", "make_setup"]

SetupKey: TypeAlias = tuple[Any, ChatModel, ModelProfile, bool, Any, Any,
                            Sequence[Example] | None, int]
"""An output call's settings: output type, model, the model's profile,
has-tools, strategy, ``ground=``, examples, refusals heard so far."""


@dataclass(frozen=True, slots=True, eq=False)
class OutputSetup:
    """One output call's set-up, and the settings it was made for.

    Attributes:
        key: the settings, ``(output type, model, model.profile, has-tools,
            strategy, ground, examples, refusals)`` (``SetupKey``), compared as
            a tuple (each item by identity first, then ``==``): ``strategy``
            is the call's override or the engine's configured one, ``ground``
            / ``examples`` the call's or the engine's default, ``refusals``
            the refusals the engine had heard of (one since may change the
            strategy).
        spec / kind / ground / grounded / examples / locators: what
            ``OutputRun`` starts from (see there).
    """

    key: SetupKey
    spec: OutputSpec
    kind: StrategyKind
    ground: Grounded | None
    grounded: bool
    examples: tuple[Msg, ...]
    locators: Mapping[str, Any]

    @property
    def output_type(self) -> Any:
        """The output type it was made for."""
        return self.key[0]

    @property
    def model(self) -> ChatModel:
        """The model it was made for."""
        return self.key[1]

    @property
    def profile(self) -> ModelProfile:
        """The model's profile when it was made."""
        return self.key[2]

    @property
    def has_tools(self) -> bool:
        """Whether the model was offered tools."""
        return self.key[3]

    @property
    def strategy(self) -> Any:
        """The strategy asked for (the call's override or the engine's)."""
        return self.key[4]


def make_setup(key: SetupKey, spec: OutputSpec, kind: StrategyKind) -> OutputSetup:
    """The set-up of a call with the settings ``key`` (``spec``: the output
    type's, ``kind``: the strategy it binds).

    Raises:
        SchemaError: a ``Grounded()`` marker on a non-string field, or a
            ``ground=`` marker that cannot be every string's default.
        InvalidExampleError: an example that does not fit the type or its text.
    """
    output_type, model, ground, examples = key[0], key[1], key[5], key[6]
    marker = as_marker(ground)
    grounded = has_markers(output_type)
    grounded = marker is not None or grounded
    shown: tuple[Msg, ...] = ()
    locators: Mapping[str, Any] = {}
    if examples:
        checked = check_examples(examples, output_type, marker)
        shown = tuple(example_messages(checked, output_type))
        if grounded and model.profile.substring_grammar:
            locators = (examples.locators if isinstance(examples, CheckedExamples)
                        and examples.checked_for(output_type, marker)
                        else learn_locators(checked, output_type))
    return OutputSetup(key, spec, kind, marker, grounded, shown, locators)
