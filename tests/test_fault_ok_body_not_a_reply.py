"""Vendor fault: an HTTP 200 whose body is no reply at all, never retried.

A proxy, gateway or CDN in front of an API (Cloudflare's "Just a moment..."
challenge, a load balancer's error page, a captive portal) may answer a
request with a 200 HTML page; a server that crashed after its status line
sends a 200 with an empty body. Each failed the call at once ("malformed
reply: not JSON" quoting the whole page, or a stream "ended before its
terminal marker"), where the same hiccup sent as a 502 is retried. The
official SDKs (openai-python, anthropic-sdk-python: ``_response.py``) retry
by status only and hand such a body back as text, or raise
``APIResponseValidationError`` under strict validation. Here it is an
``UnexpectedReplyError``: retried with the usual backoff, and the last one
names the status, the content type and a short excerpt of the page, with
URLs' queries and the key masked.

Served by each vendor's fake on 127.0.0.1, streamed and whole, through the
public API."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import pytest

from agentflow import Complete, ReActAgent, UnexpectedReplyError
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
from tests.markup_scenarios import STREAMS
from tests.provider_scenarios import FAST
from tests.test_http import Raw, raw_server

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

CHALLENGE = (b"<!DOCTYPE html><html lang=\"en-US\"><head><title>Just a moment...</title>"
             b"<style>body{margin:0}</style><script>window._cf_chl_opt={cvId: '3'};</script>"
             b"</head><body><h1>Checking your browser before accessing the API.</h1>"
             b"<p>See https://gateway.example/help?session=abc123&token=" + KEY.encode()
             + b" for help.</p>" + b"<div>" + b"filler " * 400 + b"</div></body></html>")

BODIES = {
    "empty": FakeError(200, b""),
    "html-page": FakeError(200, CHALLENGE, {"content-type": "text/html; charset=UTF-8"}),
}


async def answer(vendor: str, fake: FakeServer, *, stream: bool) -> str:
    async with aclosing(VENDORS[vendor][1](fake.url)) as model:  # type: ignore[type-var]
        agent = ReActAgent("r", model)
        if not stream:
            return (await agent.call("Capital of France?")).text
        events = [e async for e in agent.stream("Capital of France?")]
        assert isinstance(events[-1], Complete)
        return events[-1].message.text


@STREAMS
@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_an_empty_or_html_200_is_retried(vendor: str, body: str, stream: bool) -> None:
    async with VENDORS[vendor][0]() as fake:
        fake.add(BODIES[body], FakeReply(text="Paris."))
        assert await answer(vendor, fake, stream=stream) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_page_mislabelled_as_json_is_retried(vendor: str) -> None:
    """A gateway's page under ``application/json``: told by its first tag
    (a whole reply is read before it is returned)."""
    async with VENDORS[vendor][0]() as fake:
        fake.add(FakeError(200, CHALLENGE), FakeReply(text="Paris."))
        assert await answer(vendor, fake, stream=False) == "Paris."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_retries_spent_name_the_status_type_and_a_masked_excerpt(vendor: str) -> None:
    async with VENDORS[vendor][0]() as fake:
        fake.default = BODIES["html-page"]
        with pytest.raises(UnexpectedReplyError) as info:
            await answer(vendor, fake, stream=False)
    error: Any = info.value
    assert len(fake.requests) == FAST.max_retries + 1 and error.retryable
    said = str(error)
    assert error.status == 200 and "200" in said
    assert error.content_type == "text/html; charset=UTF-8" and "text/html" in said
    assert error.excerpt.startswith("Just a moment... | Checking your browser")
    assert error.excerpt in said and len(error.excerpt) <= 160
    assert KEY not in said and "abc123" not in said, said
    assert "_cf_chl_opt" not in said and "margin" not in said  # script and style left out


async def test_an_empty_200_names_its_type_and_no_excerpt() -> None:
    async with OpenAIFake() as fake:
        fake.default = BODIES["empty"]
        with pytest.raises(UnexpectedReplyError) as info:
            await answer("openai", fake, stream=True)
    assert info.value.excerpt == "" and "empty body" in str(info.value)
    assert "application/json" in str(info.value)


@pytest.mark.parametrize("vendor", ["openai", "ollama"])
async def test_an_empty_chunked_body_is_told_too(vendor: str) -> None:
    """No ``Content-Length``: a chunked body that ends at once."""
    empty = Raw((b"",), headers={"Content-Type": "application/json"})
    async with raw_server(*[empty] * (FAST.max_retries + 1)) as (url, seen):
        model = VENDORS[vendor][1](url + ("/v1" if vendor == "openai" else ""))
        async with aclosing(model) as model:  # type: ignore[type-var]
            with pytest.raises(UnexpectedReplyError, match="empty body"):
                await ReActAgent("r", model).call("hi")
    assert len(seen) == FAST.max_retries + 1
