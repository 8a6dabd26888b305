"""agentflow: ``ReActAgent.call(prompt, Contact, state=AgentState())``.

OpenAI-like profile: ``get_model("openai:gpt-4o-mini", base_url=...)`` (its
profile has native json_schema output, so the engine binds the native
strategy). GLM-like: the GLM adapter ``glm:glm-4.6`` (tool strategy, forcing
by prompt reminder since GLM only takes ``tool_choice="auto"``). MiniMax-like:
the OpenAI adapter with agentflow's MiniMax profile (tool_choice ignored).
Each call gets a fresh ``AgentState`` (separate states run in parallel).
Issue 32's fault profiles use the OpenAI adapter (``router``: the tool
strategy, so the cut lands in tool-call arguments; ``ctx``: the profile knows
the server's window, ``CHAOS_N_CTX``) and count each call's usage: one that
says 0 tokens while the vendor reported none is a silent failure.
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
from agentflow.output.config import OutputConfig
from agentflow.output.strategies import ToolStrategy
from agentflow.providers._http import HttpSettings
from agentflow.providers.registry import get_model

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build", "build_nostream", "build_stream"]


CHAOS_N_CTX = 16
"""The ``ctx`` chaos profile's window (``ChaosSettings.n_ctx``), tokens."""
FAULT_PROFILES = frozenset({"schema", "no_usage", "ctx", "reasoning", "router", "proxy"})


class AgentflowAdapter:
    """One agent over one model. ``track_usage``: count each call's usage as
    reported (``usage_unreported``), unknown-but-said-zero (``usage_claims_zero``:
    a silent failure) or known."""

    def __init__(self, model: ChatModel, *, output: OutputConfig | None = None,
                 track_usage: bool = False) -> None:
        self.model = model
        self.agent = ReActAgent("bench", model, output=output)
        self.track_usage = track_usage
        self.usage_unreported = 0
        self.usage_claims_zero = 0

    async def extract(self, prompt: str) -> Any:
        if not self.track_usage:
            reply = await self.agent.call(prompt, Contact, state=AgentState())
            return reply.output
        complete: Complete | None = None  # call()'s own path, with its Complete kept
        events = self.agent._events(prompt, Contact, AgentState(), None, None, None,
                                    deltas=False)
        try:
            async for event in events:
                if isinstance(event, Complete):
                    complete = event
        finally:
            await events.aclose()
        assert complete is not None
        if complete.usage.unreported:
            self.usage_unreported += 1
        elif not complete.usage.total_tokens:
            self.usage_claims_zero += 1
        return complete.message.output

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
    elif target.profile == "ctx":
        from agentflow.providers.openai import OpenAIChatModel

        window = OpenAIChatModel(target.model, api_key="k").profile.with_(
            context_window=CHAOS_N_CTX)
        model = get_model(f"openai:{target.model}", base_url=target.openai_url,
                          profile=window, **kw)
    else:
        model = get_model(f"openai:{target.model}", base_url=target.openai_url, **kw)
    output = OutputConfig(strategy=ToolStrategy()) if target.profile == "router" else None
    return AgentflowAdapter(model, output=output, track_usage=target.profile in FAULT_PROFILES)


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
