"""Engine fault: a failed structured output lost the tokens it cost.

When a call could not get its output after N requests (validation retries
spent, forcing spent, ``on_invalid="raise"``, ``on_multiple="raise"``), the
``StructuredOutputError`` said how many requests it made (``attempts``) but
not what they cost: a caller of ``call()`` had no ``Complete`` to read it
from, and an extraction record of a document whose error was raised mid-call
reported zero usage although every request was paid for. The error now
carries ``usage`` (a ``Usage``, the call's total as ``Complete.usage`` would
say it), and a failed document's record reports it. The same kind for a
vendor error that ends a call after some replies (a 400 or a content filter
on the retry): a ``ProviderError`` leaving a call carries the call's usage too.

Served by the OpenAI fake (native JSON output and tool calls), whole replies,
through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import (
    BadRequestError,
    MultipleStructuredOutputsError,
    ReActAgent,
    StructuredOutputError,
    StructuredOutputValidationError,
    extract_many,
)
from agentflow.extraction.records import to_record
from agentflow.model import Usage
from agentflow.output.config import OutputConfig
from agentflow.output.strategies import ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Contact(BaseModel):
    name: str
    age: int


WRONG = '{"name": "Ada", "age": "unknown"}'
RIGHT = '{"name": "Ada", "age": 36}'


def model_for(fake: OpenAIFake) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)


def spent(n: int) -> Usage:
    """The usage of ``n`` replies of ``usage=(100, 20)``."""
    return Usage(input_tokens=100 * n, output_tokens=20 * n, requests=n)


async def test_validation_retries_spent_carry_the_calls_usage() -> None:
    async with OpenAIFake() as fake:
        for _ in range(3):  # the first answer and output_retries=2 retries
            fake.add(FakeReply(text=WRONG, usage=(100, 20)))
        async with model_for(fake) as model:
            reply = await ReActAgent("c", model).call("Ada is 36.", Contact)
    with pytest.raises(StructuredOutputValidationError) as info:
        reply.output  # noqa: B018 (the output raises the call's error)
    assert info.value.attempts == 3
    assert info.value.usage == spent(3)


async def test_raised_mid_call_carries_the_usage_so_far() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=RIGHT, usage=(100, 20)))  # a text call first: not counted
        fake.add(FakeReply(text=WRONG, usage=(100, 20)))
        async with model_for(fake) as model:
            agent = ReActAgent("c", model, output=OutputConfig(on_invalid="raise"))
            await agent.call("Hello.")
            with pytest.raises(StructuredOutputValidationError) as info:
                await agent.call("Ada is 36.", Contact)
    assert info.value.usage == spent(1)


async def test_forcing_spent_carries_the_usage() -> None:
    async with OpenAIFake() as fake:
        for _ in range(2):
            fake.add(FakeReply(text="Ada, I think.", usage=(100, 20)))
        async with model_for(fake) as model:
            agent = ReActAgent("c", model, output=OutputConfig(
                strategy=ToolStrategy(), max_forcing=1))
            reply = await agent.call("Ada is 36.", Contact)
    with pytest.raises(StructuredOutputError) as info:
        reply.output  # noqa: B018
    assert info.value.usage == spent(2)


async def test_multiple_outputs_raised_carry_the_usage() -> None:
    call = FakeCall("generate_response", {"name": "Ada", "age": 36})
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[call, call], usage=(100, 20)))
        async with model_for(fake) as model:
            agent = ReActAgent("c", model, output=OutputConfig(
                strategy=ToolStrategy(), on_multiple="raise"))
            with pytest.raises(MultipleStructuredOutputsError) as info:
                await agent.call("Ada is 36.", Contact)
    assert info.value.usage == spent(1)


async def test_a_failed_documents_record_reports_what_it_spent() -> None:
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text=WRONG, usage=(100, 20))
        async with model_for(fake) as model:
            agent = ReActAgent("c", model, output=OutputConfig(on_invalid="raise"))
            results = [r async for r in extract_many(agent, ["Ada is 36."], Contact,
                                                     ground=False)]
    record = to_record(results[0])
    assert record["ok"] is False
    assert record["usage"]["input_tokens"] == 100 and record["usage"]["requests"] == 1
    assert results[0].usage == spent(1)


async def test_a_vendor_error_ending_the_call_carries_what_it_had_spent() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=WRONG, usage=(100, 20)))
        fake.add_error(400, {"error": {"message": "bad", "type": "invalid_request_error"}})
        async with model_for(fake) as model:
            with pytest.raises(BadRequestError) as info:
                await ReActAgent("c", model).call("Ada is 36.", Contact)
    assert info.value.usage == spent(1)


async def test_a_record_failed_by_a_vendor_error_reports_what_it_spent() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=WRONG, usage=(100, 20)))
        fake.add_error(400, {"error": {"message": "bad", "type": "invalid_request_error"}})
        async with model_for(fake) as model:
            results = [r async for r in extract_many(ReActAgent("c", model), ["Ada is 36."],
                                                     Contact, ground=False)]
    assert isinstance(results[0].error, BadRequestError)
    assert to_record(results[0])["usage"]["output_tokens"] == 20
