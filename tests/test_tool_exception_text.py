"""A tool whose exception cannot be written as text (its ``__str__`` raises)
fails as any tool does: an error result the model reads, naming the class,
and the call goes on. The message being made crashed the call before, as a
bare ``RuntimeError`` from that ``__str__``."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, ToolError, ToolResult
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply


class Contact(BaseModel):
    name: str


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


class UnprintableToolError(ToolError):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


def _answer(request: RecordedRequest) -> Reply:
    if len(request.messages) < 3:
        return Reply(tool_calls=[Call("lookup", {"name": "Ann"})])
    return Reply(tool_calls=[Call("generate_response", {"name": "Ann"})])


@pytest.mark.parametrize("error", [Unprintable, UnprintableToolError])
async def test_a_tool_exception_whose_str_raises_is_an_error_result(
        error: type[Exception]) -> None:
    async def lookup(name: str) -> str:
        """Look a person up."""
        raise error()

    agent = ReActAgent("a", FunctionModel(_answer), tools=[lookup])
    results = [e async for e in agent.stream("find Ann", Contact) if isinstance(e, ToolResult)]
    assert [(r.is_error, r.output) for r in results] == [(True, (
        f"{error.__name__}: " if error is Unprintable else "") +
        "(its message could not be written: RuntimeError in __str__)")]
    reply = await agent.call("find Ann", Contact)
    assert reply.output == Contact(name="Ann")
