"""OutputConfig defaults and validation; the engine's reminder messages."""

from __future__ import annotations

import pytest

from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    ReminderType,
)
from agentflow.output.config import OutputConfig
from agentflow.output.reminders import (
    TOOL_NAME,
    force_reminder,
    nudge,
    persistent_reminder,
    prompt_instruction,
)
from agentflow.output.strategies import AutoStrategy


def test_defaults() -> None:
    cfg = OutputConfig()
    assert isinstance(cfg.strategy, AutoStrategy)
    assert (cfg.max_forcing, cfg.output_retries, cfg.on_invalid, cfg.on_multiple) == (
        3, 2, "retry", "retry")


@pytest.mark.parametrize("kw", [{"max_forcing": -1}, {"output_retries": -2}])
def test_negative_budgets_are_refused(kw: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=">= 0"):
        OutputConfig(**kw)


def test_reminder_messages_are_tagged() -> None:
    enter = persistent_reminder(ReminderType.ENTER)
    assert enter.role == "system" and TOOL_NAME in enter.text
    assert enter.metadata == {STRUCTURED_OUTPUT_REMINDER: True,
                              STRUCTURED_OUTPUT_REMINDER_TYPE: "enter"}
    for msg, role in ((force_reminder(), "system"), (nudge(), "user")):
        assert msg.role == role and TOOL_NAME in msg.text
        assert msg.metadata[STRUCTURED_OUTPUT_REMINDER_TYPE] == "prompt"
        assert msg.metadata[CACHE_CONTROL] is False
    assert "JSON" in prompt_instruction('{"type": "object"}').text
