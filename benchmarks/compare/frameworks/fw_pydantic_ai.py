"""Pydantic AI: ``Agent(model, output_type=Contact)``; ``await agent.run(prompt)``,
``agent.run_stream`` + ``stream_output(debounce_by=None)`` for partials.

OpenAI-like: ``OpenAIChatModel`` over ``OpenAIProvider(openai_client=...)``.
GLM-like: its own Z.AI model, ``ZaiModel("glm-4.6", provider=ZaiProvider(...))``
(the OpenAI client underneath). Default output mode (tool output), default
retries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build"]


class PydanticAIAdapter:
    """One agent over one model."""

    def __init__(self, model: Model, client: AsyncOpenAI) -> None:
        self.client = client
        self.agent: Agent[None, Contact] = Agent(model, output_type=Contact)

    async def extract(self, prompt: str) -> Any:
        result = await self.agent.run(prompt)
        return result.output

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        async with self.agent.run_stream(prompt) as result:
            yield "event", None
            async for partial in result.stream_output(debounce_by=None):
                yield "partial", partial
            yield "final", await result.get_output()

    async def aclose(self) -> None:
        await self.client.close()


async def build(target: Target) -> PydanticAIAdapter:
    """The adapter for ``target``."""
    if target.profile == "glm":
        from pydantic_ai.models.zai import ZaiModel
        from pydantic_ai.providers.zai import ZaiProvider

        client = AsyncOpenAI(base_url=target.url + "/api/paas/v4", api_key="sk-bench-dummy")
        model: Model = ZaiModel(target.model, provider=ZaiProvider(openai_client=client))
    else:
        client = AsyncOpenAI(base_url=target.openai_url, api_key="sk-bench-dummy")
        model = OpenAIChatModel(target.model, provider=OpenAIProvider(openai_client=client))
    return PydanticAIAdapter(model, client)
