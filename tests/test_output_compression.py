"""``StructuredOutputCompression``: memory at call end holds no output-tool
call or result, no transient reminder and no failed attempt; everything
else stays as it was."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import AgentState, ReActAgent
from agentflow.messages import STRUCTURED_OUTPUT, STRUCTURED_OUTPUT_ATTEMPT, Msg, ToolUseBlock
from agentflow.testing import Call, Reply, ScriptedModel


class Contact(BaseModel):
    name: str
    email: str


OUTPUT = {"name": "Ann", "email": "ann@x.io"}


def lookup(q: str) -> str:
    """Look a person up."""
    return "ann@x.io"


def _output_calls(memory: list[Msg]) -> list[ToolUseBlock]:
    return [c for m in memory for c in m.tool_uses if c.name == "generate_response"]


async def test_output_call_and_result_leave_memory_text_and_other_calls_stay() -> None:
    earlier = Msg.user("earlier question", metadata={"note": "kept"})
    answer = Msg.assistant("earlier answer")
    state = AgentState(memory=[earlier, answer])
    model = ScriptedModel([
        Reply(text="looking", tool_calls=[Call("lookup", {"q": "ann"})]),
        Reply(text="here it is", tool_calls=[Call("generate_response", OUTPUT)]),
    ])
    agent = ReActAgent("a", model, tools=[lookup])
    reply = await agent.call("who is Ann?", Contact, state=state)
    assert reply.output == Contact(**OUTPUT)
    memory = state.memory
    assert memory[:2] == [earlier, answer]
    assert _output_calls(memory) == []
    assert not any(r.name == "generate_response" for m in memory for r in m.tool_results)
    # the business call and its result stay, as does the text next to the output call
    assert [c.name for m in memory for c in m.tool_uses] == ["lookup"]
    assert [r.output for m in memory for r in m.tool_results] == ["ann@x.io"]
    assert any(m.text == "here it is" for m in memory if m.role == "assistant")
    final = memory[-1]
    assert final.metadata.get(STRUCTURED_OUTPUT) and Contact.model_validate_json(final.text)


async def test_failed_attempts_leave_memory_and_the_next_call_starts_clean() -> None:
    state = AgentState()
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {"name": "Ann"})]),  # invalid: retried
        Reply(tool_calls=[Call("generate_response", OUTPUT)]),
        Reply(tool_calls=[Call("generate_response", OUTPUT)]),
    ])
    agent = ReActAgent("a", model)
    await agent.call("first", Contact, state=state)
    after_first = list(state.memory)
    # the invalid attempt and its error result are gone; one canonical answer
    assert [m.role for m in after_first if m.role != "system"] == ["user", "assistant"]
    assert not any(m.metadata.get(STRUCTURED_OUTPUT_ATTEMPT) for m in after_first)
    await agent.call("second", Contact, state=state)
    assert state.memory[:len(after_first)] == after_first
    assert [m.role for m in state.memory if m.role != "system"] == [
        "user", "assistant", "user", "assistant"]
    assert _output_calls(state.memory) == []
