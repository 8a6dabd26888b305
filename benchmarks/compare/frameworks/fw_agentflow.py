"""agentflow: ``ReActAgent.call(prompt, Contact, state=AgentState())``.

OpenAI-like profile: ``get_model("openai:gpt-4o-mini", base_url=...)`` (its
profile has native json_schema output, so the engine binds the native
strategy). GLM-like: the GLM adapter ``glm:glm-4.6`` (tool strategy, forcing
by prompt reminder since GLM only takes ``tool_choice="auto"``). MiniMax-like:
the OpenAI adapter with agentflow's MiniMax profile (tool_choice ignored).
Each call gets a fresh ``AgentState`` (separate states run in parallel).
``call()`` tells the model nobody reads deltas, so it fetches whole replies;
the ``agentflow-stream`` variant drains ``agent.stream()`` instead (SSE, partial
objects), to be judged against the raw streaming floor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from agentflow import AgentState, CallStarted, Complete, OutputPartial, ReActAgent
from agentflow.model import ChatModel
from agentflow.providers._http import HttpSettings
from agentflow.providers.registry import get_model

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build", "build_nostream", "build_stream"]


class AgentflowAdapter:
    """One agent over one model."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.agent = ReActAgent("bench", model)

    async def extract(self, prompt: str) -> Any:
        reply = await self.agent.call(prompt, Contact, state=AgentState())
        return reply.output

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        async with aclosing(self.agent.stream(prompt, Contact, state=AgentState())) as events:
            async for event in events:
                if isinstance(event, CallStarted):
                    continue  # emitted before the request is sent
                if isinstance(event, OutputPartial):
                    yield "partial", event.data
                elif isinstance(event, Complete):
                    yield "final", event.message.output
                else:
                    yield "event", None

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()


async def build(target: Target, **extra: Any) -> AgentflowAdapter:
    """The adapter for ``target`` (connection pool sized for its concurrency)."""
    settings = HttpSettings(connection_limit=max(128, target.concurrency))
    kw: dict[str, Any] = {"api_key": "sk-bench-dummy", "settings": settings, **extra}
    if target.profile == "glm":
        model = get_model(f"glm:{target.model}", base_url=target.url + "/api/paas/v4", **kw)
    elif target.profile == "minimax":
        from agentflow.providers.minimax import DEFAULT_PROFILE

        model = get_model(f"openai:{target.model}", base_url=target.openai_url,
                          profile=DEFAULT_PROFILE, **kw)
    else:
        model = get_model(f"openai:{target.model}", base_url=target.openai_url, **kw)
    return AgentflowAdapter(model)


class AgentflowStreamAdapter(AgentflowAdapter):
    """``extract`` drains ``agent.stream()`` (every event read) for the output."""

    async def extract(self, prompt: str) -> Any:
        output = None
        async with aclosing(self.agent.stream(prompt, Contact, state=AgentState())) as events:
            async for event in events:
                if isinstance(event, Complete):
                    output = event.message.output
        return output


async def build_stream(target: Target) -> AgentflowStreamAdapter:
    """The adapter whose ``extract`` streams (``agent.stream()`` drained)."""
    adapter = await build(target)
    return AgentflowStreamAdapter(adapter.model)


async def build_nostream(target: Target) -> AgentflowAdapter:
    """The same with whole (non-streamed) replies: a diagnostic that separates
    the cost of streaming from the rest of the call."""
    return await build(target, stream=False)
