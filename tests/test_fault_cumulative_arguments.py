"""Vendor fault: a server that streams a tool call's arguments cumulatively.

Some OpenAI-compatible servers (DeepSeek and Baidu Qianfan in that mode,
NousResearch/hermes-agent#35592) send in each ``tool_calls[].function.arguments``
fragment the whole argument text so far instead of what it adds. Appended as
deltas they make ``{"ci{"city": "Pa{"city": "Paris"}``: a business tool got
corrupt arguments and an output call failed validation every time. Read as
what each fragment adds, the calls are whole; plain delta streams (the wire
format's rule) and the repeats other servers send are read as before.

Served by the OpenAI-style fakes (OpenAI, DeepSeek), through the public API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolStrategy
from agentflow.model import ChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[Callable[[], FakeServer], Callable[[str], ChatModel]]] = {
    "openai": (OpenAIFake, lambda url: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=True, settings=FAST)),
    "deepseek": (DeepSeekFake, lambda url: DeepSeekChatModel(
        "deepseek-chat", base_url=url, api_key="k", stream=True, settings=FAST)),
}
ORDER = {"customer": "Ana", "items": ["tea", "milk"], "total": 7.5}
CUMULATIVE = {"cumulative_arguments": True}


async def streamed(agent: ReActAgent, prompt: str, output: Any = None) -> Complete[Any]:
    """The ``Complete`` of a streamed call (``call()`` fetches whole replies)."""
    events = [e async for e in agent.stream(prompt, output)]
    assert isinstance(events[-1], Complete)
    return events[-1]


class Order(BaseModel):
    customer: str
    items: list[str]
    total: float


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_cumulative_output_arguments_are_read_once(vendor: str) -> None:
    make_fake, make_model = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", ORDER)], chunk_size=5,
                           extra=CUMULATIVE))
        model = make_model(fake.url)
        try:
            agent = ReActAgent("c", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await streamed(agent, "the order", Order)
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    assert reply.output == Order(**ORDER)
    assert len(fake.requests) == 1  # no retry: the first call was right


async def test_cumulative_parallel_tool_calls_run_with_their_own_arguments() -> None:
    seen: list[dict[str, Any]] = []

    def lookup(city: str, days: int) -> str:
        """The weather of a city.

        Args:
            city: the city.
            days: how many days ahead.
        """
        seen.append({"city": city, "days": days})
        return "sunny"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"city": "Paris", "days": 2}),
                                       FakeCall("lookup", {"city": "Oslo", "days": 3})],
                           chunk_size=4, extra=CUMULATIVE),
                 FakeReply(text="Sunny in both."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            reply = await streamed(ReActAgent("c", model, tools=[lookup]), "Weather?")
    assert reply.message.text == "Sunny in both."
    assert sorted(seen, key=str) == [{"city": "Oslo", "days": 3}, {"city": "Paris", "days": 2}]
    sent = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert [c["function"]["arguments"] for c in sent["tool_calls"]] == [
        '{"city":"Paris","days":2}', '{"city":"Oslo","days":3}']


class Note(BaseModel):
    note: str


@pytest.mark.parametrize(("arguments", "size"), [
    ('{"note": "{\\"note\\": \\"{\\"no"}', 7),  # JSON text inside a value
    ('{"note": "a"}', 30),  # whole in one fragment
])
async def test_delta_streams_are_read_as_before(arguments: str, size: int) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", arguments)],
                           chunk_size=size))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("c", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await streamed(agent, "x", Note)
    assert reply.output == Note.model_validate_json(arguments)
    assert fake.transports == ["stream"]
