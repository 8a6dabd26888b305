"""Vendor fault: ``\\n`` written between the values of a tool call's arguments.

Qwen3.5 (Flash) writes its arguments' layout as escapes outside any string:
``{"command": "view", "path": "/a.py", "view_range": \\n[2142, 2250]\\n\\n}``,
the two characters ``\\`` and ``n`` where JSON allows only whitespace
(https://github.com/OpenHands/software-agent-sdk/issues/2488). The arguments
were unreadable: the tool was never run and the output tool's value was
refused as "not JSON", on every retry alike. Such escapes between values are
now read as the whitespace they stand for; inside a string an escape is the
value's own and stays.

Served by the DashScope (Qwen) fake, streamed, through the public API."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.dashscope import DashScopeChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.dashscope import DashScopeFake
from tests.provider_scenarios import FAST

VIEW = r'{"path": "/src/query.py", "view_range": \n[2142, 2250]\n\n}'


class Lines(BaseModel):
    path: str
    view_range: list[int]
    note: str


def view(path: str, view_range: list[int]) -> str:
    """Show lines of a file.

    Args:
        path: the file.
        view_range: first and last line.
    """
    return f"{path}:{view_range[0]}-{view_range[1]}"


def _model(fake: DashScopeFake) -> DashScopeChatModel:
    return DashScopeChatModel("qwen3.5-flash", base_url=fake.url, api_key="k", stream=True,
                              settings=FAST)


async def test_escaped_layout_in_arguments_runs_the_tool() -> None:
    async with DashScopeFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("view", VIEW)]), FakeReply(text="Shown."))
        async with _model(fake) as model:
            events = [e async for e in ReActAgent("q", model, tools=[view]).stream("Show it")]
    results = [(e.output, e.is_error) for e in events if isinstance(e, ToolResult)]
    assert results == [("/src/query.py:2142-2250", False)]


async def test_escaped_layout_in_the_output_is_the_output() -> None:
    raw = r'{"path": "/src/query.py",\n"view_range": [1, 2],\n"note": "a\nb"\n}'
    async with DashScopeFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", raw)]))
        async with _model(fake) as model:
            agent = ReActAgent("q", model, output=OutputConfig(strategy=ToolStrategy()))
            events = [e async for e in agent.stream("Which lines?", Lines)]
    done = events[-1]
    assert isinstance(done, Complete)
    assert done.output == Lines(path="/src/query.py", view_range=[1, 2], note="a\nb")
    assert len(fake.requests) == 1
