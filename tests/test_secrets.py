"""Credentials never leak: the shared mask, and every vendor adapter against a
fake that echoes the key it was sent (whole and as a prefix) in its
wrong-key error."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agentflow import ReActAgent
from agentflow._logging import get_logger
from agentflow._secrets import mask_secrets, mask_value, register_secret
from agentflow.errors import ProviderError
from agentflow.providers.registry import get_model
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake


def test_mask_hides_the_secret_and_echoed_prefixes() -> None:
    key = "sk-test-Q1w2E3r4T5y6U7i8O9p0"
    register_secret(key)
    assert mask_secrets(f"invalid x-api-key {key}.") == "invalid x-api-key ***."
    assert mask_secrets(f"key {key[:14]}... is wrong") == "key ***... is wrong"
    assert mask_secrets(f"{key}{key}") == "******"
    assert mask_secrets("sk-test") == "sk-test"  # shorter than MIN_PREFIX: ordinary text
    assert mask_value({"a": [f"x{key}"], "b": (key, 3)}) == {"a": ["x***"], "b": ("***", 3)}


def test_bearer_values_register_the_key_and_short_values_are_ignored() -> None:
    register_secret("Bearer tok-9f8e7d6c5b4a3")
    assert mask_secrets("got tok-9f8e7d6c5b4a3") == "got ***"
    register_secret("k")  # too short to be a key: masking it would garble words
    assert mask_secrets("kind") == "kind"


def test_logs_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    register_secret("log-secret-123456789")
    with caplog.at_level(logging.INFO, logger="agentflow.test"):
        get_logger("agentflow.test").info("event", detail="got log-secret-123456789 back")
    assert "log-secret" not in caplog.text and "detail='got *** back'" in caplog.text


VENDORS: list[tuple[str, type[FakeServer]]] = [
    ("openai:gpt-4o-mini", OpenAIFake),
    ("deepseek:deepseek-chat", DeepSeekFake),
    ("dashscope:qwen-plus", DashScopeFake),
    ("glm:glm-4.6", GLMFake),
    ("minimax:MiniMax-M2", MiniMaxFake),
    ("anthropic:claude-sonnet-4-5", AnthropicFake),
    ("gemini:gemini-2.5-flash", GeminiFake),
    ("ollama:qwen3:8b", OllamaFake),
]


@pytest.mark.parametrize(("spec", "fake_class"), VENDORS, ids=[v[0].split(":")[0] for v in VENDORS])
async def test_an_echoed_key_never_reaches_errors_reprs_or_logs(
    spec: str, fake_class: type[FakeServer], caplog: pytest.LogCaptureFixture
) -> None:
    key = f"sk-{spec.split(':')[0]}-live-8Hq2ZkW9xVt4LpN7"
    async with fake_class() as fake:
        fake.echo_key = True
        model = get_model(spec, base_url=fake.url, api_key=key)
        agent = ReActAgent("a", model)
        try:
            with caplog.at_level(logging.DEBUG, logger="agentflow"), pytest.raises(
                    ProviderError) as info:
                await agent.call("hi")
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    sent = fake.requests[0].headers
    assert key in str(sent)  # the key did travel, and the fake quoted it back...
    error: Any = info.value
    seen = [str(error), repr(error), error.message, str(error.args), repr(model), repr(agent),
            caplog.text]
    for text in seen:  # ...but nothing a person or a file sees holds it, whole or in part
        assert key not in text and key[:12] not in text, text
    assert "***" in error.message
