"""What a user reaches for first: ``extract_many`` beside ``extract_many_sync``
at the top level, tool events that show the agent's tools only (never the
internal output tool), and a model string without its vendor prefix answered
with the prefixed form to use."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import BaseModel

import agentflow
from agentflow import (
    Complete,
    InvalidModelError,
    ModelProfile,
    OutputPartial,
    OutputRetry,
    ReActAgent,
    ToolResult,
    ToolUse,
)
from agentflow.providers.registry import get_model, suggestions
from agentflow.testing import Call, Reply, ScriptedModel

GR = "generate_response"


class Contact(BaseModel):
    name: str
    email: str


def lookup(name: str) -> str:
    """Look a person up."""
    return f"{name}: ann@x.io"


async def test_extract_many_is_exported_beside_its_sync_twin() -> None:
    from agentflow.batch import ExtractResult, extract_many
    from agentflow.sync import extract_many_sync

    assert agentflow.extract_many is extract_many
    assert agentflow.extract_many_sync is extract_many_sync
    assert agentflow.ExtractResult is ExtractResult
    assert {"extract_many", "extract_many_sync", "ExtractResult"} <= set(agentflow.__all__)
    model = ScriptedModel([Reply(tool_calls=[Call(GR, {"name": "Ann", "email": "a@x"})])])
    results = [r async for r in agentflow.extract_many(model, ["Ann, a@x"], Contact)]
    assert results[0].output == Contact(name="Ann", email="a@x")


def test_import_agentflow_does_not_load_the_batch_layer() -> None:
    code = ("import sys, agentflow; print('agentflow.batch' in sys.modules); "
            "agentflow.extract_many; print('agentflow.batch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


async def test_the_output_tool_is_not_a_tool_event() -> None:
    """The agent's own tool shows as ``ToolUse``/``ToolResult``; the output
    tool's calls, refused one and accepted one, do not: the output is
    ``OutputPartial``/``Complete`` (``OutputRetry`` for the refused one)."""
    model = ScriptedModel([
        Reply(tool_calls=[Call("lookup", {"name": "Ann"}, id="t1")]),
        Reply(tool_calls=[Call(GR, {"name": "Ann"}, id="bad")]),  # invalid: retried
        Reply(tool_calls=[Call(GR, {"name": "Ann", "email": "ann@x.io"}, id="ok")],
              chunk_size=6),
    ], profile=ModelProfile())
    agent = ReActAgent("a", model, tools=[lookup])
    events = [e async for e in agent.stream("Who is Ann?", Contact)]
    assert [(e.id, e.name) for e in events if isinstance(e, ToolUse)] == [("t1", "lookup")]
    assert [(e.id, e.name) for e in events if isinstance(e, ToolResult)] == [("t1", "lookup")]
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["validation"]
    assert any(isinstance(e, OutputPartial) for e in events)
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.output == Contact(name="Ann", email="ann@x.io")
    # the output tool's calls stay in the conversation the model reads
    assert GR in [c.name for m in model.requests[-1].messages for c in m.tool_uses]


@pytest.mark.parametrize(("bare", "prefixed"), [
    ("gpt-4o-mini", "openai:gpt-4o-mini"),
    ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
    ("gemini-2.5-flash", "gemini:gemini-2.5-flash"),
    ("deepseek-chat", "deepseek:deepseek-chat"),
])
def test_a_bare_model_name_gets_the_prefixed_form(bare: str, prefixed: str) -> None:
    with pytest.raises(InvalidModelError) as info:
        get_model(bare)
    assert f"did you mean {prefixed!r}" in str(info.value)
    with pytest.raises(InvalidModelError, match=f"did you mean {prefixed!r}"):
        ReActAgent("a", bare)
    assert suggestions(bare)[0] == prefixed


def test_suggestions_come_from_the_registry_tables() -> None:
    """A name that no vendor's table knows gets the generic hint, not a guess."""
    assert suggestions("no-such-model-xyz") == []
    with pytest.raises(InvalidModelError) as info:
        get_model("no-such-model-xyz")
    message = str(info.value)
    assert "did you mean" not in message
    assert "'vendor:model'" in message and "openai" in message
    with pytest.raises(InvalidModelError) as info:  # a prefix that is no vendor
        get_model("opneai:gpt-4o-mini")
    assert "unknown vendor 'opneai'" in str(info.value) and "did you mean" not in str(info.value)
