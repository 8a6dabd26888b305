"""Vendor fault: an HTTP 200 whose JSON body is an error, not a reply.

OpenRouter answers 200 once a request is taken and reports a failure of the
upstream model in the body (``{"error": {"code": 502, "message": "Provider
returned error"}}``, openrouter.ai/docs, "Errors and Debugging"); other
OpenAI-compatible gateways do the same. The error was typed but never
retried, unlike the same failure sent as HTTP 502: one upstream hiccup failed
the call. It is now retried like its HTTP twin (a transient code), and raised
at once when it is not transient; a reply that merely mentions an error is a
reply.

Served by the OpenAI fake, whole replies, through the public API."""

from __future__ import annotations

import pytest

from agentflow import QuotaExceededError, ReActAgent, ServerError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

UPSTREAM = {"error": {"code": 502, "message": "Provider returned error",
                      "metadata": {"provider_name": "Upstream"}}}


def model_for(fake: OpenAIFake) -> OpenAIChatModel:
    return OpenAIChatModel("openai/gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)


async def test_a_transient_error_in_a_200_body_is_retried() -> None:
    async with OpenAIFake() as fake:
        fake.add_error(200, UPSTREAM)
        fake.add(FakeReply(text="Paris."))
        async with model_for(fake) as model:
            reply = await ReActAgent("r", model).call("Capital of France?")
    assert reply.text == "Paris."
    assert len(fake.requests) == 2


async def test_retries_spent_raise_the_typed_error() -> None:
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text="never")
        for _ in range(FAST.max_retries + 1):
            fake.add_error(200, UPSTREAM)
        async with model_for(fake) as model:
            with pytest.raises(ServerError) as info:
                await ReActAgent("r", model).call("Capital of France?")
    assert info.value.status == 502
    assert len(fake.requests) == FAST.max_retries + 1


async def test_a_lasting_error_in_a_200_body_is_not_retried() -> None:
    async with OpenAIFake() as fake:
        fake.add_error(200, {"error": {"code": 402, "message": "Insufficient credits"}})
        async with model_for(fake) as model:
            with pytest.raises(QuotaExceededError):
                await ReActAgent("r", model).call("Capital of France?")
    assert len(fake.requests) == 1


async def test_a_reply_that_mentions_an_error_is_a_reply() -> None:
    text = 'The log says "error": disk full.'
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text))
        async with model_for(fake) as model:
            reply = await ReActAgent("r", model).call("What does the log say?")
    assert reply.text == text
    assert len(fake.requests) == 1
