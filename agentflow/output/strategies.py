"""Structured-output strategies and the pure policies that pick them.

Each policy is a small function whose docstring is its decision table; the
middleware calls them and never asks which vendor it talks to.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from agentflow.errors import UnsupportedFeature, UsageError
from agentflow.model import GenerateOptions, ModelProfile, ToolChoice

__all__ = [
    "AutoStrategy",
    "NativeStrategy",
    "OutputStrategy",
    "PromptStrategy",
    "StrategyKind",
    "StrategyName",
    "StructuredOutputReminder",
    "ToolStrategy",
    "as_strategy",
    "choose_strategy",
    "degrade",
    "forcing_choice",
]

StrategyKind: TypeAlias = Literal["native", "tool", "prompt"]


@dataclass(frozen=True, slots=True)
class NativeStrategy:
    """The vendor's own schema output (``response_format``, ``responseSchema``, ``format``)."""

    kind: Literal["native"] = "native"


@dataclass(frozen=True, slots=True)
class ToolStrategy:
    """A per-call ``generate_response`` tool whose arguments are the output."""

    kind: Literal["tool"] = "tool"


@dataclass(frozen=True, slots=True)
class PromptStrategy:
    """The schema in the instructions, JSON in the reply text, tolerant parsing."""

    kind: Literal["prompt"] = "prompt"


@dataclass(frozen=True, slots=True)
class AutoStrategy:
    """Pick from the model profile with ``choose_strategy`` (the default)."""

    kind: Literal["auto"] = "auto"


OutputStrategy: TypeAlias = NativeStrategy | ToolStrategy | PromptStrategy | AutoStrategy
StrategyName: TypeAlias = Literal["native", "tool", "prompt", "auto"]
"""An output strategy by name (``strategy="tool"``), read by ``as_strategy``."""

_BY_NAME: dict[str, OutputStrategy] = {
    "native": NativeStrategy(), "tool": ToolStrategy(), "prompt": PromptStrategy(),
    "auto": AutoStrategy()}


def as_strategy(value: Any) -> OutputStrategy:
    """``value`` as an ``OutputStrategy``: an instance as is, or its name
    (``"native"``, ``"tool"``, ``"prompt"``, ``"auto"``).

    Raises:
        UsageError: anything else, naming the value and the four choices.
    """
    if isinstance(value, (NativeStrategy, ToolStrategy, PromptStrategy, AutoStrategy)):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    raise UsageError(f"strategy={value!r} is not an output strategy; use one of "
                     f"{', '.join(map(repr, _BY_NAME))} or NativeStrategy(), ToolStrategy(), "
                     f"PromptStrategy(), AutoStrategy()")


class StructuredOutputReminder(StrEnum):
    """How a missed output is forced on the next request.

    ``TOOL_CHOICE``: ``tool_choice`` names the output tool (where the vendor
    enforces it); ``PROMPT``: a transient system reminder asks for it.
    """

    TOOL_CHOICE = "tool_choice"
    PROMPT = "prompt"


def choose_strategy(profile: ModelProfile, has_tools: bool) -> StrategyKind:
    """The strategy ``AutoStrategy`` binds to.

    ================  =========================  ==================  ========
    native_output     native_output_with_tools   supports_tools      result
    ================  =========================  ==================  ========
    set               True, or no tools given    any                 native
    set               False and tools given      True                tool
    None              -                          True                tool
    any other case                                                   prompt
    ================  =========================  ==================  ========
    """
    if profile.native_output is not None and (profile.native_output_with_tools or not has_tools):
        return "native"
    if profile.supports_tools:
        return "tool"
    return "prompt"


def degrade(
    kind: StrategyKind, feature: UnsupportedFeature, profile: ModelProfile
) -> StrategyKind | None:
    """One step down after the vendor refused ``feature`` at run time.

    ==========  ==============  =========================================
    kind        feature         result
    ==========  ==============  =========================================
    native      native_output   tool if the profile supports tools, else prompt
    tool        tools           prompt
    tool        tool_schema     prompt (the output tool's schema refused;
                                the agent's own tools stay)
    native      tools           native (the caller drops the agent's tools)
    prompt      tools           prompt (the caller drops the agent's tools)
    any other                   None (the error is not about the strategy)
    ==========  ==============  =========================================
    """
    if kind == "native" and feature == "native_output":
        return "tool" if profile.supports_tools else "prompt"
    if feature == "tools":
        return "prompt" if kind == "tool" else kind
    if feature == "tool_schema" and kind == "tool":
        return "prompt"
    return None


def forcing_choice(
    profile: ModelProfile,
    options: GenerateOptions,
    tool_name: str,
    preference: StructuredOutputReminder | None,
) -> ToolChoice | None:
    """The ``tool_choice`` that forces the output tool, or ``None`` to use a
    prompt reminder instead.

    ====================  =======================================  ==============
    preference            vendor enforces ``specific`` now         result
                          (profile modes, thinking considered)
    ====================  =======================================  ==============
    PROMPT                any                                      None
    TOOL_CHOICE or None   yes                                      specific(name)
    TOOL_CHOICE or None   no                                       None
    ====================  =======================================  ==============

    ``required`` is never used for forcing: with other tools declared, any
    of them would satisfy it.
    """
    if preference is StructuredOutputReminder.PROMPT:
        return None
    specific = ToolChoice.specific(tool_name)
    if profile.allows_tool_choice(specific, options):
        return specific
    return None
