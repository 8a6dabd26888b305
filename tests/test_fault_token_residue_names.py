"""Vendor fault: a tool call whose name carries chat-template token residue.

gpt-oss served by vLLM and Ollama sometimes names its call
``query_dataset<|channel|>commentary`` or ``create_event<|channel|>analysis``
(vllm-project/vllm#32587, ollama/ollama#12132): the Harmony header's tokens
leak into the name. The call was answered "tool not found" and the model
had to try again (a structured output cost a second request; a model that
repeated the mistake never got its tool). No tool name holds a special token
or outer blanks, so the name is cut at the first ``<|`` and stripped: the
tool runs at once. A name that is still no tool's is "tool not found" as
before.

Served by the OpenAI fake (a vLLM-like server) and the Ollama fake, streamed
and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def query_dataset(sql: str) -> str:
    """Run a query.

    Args:
        sql: the query.
    """
    return f"rows for {sql}"


class Event(BaseModel):
    summary: str
    start: str


@STREAMS
@pytest.mark.parametrize("name", [
    "query_dataset<|channel|>commentary", "query_dataset<|channel|>analysis",
    "query_dataset<|constrain|>json", " query_dataset "])
async def test_the_tool_runs_under_its_own_name(stream: bool, name: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall(name, {"sql": "select 1"})],
                           extra={"split_names": True}),
                 FakeReply(text="One row."))
        async with OpenAIChatModel("openai/gpt-oss-20b", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as chat:
            events = [e async for e in ReActAgent("d", chat, tools=[query_dataset])
                      .stream("Query it.")]
    assert [(e.name, e.output, e.is_error) for e in events if isinstance(e, ToolResult)] == [
        ("query_dataset", "rows for select 1", False)]
    assert len(fake.requests) == 2


@STREAMS
async def test_structured_output_in_one_request(stream: bool) -> None:
    data = {"summary": "Swim practice", "start": "2025-06-05T17:00:00-05:00"}
    async with OllamaFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response<|channel|>analysis", data)]))
        chat = OllamaChatModel("gpt-oss:20b", base_url=fake.url, stream=stream, settings=FAST)
        try:
            agent = ReActAgent("e", chat, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("the event", Event)
        finally:
            await chat.aclose()
    assert reply.output == Event(**data)
    assert len(fake.requests) == 1


async def test_a_name_that_is_still_no_tools_is_not_found() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("assistant<|channel|>analysis",
                                                {"sql": "select 1"})]),
                 FakeReply(text="Sorry."))
        async with OpenAIChatModel("openai/gpt-oss-20b", base_url=fake.url, api_key="k",
                                   settings=FAST) as chat:
            events = [e async for e in ReActAgent("d", chat, tools=[query_dataset])
                      .stream("Query it.")]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == 1 and results[0].is_error and results[0].name == "assistant"
