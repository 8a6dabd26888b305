"""Framework adapters: one module per framework, each exposing
``async def build(target: Target) -> Adapter``.

An adapter makes the framework's idiomatic async structured-output call of
``Contact`` against the chaos server: ``extract(prompt)`` returns what the
framework returned (``None`` when it returned without data), ``stream(prompt)``
yields ``("event", None)`` for the first things the framework surfaces,
``("partial", data)`` for partial objects and ``("final", obj)`` at the end.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["FRAMEWORKS", "MODELS", "Adapter", "Framework", "StreamItem", "Target", "loader"]

StreamItem = tuple[Literal["event", "partial", "final"], Any]

MODELS: dict[str, str] = {
    "openai": "gpt-4o-mini", "glm": "glm-4.6", "minimax": "MiniMax-M2",
    # issue 32's fault profiles: OpenAI-like servers, each with one vendor fault
    "schema": "gpt-4o-mini", "no_usage": "gpt-4o-mini", "ctx": "gpt-4o-mini",
    "reasoning": "gpt-4o-mini", "router": "gpt-4o-mini", "proxy": "gpt-4o-mini",
}
"""The model name every framework asks for under each server profile."""


@dataclass(frozen=True)
class Target:
    """Where and how hard an adapter talks: the chaos server root URL, its
    vendor profile, and the concurrency the scenario will use."""

    url: str
    profile: str
    concurrency: int

    @property
    def model(self) -> str:
        """The model name for this profile."""
        return MODELS[self.profile]

    @property
    def openai_url(self) -> str:
        """The OpenAI-style base URL (``/v1``)."""
        return self.url + "/v1"


class Adapter(Protocol):
    """What a scenario drives."""

    async def extract(self, prompt: str) -> Any: ...

    def stream(self, prompt: str) -> AsyncIterator[StreamItem]: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Framework:
    """A benchmarked framework: its adapter module, the virtual environment it
    runs in, whether it streams partial objects, and what the row says."""

    module: str
    venv: Literal["main", "instructor"]
    streams_partials: bool
    label: str
    floor: bool = False
    builder: str = "build"
    diagnostic: bool = False
    """A variant shown for attribution only (not a peer)."""
    against: str = "raw"
    """The floor its ratios are taken against (same repeat)."""


FRAMEWORKS: dict[str, Framework] = {
    "agentflow": Framework("fw_agentflow", "main", True, "agentflow"),
    "agentflow-stream": Framework("fw_agentflow", "main", False,
                                  "agentflow `stream()` drained (× the raw streaming floor)",
                                  builder="build_stream", diagnostic=True, against="raw-stream"),
    "agentflow-nostream": Framework("fw_agentflow", "main", False,
                                    "agentflow, `stream=False` (diagnostic)",
                                    builder="build_nostream", diagnostic=True),
    "pydantic-ai": Framework("fw_pydantic_ai", "main", True, "Pydantic AI"),
    "langchain": Framework("fw_langchain", "main", False, "LangChain v1 create_agent"),
    "instructor": Framework("fw_instructor", "instructor", True, "Instructor"),
    "openai-agents": Framework("fw_openai_agents", "main", False, "OpenAI Agents SDK"),
    "openai-sdk": Framework("fw_floors", "main", True, "floor: openai SDK + model_validate_json",
                            floor=True, builder="build_openai_sdk"),
    "raw": Framework("fw_floors", "main", True, "floor: aiohttp + orjson + pydantic", floor=True,
                     builder="build_raw"),
    "raw-stream": Framework("fw_floors", "main", False,
                            "floor, streamed: aiohttp + SSE + orjson per chunk + pydantic",
                            floor=True, builder="build_raw_stream", against="raw-stream"),
}
"""Every benchmarked framework, by the name used on the command line."""


def loader(name: str) -> Callable[[Target], Awaitable[Adapter]]:
    """The build coroutine function of framework ``name``."""
    framework = FRAMEWORKS[name]
    module = importlib.import_module(f"{__name__}.{framework.module}")
    builder: Callable[[Target], Awaitable[Adapter]] = getattr(module, framework.builder)
    return builder
