"""Failed output attempts in retry requests (middleware/output_history.py):
the latest one whole, older ones as one line of their errors, so retries do
not grow the prompt by a whole reply each; ``attempts_in_context=None`` keeps
them all; memory is tidied at call end as before."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.output_history import bound_attempts
from agentflow.model import ModelProfile
from agentflow.output.config import OutputConfig
from agentflow.testing import Call, Reply, ScriptedModel


class Item(BaseModel):
    name: str
    qty: int = Field(ge=1)


NATIVE = ModelProfile(native_output="json_schema", schema_dialect="openai_strict")
LOOP = "x" * 5000  # a degenerate reply: a whole one per attempt would be resent


def _texts(messages: tuple[Msg, ...]) -> str:
    return "\n".join(m.text for m in messages)


async def test_native_retries_keep_the_latest_attempt_whole() -> None:
    model = ScriptedModel([
        Reply(text='{"name": "' + LOOP + '", "qty": 0}'),
        Reply(text='{"name": "bolt", "qty": "many"}'),
        Reply(text='{"name": "bolt", "qty": -2}'),
        Reply(text='{"name": "bolt", "qty": 2}'),
    ], profile=NATIVE)
    agent = ReActAgent("a", model, output=OutputConfig(output_retries=3))
    reply = await agent.call("10 bolts", Item)
    assert reply.output == Item(name="bolt", qty=2)
    second, third, fourth = (_texts(r.messages) for r in model.requests[1:])
    assert LOOP in second  # one attempt so far: whole
    assert LOOP not in third and "attempt 1:" in third and "qty" in third
    assert '"qty": "many"' in third  # the latest attempt, whole
    assert LOOP not in fourth and '"qty": "many"' not in fourth
    assert "attempt 1:" in fourth and "attempt 2:" in fourth and '"qty": -2' in fourth
    assert len(model.requests[3].messages) == len(model.requests[2].messages)  # bounded


async def test_tool_path_retries_keep_the_latest_call_and_its_error() -> None:
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {"name": LOOP, "qty": 0})]),
        Reply(tool_calls=[Call("generate_response", {"name": "bolt"})]),
        Reply(tool_calls=[Call("generate_response", {"name": "bolt", "qty": 3})]),
    ])
    agent = ReActAgent("a", model, output=OutputConfig(output_retries=2))
    reply = await agent.call("3 bolts", Item, strategy="tool")
    assert reply.output == Item(name="bolt", qty=3)
    last = model.requests[2].messages
    calls = [c for m in last for c in m.tool_uses]
    results = [r for m in last for r in m.tool_results]
    assert [c.input for c in calls] == [{"name": "bolt"}]  # only the latest attempt
    assert [r.tool_use_id for r in results] == [calls[0].id] and results[0].is_error
    assert LOOP not in _texts(last) and "attempt 1:" in _texts(last)


async def test_none_keeps_every_attempt() -> None:
    model = ScriptedModel([
        Reply(text='{"name": "' + LOOP + '", "qty": 0}'),
        Reply(text='{"name": "bolt", "qty": 0}'),
        Reply(text='{"name": "bolt", "qty": 1}'),
    ], profile=NATIVE)
    agent = ReActAgent("a", model, output=OutputConfig(attempts_in_context=None))
    assert (await agent.call("1 bolt", Item)).output == Item(name="bolt", qty=1)
    assert LOOP in _texts(model.requests[2].messages)
    assert "attempt 1:" not in _texts(model.requests[2].messages)


def test_a_reply_that_also_called_other_tools_is_kept() -> None:
    """Its results must stay paired with its calls."""
    mixed = Msg("assistant", [ToolUseBlock("c1", "generate_response", {"qty": 0}),
                              ToolUseBlock("c2", "lookup", {"q": "x"})])
    answer = Msg("tool", [ToolResultBlock("c1", "bad", is_error=True, name="generate_response"),
                          ToolResultBlock("c2", "ok", name="lookup")])
    single = Msg("assistant", [ToolUseBlock("c3", "generate_response", {"qty": 0})])
    error = Msg("tool", [ToolResultBlock("c3", "qty: too small", is_error=True,
                                         name="generate_response")])
    go = Msg.user("go")
    messages = [go, mixed, answer, single, error]
    bounded = bound_attempts(messages, 0)
    assert bounded[:3] == [go, mixed, answer] and len(bounded) == 4
    assert "attempt 1: qty: too small" in bounded[3].text
    assert bound_attempts(messages, 1) is messages


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="attempts_in_context"):
        OutputConfig(attempts_in_context=-1)
