"""Shared scenario of the tool-call markup fault tests: a model that writes its
tool call into the reply text (Llama, Qwen, Mistral, gpt-oss forms), read
through the public API against the OpenAI fake, whole and streamed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from agentflow import Event, Msg, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

__all__ = ["STREAMS", "get_weather", "ollama_weather_results", "structured_reply", "text_reply",
           "weather_events"]

OutT = TypeVar("OutT", bound=BaseModel)

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
"""Each test once on a streamed reply, once on a whole one (``stream``)."""


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny"


async def weather_events(model: str, text: str, answer: str, *, stream: bool,
                         chunk_size: int, prompt: str = "Weather in Paris?") -> list[Event]:
    """The events of asking ``model`` (an OpenAI-compatible model name)
    ``prompt`` with ``get_weather`` as its tool, when it first writes ``text``
    (streamed ``chunk_size`` characters a chunk) and then ``answer``."""
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=chunk_size), FakeReply(text=answer))
        async with OpenAIChatModel(model, base_url=fake.url, api_key="k", stream=stream,
                                   settings=FAST) as chat:
            return [e async for e in ReActAgent("w", chat, tools=[get_weather])
                    .stream(prompt)]


async def ollama_weather_results(model: str, text: str, *, stream: bool,
                                 chunk_size: int = 6) -> list[str]:
    """The sorted ``get_weather`` results of asking Ollama's ``model`` about
    Paris and Rome, when it first writes ``text`` (streamed ``chunk_size``
    characters a chunk), then "Both sunny."."""
    async with OllamaFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=chunk_size), FakeReply(text="Both sunny."))
        async with OllamaChatModel(model, base_url=fake.url, stream=stream,
                                   settings=FAST) as chat:
            events = [e async for e in ReActAgent("w", chat, tools=[get_weather])
                      .stream("Weather in Paris and Rome?")]
    return sorted(e.output for e in events if isinstance(e, ToolResult))


async def structured_reply(model: str, text: str, output: type[OutT], *,
                           stream: bool) -> tuple[Msg[OutT], FakeServer]:
    """The reply of asking ``model`` (an OpenAI-compatible model name) for
    ``output`` through the tool strategy, when it writes ``text`` (streamed
    5 characters a chunk), and the fake that served it."""
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=5))
        async with OpenAIChatModel(model, base_url=fake.url, api_key="k", stream=stream,
                                   settings=FAST) as chat:
            agent = ReActAgent("w", chat, output=OutputConfig(strategy=ToolStrategy()))
            return await agent.call("the ticket", output), fake


async def text_reply(model: str, text: str, *, stream: bool,
                     tools: Sequence[Callable[..., Any]] = (),
                     prompt: str = "Weather?") -> tuple[Msg, FakeServer]:
    """The reply of asking ``model`` (an OpenAI-compatible model name)
    ``prompt`` with ``tools``, when it writes ``text`` (streamed 5 characters
    a chunk), and the fake that served it."""
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=5))
        async with OpenAIChatModel(model, base_url=fake.url, api_key="k", stream=stream,
                                   settings=FAST) as chat:
            return await ReActAgent("w", chat, tools=tools).call(prompt), fake
