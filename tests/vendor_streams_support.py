"""Shared table of the stream fault tests (tests/test_fault_eventless_streams.py,
tests/test_fault_ignored_stream.py): each vendor's fake server and a model of
that vendor that streams, pointed at it."""

from __future__ import annotations

from collections.abc import Callable

from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

__all__ = ["VENDORS"]

VENDORS: dict[str, tuple[type[FakeServer], Callable[[str], ChatModel]]] = {
    "openai": (OpenAIFake, lambda url: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=True, settings=FAST)),
    "anthropic": (AnthropicFake, lambda url: AnthropicChatModel(
        "claude-3-5-haiku-latest", base_url=url, api_key="k", stream=True, settings=FAST)),
    "gemini": (GeminiFake, lambda url: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=True, settings=FAST)),
    "ollama": (OllamaFake, lambda url: OllamaChatModel(
        "qwen3:8b", base_url=url, stream=True, settings=FAST)),
}
"""Vendor name: its fake's type, and a streaming model of it given the fake's URL."""
