"""Which SDK witnesses which vendor (see ``tests.sdk._witness`` for what a
witness does)."""

from __future__ import annotations

from collections.abc import Callable

from ._witness import Witness
from .witness_native import AnthropicWitness, GeminiWitness, OllamaWitness
from .witness_openai import DeepSeekWitness, GLMWitness, MiniMaxWitness, OpenAIWitness

__all__ = ["WITNESSES", "Witness"]

WITNESSES: dict[str, Callable[[], Witness]] = {
    "openai": OpenAIWitness,
    "deepseek": DeepSeekWitness,
    "dashscope": OpenAIWitness,
    "minimax": MiniMaxWitness,
    "glm": GLMWitness,
    "anthropic": AnthropicWitness,
    "gemini": GeminiWitness,
    "ollama": OllamaWitness,
}
