"""Vendor fault: every attempt of a structured call fails on the vendor's side.

DeepSeek ends a reply its servers could not finish with finish reason
``insufficient_system_resource`` (api-docs.deepseek.com, "Create Chat
Completion"), GLM with ``network_error``; the text, empty or cut, is no
output. A structured call asked again, as it should, but through the
validation path: the model was told its reply held no JSON (a failed attempt
it never made, kept in the context) and, once the retries were spent, the
call failed with ``StructuredOutputValidationError`` "no JSON value found in
the reply text", blaming the model. The vendor's failure now leaves the
context, the same request is sent again, and the final error says the
vendor failed (``reason="vendor_error"``); a reply whose JSON closed before
the failure is still read.

Served by the DeepSeek and GLM fakes, streamed and whole, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    OutputConfig,
    PromptStrategy,
    ReActAgent,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.glm import GLMChatModel
from tests.fakes.base import FakeReply
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.glm import GLMFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


class Ticket(BaseModel):
    id: int
    title: str


async def _reply(fake: Any, model: Any, *replies: FakeReply) -> Any:
    fake.add(*replies)
    try:
        return await ReActAgent("t", model, output=OutputConfig(strategy=PromptStrategy())
                                ).call("the ticket", Ticket)
    finally:
        await model.aclose()


@STREAMS
async def test_retries_spent_on_vendor_failures_say_so(stream: bool) -> None:
    failed = FakeReply(text='{"id": 7, "tit', finish_reason="insufficient_system_resource")
    async with DeepSeekFake() as fake:
        reply = await _reply(fake, DeepSeekChatModel(
            "deepseek-chat", base_url=fake.url, api_key="k", stream=stream, settings=FAST),
            failed, failed, failed)
        bodies = fake.bodies
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert not isinstance(info.value, StructuredOutputValidationError)
    assert info.value.reason == "vendor_error" and "vendor" in str(info.value)
    assert len(bodies) == 3
    assert bodies[1]["messages"] == bodies[0]["messages"]  # asked again, nothing blamed


@STREAMS
async def test_the_next_attempt_is_the_answer(stream: bool) -> None:
    async with GLMFake() as fake:
        reply = await _reply(fake, GLMChatModel(
            "glm-4.6", base_url=fake.url, api_key="k", stream=stream, settings=FAST),
            FakeReply(text="", finish_reason="network_error"),
            FakeReply(text='{"id": 7, "title": "login"}'))
    assert reply.output == Ticket(id=7, title="login")
    assert "no JSON" not in str(fake.bodies[1]["messages"])


@STREAMS
async def test_json_closed_before_the_failure_is_read(stream: bool) -> None:
    async with DeepSeekFake() as fake:
        reply = await _reply(fake, DeepSeekChatModel(
            "deepseek-chat", base_url=fake.url, api_key="k", stream=stream, settings=FAST),
            FakeReply(text='{"id": 7, "title": "login"}',
                      finish_reason="insufficient_system_resource"))
    assert reply.output == Ticket(id=7, title="login")
