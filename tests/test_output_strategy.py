"""``StrategyBook``: strategy decisions per model, has-tools and refusals."""

from __future__ import annotations

from agentflow.middleware.output_strategy import StrategyBook
from agentflow.model import ModelProfile
from agentflow.output.strategies import AutoStrategy, ToolStrategy
from agentflow.testing import ScriptedModel

NATIVE = ModelProfile(native_output="json_schema", schema_dialect="openai_strict")


def test_a_decision_is_made_again_after_a_refusal_of_that_model() -> None:
    book = StrategyBook()
    model, other = ScriptedModel([], profile=NATIVE), ScriptedModel([], profile=NATIVE)
    auto = AutoStrategy()
    assert book.strategy_for(model, False, auto) == "native"
    assert book.strategy_for(model, False, auto) == "native"  # the same question again
    book.refuse(model, "native_output")
    assert book.strategy_for(model, False, auto) == "tool"
    assert book.strategy_for(other, False, auto) == "native"  # another model: its own decision
    assert book.strategy_for(model, False, auto) == "tool"
    assert book.strategy_for(model, False, ToolStrategy()) == "tool"


def test_the_effective_profile_drops_only_what_that_model_refused() -> None:
    book = StrategyBook()
    model, other = ScriptedModel([], profile=NATIVE), ScriptedModel([], profile=NATIVE)
    assert book.effective_profile(model) is model.profile
    book.refuse(other, "native_output")
    assert book.effective_profile(model) is model.profile
    assert book.effective_profile(other).native_output is None
