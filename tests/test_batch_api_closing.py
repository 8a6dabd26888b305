"""Every vendor ``BatchAPI`` closes its HTTP sessions on leaving ``async
with`` (``_batch_http.ClosingBatchAPI``), as a model does: a call after the
block raises ``ModelClosedError`` (they had no ``async with``: a batch API
made by ``model.batch_api()`` had to be closed by hand or leaked its
sessions). Against the vendors' fakes on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import ModelClosedError, ProviderError
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VENDORS: dict[str, tuple[type[FakeServer], Any, str]] = {
    "openai": (OpenAIFake, OpenAIChatModel, "gpt-4o-mini"),
    "anthropic": (AnthropicFake, AnthropicChatModel, "claude-sonnet-4-5"),
    "gemini": (GeminiFake, GeminiChatModel, "gemini-2.5-flash"),
}


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_async_with_closes_the_batch_api_s_sessions(vendor: str) -> None:
    fake_type, model_type, name = VENDORS[vendor]
    async with fake_type() as fake, model_type(name, api_key="k", base_url=fake.url,
                                                 settings=FAST) as model:
        async with model.batch_api() as api:
            with pytest.raises(ProviderError):  # a live session: the fake's 404
                await api.status("batch-unknown")
        with pytest.raises(ModelClosedError):
            await api.status("batch-unknown")
        await api.aclose()  # idempotent
