"""Vendor fault: a reasoning model that refuses the token-limit field or a
sampling value, and a server that refuses the newer token-limit field.

Azure OpenAI (and OpenAI-compatible hosts serving OpenAI's reasoning models)
answers 400 "Unsupported parameter: 'max_tokens' is not supported with this
model. Use 'max_completion_tokens' instead." (lobehub/lobehub#5909,
OpenHands/software-agent-sdk#1083, anomalyco/opencode#37964); older Azure API
versions answer "Unrecognized request argument supplied: max_completion_tokens"
(openai/openai-python#1724); o-series and GPT-5 answer "Unsupported value:
'temperature' does not support 0.2 with this model. Only the default (1) value
is supported." Every call that set a token limit (the structured-output engine
sets one itself on grounded extraction) failed with a ``BadRequestError``. The
request now goes again under the name the server takes, or without the
default-only value, and the model remembers it.

Served by OpenAI fakes with those refusals, whole and streamed."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import GenerateOptions, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class ReasoningDeployment(OpenAIFake):
    """A GPT-5 deployment on Azure: no ``max_tokens``, default temperature only."""

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if "max_tokens" in body:
            return openai_error(
                400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.", param="max_tokens",
                code="unsupported_parameter")
        if body.get("temperature", 1) != 1:
            return openai_error(
                400, f"Unsupported value: 'temperature' does not support "
                f"{body['temperature']} with this model. Only the default (1) value is "
                "supported.", param="temperature", code="unsupported_value")
        return super().validate(body)


class OldApiVersion(OpenAIFake):
    """An Azure API version from before ``max_completion_tokens``."""

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if "max_completion_tokens" in body:
            return openai_error(
                400, "Unrecognized request argument supplied: max_completion_tokens")
        return super().validate(body)


async def _ask(model: OpenAIChatModel, options: GenerateOptions) -> str:
    agent = ReActAgent("a", model, options=options)
    return (await agent.call("Capital of France?")).text


@STREAMS
async def test_max_tokens_refused_goes_as_max_completion_tokens(stream: bool) -> None:
    async with ReasoningDeployment() as fake:
        fake.default = FakeReply(text="Paris.")
        async with OpenAIChatModel("gpt-5-mini", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            options = GenerateOptions(max_tokens=300, stream=stream)
            assert await _ask(model, options) == "Paris."
            assert await _ask(model, options) == "Paris."  # remembered: no second refusal
    assert ["max_tokens" in b for b in fake.bodies] == [True, False, False]
    assert [b.get("max_completion_tokens") for b in fake.bodies] == [None, 300, 300]


async def test_a_default_only_temperature_is_sent_no_more() -> None:
    async with ReasoningDeployment() as fake:
        fake.default = FakeReply(text="Paris.")
        async with OpenAIChatModel("gpt-5-mini", base_url=fake.url, api_key="k",
                                   settings=FAST, max_tokens_field="max_completion_tokens"
                                   ) as model:
            assert await _ask(model, GenerateOptions(temperature=0.2)) == "Paris."
    assert [b.get("temperature") for b in fake.bodies] == [0.2, None]


async def test_max_completion_tokens_refused_goes_as_max_tokens() -> None:
    async with OldApiVersion() as fake:
        fake.default = FakeReply(text="Paris.")
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, api_key="k", settings=FAST,
                                   max_tokens_field="max_completion_tokens") as model:
            assert await _ask(model, GenerateOptions(max_tokens=300)) == "Paris."
    assert [(b.get("max_completion_tokens"), b.get("max_tokens")) for b in fake.bodies] == [
        (300, None), (None, 300)]
