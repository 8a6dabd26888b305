"""Vendor fault: a streamed tool call's name split across fragments.

OpenAI sends a call's ``function.name`` once, whole; some OpenAI-compatible
streams split it the way they split the arguments (``"edit_ex"`` then
``"isting_file"``: Gemini's OpenAI-compatible endpoint, continuedev/continue#5849;
LM Studio, ankit373/hydra#957). The first fragment was kept as the name, so
the agent ran no tool ("unknown tool ``get_wea``") and the output tool was
never seen as called. Names folded, the calls run; a name repeated on every
fragment (vLLM, MiniMax via NVIDIA NIM) is still one name.

Served by the OpenAI fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

SPLIT = {"split_names": True}


class Forecast(BaseModel):
    city: str
    sky: str


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny"


async def _stream(agent: ReActAgent, output: Any = None) -> list[Any]:
    return [e async for e in agent.stream("Weather in Paris?", output)]


async def test_a_split_tool_name_runs_the_tool() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})], extra=SPLIT),
                 FakeReply(text="Sunny in Paris."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = await _stream(ReActAgent("w", model, tools=[get_weather]))
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.output, r.is_error) for r in results] == [
        ("get_weather", "Paris: sunny", False)]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "Sunny in Paris."


async def test_a_split_output_tool_name_is_the_output() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response",
                                                {"city": "Paris", "sky": "clear"})],
                           extra=SPLIT))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, output=OutputConfig(strategy=ToolStrategy()))
            events = await _stream(agent, Forecast)
    assert isinstance(events[-1], Complete)
    assert events[-1].output == Forecast(city="Paris", sky="clear")
    assert len(fake.requests) == 1
