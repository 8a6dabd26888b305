"""OpenAI Agents SDK: ``Agent(output_type=Contact, model=OpenAIChatCompletionsModel(...))``;
``(await Runner.run(agent, prompt)).final_output``.

Chat Completions model over an ``AsyncOpenAI`` pointed at the fake (the fake
speaks Chat Completions, not Responses); tracing disabled. The output type is
sent as a strict json_schema ``response_format``. No partial structured
objects while streaming, so not in the streaming scenario.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build"]


class OpenAIAgentsAdapter:
    """One agent."""

    def __init__(self, target: Target) -> None:
        set_tracing_disabled(True)
        self.client = AsyncOpenAI(base_url=target.openai_url, api_key="sk-bench-dummy")
        model = OpenAIChatCompletionsModel(model=target.model, openai_client=self.client)
        self.agent = Agent(name="extractor", model=model, output_type=Contact)

    async def extract(self, prompt: str) -> Any:
        result = await Runner.run(self.agent, prompt)
        return result.final_output

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        raise NotImplementedError("the Agents SDK does not stream partial structured objects")
        yield "event", None  # pragma: no cover

    async def aclose(self) -> None:
        await self.client.close()


async def build(target: Target) -> OpenAIAgentsAdapter:
    """The adapter for ``target``."""
    return OpenAIAgentsAdapter(target)
