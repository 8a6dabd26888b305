"""The strategy policies, tested as their decision tables."""

from __future__ import annotations

import pytest

from agentflow.model import GenerateOptions, ModelProfile, ToolChoice
from agentflow.output.strategies import (
    StructuredOutputReminder,
    choose_strategy,
    degrade,
    forcing_choice,
)

NATIVE = ModelProfile(native_output="json_schema")
NATIVE_NO_TOOLS_MIX = ModelProfile(native_output="json_schema", native_output_with_tools=False)
TOOLS_ONLY = ModelProfile()
NOTHING = ModelProfile(supports_tools=False)


@pytest.mark.parametrize(
    ("profile", "has_tools", "expected"),
    [
        (NATIVE, False, "native"),
        (NATIVE, True, "native"),
        (NATIVE_NO_TOOLS_MIX, False, "native"),
        (NATIVE_NO_TOOLS_MIX, True, "tool"),
        (TOOLS_ONLY, True, "tool"),
        (TOOLS_ONLY, False, "tool"),
        (NOTHING, False, "prompt"),
        (NOTHING.with_(native_output="json_schema", native_output_with_tools=False), True,
         "prompt"),
    ],
)
def test_choose_strategy(profile: ModelProfile, has_tools: bool, expected: str) -> None:
    assert choose_strategy(profile, has_tools) == expected


@pytest.mark.parametrize(
    ("kind", "feature", "profile", "expected"),
    [
        ("native", "native_output", TOOLS_ONLY, "tool"),
        ("native", "native_output", NOTHING, "prompt"),
        ("tool", "tools", TOOLS_ONLY, "prompt"),
        ("tool", "native_output", TOOLS_ONLY, None),
        ("prompt", "tools", TOOLS_ONLY, "prompt"),
        ("native", "tools", TOOLS_ONLY, "native"),
        ("native", "thinking", TOOLS_ONLY, None),
    ],
)
def test_degrade(kind: str, feature: str, profile: ModelProfile, expected: str | None) -> None:
    assert degrade(kind, feature, profile) == expected  # type: ignore[arg-type]


GLM_LIKE = ModelProfile(tool_choice_modes=frozenset({"auto"}))
THINKING = ModelProfile(
    supports_thinking=True, thinking_default=True, forced_tool_choice_with_thinking=False
)


@pytest.mark.parametrize(
    ("profile", "options", "preference", "expected"),
    [
        (TOOLS_ONLY, GenerateOptions(), None, ToolChoice.specific("gr")),
        (TOOLS_ONLY, GenerateOptions(), StructuredOutputReminder.TOOL_CHOICE,
         ToolChoice.specific("gr")),
        (TOOLS_ONLY, GenerateOptions(), StructuredOutputReminder.PROMPT, None),
        (GLM_LIKE, GenerateOptions(), None, None),
        (GLM_LIKE, GenerateOptions(), StructuredOutputReminder.TOOL_CHOICE, None),
        (THINKING, GenerateOptions(), None, None),
        (THINKING, GenerateOptions(thinking=False), None, ToolChoice.specific("gr")),
        (ModelProfile(tool_choice_modes=frozenset({"auto", "required"})), GenerateOptions(), None,
         None),
    ],
)
def test_forcing_choice(
    profile: ModelProfile,
    options: GenerateOptions,
    preference: StructuredOutputReminder | None,
    expected: ToolChoice | None,
) -> None:
    assert forcing_choice(profile, options, "gr", preference) == expected
