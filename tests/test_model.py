"""Tests for agentflow.model: usage, options, profiles and resolve_model()."""


import pytest

import agentflow.model as model_module
from agentflow.errors import InvalidModelError
from agentflow.model import (
    ChatModel,
    GenerateOptions,
    ModelProfile,
    ToolChoice,
    Usage,
    resolve_model,
)
from agentflow.testing import ScriptedModel


def test_public_names_exist():
    for name in model_module.__all__:
        assert hasattr(model_module, name), name


# ----------------------------------------------------------------------------- data types


def test_usage_adds_fieldwise_and_totals():
    a = Usage(1, 2, 3, 4, 1)
    b = Usage(10, 20, 30, 40, 2)
    assert a + b == Usage(11, 22, 33, 44, 3)
    assert (a + b).total_tokens == 33
    assert Usage() + Usage() == Usage()


def test_tool_choice_modes():
    assert ToolChoice("auto") == ToolChoice.AUTO
    assert ToolChoice.NONE.mode == "none"
    assert ToolChoice.REQUIRED.mode == "required"
    s = ToolChoice.specific("lookup")
    assert (s.mode, s.name) == ("specific", "lookup")


def test_generate_options_with_returns_copy():
    base = GenerateOptions(max_tokens=10)
    changed = base.with_(temperature=0.5, tool_choice=ToolChoice.REQUIRED)
    assert base.temperature is None
    assert (changed.max_tokens, changed.temperature) == (10, 0.5)
    assert changed.tool_choice == ToolChoice.REQUIRED


def test_profile_with_converts_modes_to_frozenset():
    p = ModelProfile().with_(tool_choice_modes=["auto"], native_output="json_schema")
    assert p.tool_choice_modes == frozenset({"auto"})
    assert p.native_output == "json_schema"
    assert ModelProfile().native_output is None


@pytest.mark.parametrize(
    ("profile", "thinking_option", "active"),
    [
        (ModelProfile(), True, False),  # no thinking support
        (ModelProfile(supports_thinking=True), None, False),
        (ModelProfile(supports_thinking=True, thinking_default=True), None, True),
        (ModelProfile(supports_thinking=True, thinking_default=True), False, False),
        (ModelProfile(supports_thinking=True), True, True),
    ],
)
def test_thinking_active_table(profile, thinking_option, active):
    assert profile.thinking_active(GenerateOptions(thinking=thinking_option)) is active


_THINKING_NO_FORCE = ModelProfile(
    supports_thinking=True, thinking_default=True, forced_tool_choice_with_thinking=False
)


@pytest.mark.parametrize(
    ("profile", "choice", "options", "allowed"),
    [
        (ModelProfile(), ToolChoice.specific("x"), GenerateOptions(), True),
        (ModelProfile(tool_choice_modes=frozenset({"auto"})), ToolChoice.REQUIRED,
         GenerateOptions(), False),
        (ModelProfile(tool_choice_modes=frozenset({"auto"})), ToolChoice.AUTO,
         GenerateOptions(), True),
        (_THINKING_NO_FORCE, ToolChoice.specific("x"), GenerateOptions(), False),
        (_THINKING_NO_FORCE, ToolChoice.REQUIRED, GenerateOptions(), False),
        (_THINKING_NO_FORCE, ToolChoice.AUTO, GenerateOptions(), True),
        (_THINKING_NO_FORCE, ToolChoice.specific("x"), GenerateOptions(thinking=False), True),
    ],
)
def test_allows_tool_choice_table(profile, choice, options, allowed):
    assert profile.allows_tool_choice(choice, options) is allowed


# ----------------------------------------------------------------------------- resolve_model


def test_resolve_model_passes_chat_models_through():
    model = ScriptedModel()
    assert isinstance(model, ChatModel)
    assert resolve_model(model) is model


@pytest.mark.parametrize("bad", [object(), None, 42, ["scripted"]])
def test_resolve_model_rejects_non_models(bad):
    with pytest.raises(InvalidModelError) as info:
        resolve_model(bad)
    assert type(bad).__name__ in str(info.value)
    assert "ChatModel" in str(info.value)


def test_resolve_model_rejects_a_model_class():
    with pytest.raises(InvalidModelError):
        resolve_model(ScriptedModel)  # forgot the parentheses
