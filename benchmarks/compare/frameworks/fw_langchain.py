"""LangChain v1: ``create_agent(ChatOpenAI(...), tools=[], response_format=Contact)``;
``(await agent.ainvoke({"messages": [...]})).get("structured_response")``.

``response_format=Contact`` lets LangChain pick: ProviderStrategy (json_schema)
for models it knows have native structured output (gpt-4o-mini), else
ToolStrategy (a forced output tool) for glm-4.6 / MiniMax-M2. No partial
structured objects while streaming, so not in the streaming scenario.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build"]


class LangChainAdapter:
    """One compiled agent graph."""

    def __init__(self, target: Target) -> None:
        self.llm = ChatOpenAI(model=target.model, base_url=target.openai_url,
                              api_key="sk-bench-dummy")  # type: ignore[arg-type]
        self.agent = create_agent(self.llm, tools=[], response_format=Contact)

    async def extract(self, prompt: str) -> Any:
        result = await self.agent.ainvoke({"messages": [{"role": "user", "content": prompt}]})
        return result.get("structured_response")

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        raise NotImplementedError("LangChain agents do not stream partial structured objects")
        yield "event", None  # pragma: no cover

    async def aclose(self) -> None:
        client = getattr(self.llm, "root_async_client", None)
        if client is not None:
            await client.close()


async def build(target: Target) -> LangChainAdapter:
    """The adapter for ``target``."""
    return LangChainAdapter(target)
