"""Vendor fault: the server's ``x-should-retry`` header was not obeyed.

OpenAI and Anthropic answer errors with ``x-should-retry: true|false``, a
header of their own that their SDKs obey before the status
(openai-python and anthropic-sdk-python ``_base_client._should_retry``: "If
the server explicitly says whether or not to retry, obey"). Proxies in front
of them say ``false`` once their own retries are spent
(earendil-works/pi#6586, https://github.com/earendil-works/pi/issues/6586:
"My proxy owns provider retries internally and returns ``x-should-retry:
false`` when those retries are exhausted ... retry the entire request ...
causing duplicate work and unnecessary delays"). A 5xx or 529 so marked was
sent again up to ``max_retries`` times, and a 4xx marked ``true`` (a
transient refusal) was never retried. Both are obeyed now: the error's
``retryable`` says what the server said.

Served by the Anthropic and OpenAI fakes, through the public API."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from agentflow import BadRequestError, OverloadedError, ReActAgent, ServerError
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST


class City(BaseModel):
    name: str
    country: str


@contextlib.asynccontextmanager
async def _closing(model: AnthropicChatModel) -> AsyncIterator[AnthropicChatModel]:
    try:
        yield model
    finally:
        await model.aclose()


def _claude(fake: AnthropicFake) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                              settings=FAST)


ANSWER = '{"name": "Louvre", "country": "FR"}'


@pytest.mark.parametrize("header", ["x-should-retry", "X-Should-Retry"])
async def test_an_overload_the_server_says_not_to_retry_is_raised_at_once(header: str) -> None:
    async with AnthropicFake() as fake:
        fake.add(anthropic_error(529, "overloaded_error", "Overloaded", {header: "false"}),
                 FakeReply(text=ANSWER))
        async with _closing(_claude(fake)) as model:
            with pytest.raises(OverloadedError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert not caught.value.retryable
    assert len(fake.requests) == 1


async def test_a_server_error_the_server_says_not_to_retry_is_raised_at_once() -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(500, "The server had an error while processing your request.",
                              "server_error", headers={"x-should-retry": "false"}),
                 FakeReply(text=ANSWER))
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(ServerError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert not caught.value.retryable and len(fake.requests) == 1


async def test_a_refusal_the_server_says_to_retry_is_sent_again() -> None:
    async with AnthropicFake() as fake:
        fake.add(anthropic_error(400, "invalid_request_error", "Please retry this request.",
                                 {"x-should-retry": "true"}),
                 FakeReply(text=ANSWER))
        async with _closing(_claude(fake)) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert reply.output == City(name="Louvre", country="FR")
    assert len(fake.requests) == 2


@pytest.mark.parametrize("value", ["", "maybe"])
async def test_without_a_verdict_the_status_decides(value: str) -> None:
    async with AnthropicFake() as fake:
        verdict = {"x-should-retry": value}
        fake.add(anthropic_error(529, "overloaded_error", "Overloaded", verdict),
                 FakeReply(text=ANSWER), anthropic_error(400, "invalid_request_error", "bad",
                                                         verdict))
        async with _closing(_claude(fake)) as model:
            agent = ReActAgent("a", model)
            assert (await agent.call("Where is the Louvre?", City)).output is not None
            with pytest.raises(BadRequestError):
                await agent.call("Again?", City)
    assert len(fake.requests) == 3
