"""Vendor fault: a whole (non-streamed) 200 reply whose JSON body is cut off
or malformed failed the call at once.

A proxy that closes the connection early under its own ``Content-Length``,
a gateway that rewrites the body, or a server that crashed mid-write hands
back a 200 whose JSON ends mid-value (or holds a broken escape). The adapter
read it as "malformed reply ... not JSON", a ``ServerError`` flagged
retryable that nothing retried (the HTTP layer had already returned the
response). Now the whole body is checked before the response is returned,
as an empty or HTML 200 already is: an ``UnexpectedReplyError`` retried with
the usual backoff, and the last one names the status, the content type and
a masked excerpt of the body, saying whether it was cut off or malformed.

Served by each vendor's fake on 127.0.0.1 (whole replies), through the
public API."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import pytest

from agentflow import ReActAgent, UnexpectedReplyError
from agentflow.model import ChatModel
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeError, FakeReply, FakeServer
from tests.fakes.gemini import GeminiFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

KEY = "sk-proj-Zq81fA0c93kLmTr55eWq"

VENDORS: dict[str, tuple[type[FakeServer], Callable[[str], ChatModel]]] = {
    "openai": (OpenAIFake, lambda url: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key=KEY, settings=FAST)),
    "anthropic": (AnthropicFake, lambda url: AnthropicChatModel(
        "claude-3-5-haiku-latest", base_url=url, api_key=KEY, settings=FAST)),
    "gemini": (GeminiFake, lambda url: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key=KEY, settings=FAST)),
    "ollama": (OllamaFake, lambda url: OllamaChatModel("qwen3:8b", base_url=url,
                                                        settings=FAST)),
}

CUT = (b'{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":'
       b'{"role":"assistant","content":"The capital is Par')
MALFORMED = (b'{"id":"chatcmpl-1","choices":[{"message":{"role":"assistant","content":'
             b'"see C:\\data and key ' + KEY.encode() + b'"}}]}')
BODIES = {"cut": FakeError(200, CUT), "malformed": FakeError(200, MALFORMED)}


async def answer(vendor: str, fake: FakeServer) -> str:
    async with aclosing(VENDORS[vendor][1](fake.url)) as model:  # type: ignore[type-var]
        return (await ReActAgent("r", model).call("Capital of France?")).text


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_cut_or_malformed_json_200_is_retried(vendor: str, body: str) -> None:
    async with VENDORS[vendor][0]() as fake:
        fake.add(BODIES[body], FakeReply(text="Paris."))
        assert await answer(vendor, fake) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_retries_spent_name_status_type_and_a_masked_excerpt(vendor: str) -> None:
    async with VENDORS[vendor][0]() as fake:
        fake.default = BODIES["malformed"]
        with pytest.raises(UnexpectedReplyError) as info:
            await answer(vendor, fake)
    error: Any = info.value
    said = str(error)
    assert len(fake.requests) == FAST.max_retries + 1 and error.retryable
    assert error.status == 200 and "200" in said and "malformed" in said
    assert "application/json" in error.content_type and "application/json" in said
    assert error.excerpt.startswith('{"id":"chatcmpl-1"') and KEY not in said
    assert KEY not in error.excerpt


async def test_a_cut_body_says_cut_off() -> None:
    async with OpenAIFake() as fake:
        fake.default = BODIES["cut"]
        with pytest.raises(UnexpectedReplyError, match="cut off") as info:
            await answer("openai", fake)
    assert "The capital is Par" in info.value.excerpt
