"""Vendor fault: the vendor's content moderation reported as an error after the 200.

DashScope's moderation (``data_inspection_failed``: "Input or output data may
contain inappropriate content", Model Studio error codes) can stop a reply
that is already streaming, as an error data line; GLM reports unsafe content
as code ``1301``, MiniMax as ``base_resp`` 1026/1027, both inside 200
replies. These were ``ServerError``s (an unknown code), so a stream retry, or
the HTTP layer for a whole reply, sent the same request again to be filtered
again, and the caller could not tell moderation from an outage. They are now
``ContentFilteredError`` (never retried), like a reply that ends with finish
reason ``content_filter``; any other error event is unchanged.

Served by the DashScope, GLM and MiniMax fakes, streamed and whole, through
the public API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentflow import Complete, ContentFilteredError, Msg, ReActAgent
from agentflow.errors import BadRequestError, ModeratedRequestError
from agentflow.model import ChatModel
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.minimax import MiniMaxChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake, base_error
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

MODERATED = {"message": "Output data may contain inappropriate content.",
             "type": "data_inspection_failed", "param": None, "code": "data_inspection_failed"}
"""DashScope compatible mode's moderation error (the shape of its 400 body's ``error``)."""

Vendor = tuple[Callable[[], FakeServer], Callable[[str, bool], ChatModel], dict[str, Any]]
VENDORS: dict[str, Vendor] = {
    "dashscope": (DashScopeFake, lambda url, stream: DashScopeChatModel(
        "qwen-plus", base_url=url, api_key="k", stream=stream, settings=FAST), MODERATED),
    "glm": (GLMFake, lambda url, stream: GLMChatModel(
        "glm-4.5", base_url=url, api_key="k", stream=stream, settings=FAST),
        {"code": "1301", "message": "系统检测到输入或生成内容可能包含不安全或敏感内容"}),
}


async def run(model: ChatModel, **agent: Any) -> Msg:
    """The reply of one call, through ``stream()`` (``call()`` asks for whole replies)."""
    try:
        events = [e async for e in ReActAgent("m", model, **agent).stream("Tell me a story.")]
        done = events[-1]
        assert isinstance(done, Complete)
        return done.message
    finally:
        await model.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("after", [0, 3], ids=["first", "mid"])
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_moderation_event_mid_stream_is_content_filtered(vendor: str, after: int) -> None:
    make_fake, make_model, error = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add(FakeReply(text="Once upon a time", chunk_size=3,
                           extra={"stream_error": error, "error_after": after}),
                 FakeReply(text="never sent"))
        with pytest.raises(ContentFilteredError) as info:
            await run(make_model(fake.url, True), stream_retries=2)
    assert not info.value.retryable and info.value.code == error["code"]
    assert info.value.finish_reason == "content_filter"
    assert len(fake.requests) == 1  # the same request is filtered again: never re-sent


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_moderation_error_in_a_200_body_is_content_filtered(vendor: str) -> None:
    make_fake, make_model, error = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add_error(200, {"error": error, "request_id": "r"})
        fake.add(FakeReply(text="never sent"))
        with pytest.raises(ContentFilteredError):
            await run(make_model(fake.url, False))
    assert len(fake.requests) == 1


@pytest.mark.parametrize("code", [1026, 1027])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_minimax_sensitive_codes_are_content_filtered(code: int, stream: bool) -> None:
    async with MiniMaxFake() as fake:
        fake.add(base_error(code, "output new_sensitive"), FakeReply(text="never sent"))
        with pytest.raises(ContentFilteredError) as info:
            await run(MiniMaxChatModel("MiniMax-M2.7", base_url=fake.url, api_key="k",
                                       stream=stream, settings=FAST))
    assert info.value.code == str(code)
    assert len(fake.requests) == 1


async def test_another_error_event_is_still_a_retried_server_error() -> None:
    async with DashScopeFake() as fake:
        fake.add(FakeReply(text="Once upon a time", chunk_size=3, extra={
            "stream_error": {"message": "internal", "type": "InternalError",
                             "code": "InternalError"}, "error_after": 2}),
                 FakeReply(text="The end."))
        reply = await run(DashScopeChatModel("qwen-plus", base_url=fake.url, api_key="k",
                                             stream=True, settings=FAST), stream_retries=1)
    assert reply.text == "The end."
    assert len(fake.requests) == 2


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_moderation_error_as_an_http_400_is_both_filtered_and_a_bad_request(
        vendor: str) -> None:
    """Before any reply the vendor refuses the request with a 400 carrying its
    moderation code: a caller catching ``ContentFilteredError`` sees it (it was
    a bare ``BadRequestError``), one catching ``BadRequestError`` still does,
    and it is never sent again."""
    make_fake, make_model, error = VENDORS[vendor]
    async with make_fake() as fake:
        fake.add_error(400, {"error": error, "request_id": "r"})
        fake.add(FakeReply(text="never sent"))
        with pytest.raises(ModeratedRequestError) as info:
            await run(make_model(fake.url, False))
    assert isinstance(info.value, ContentFilteredError) and isinstance(info.value, BadRequestError)
    assert info.value.status == 400 and info.value.code == error["code"]
    assert not info.value.retryable and info.value.finish_reason == "content_filter"
    assert len(fake.requests) == 1


AZURE_FILTERED = {
    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
               "management policy. Please modify your prompt and retry. To learn more about our "
               "content filtering policies please read our documentation: "
               "https://go.microsoft.com/fwlink/?linkid=2198766",
    "type": None, "param": "prompt", "code": "content_filter", "status": 400,
    "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
        "hate": {"filtered": False, "severity": "safe"},
        "jailbreak": {"filtered": False, "detected": False},
        "violence": {"filtered": True, "severity": "medium"}}}}
"""Azure OpenAI's 400 for a prompt its content filter stopped (openai/openai-python#331,
vibrantlabsai/ragas#649, microsoft/TinyTroupe#85)."""
OPENAI_FLAGGED = {
    "message": "Invalid prompt: your prompt was flagged as potentially violating our usage "
               "policy. Please try again with a different prompt: "
               "https://platform.openai.com/docs/guides/reasoning#advice-on-prompting",
    "type": "invalid_request_error", "param": None, "code": "invalid_prompt"}
"""OpenAI's 400 for a prompt its safety checks flagged (alan-turing-institute/t0-1#69)."""


@pytest.mark.parametrize("error", [AZURE_FILTERED, OPENAI_FLAGGED], ids=["azure", "openai"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_openai_and_azure_moderation_400s_are_content_filtered(
        error: dict[str, Any], stream: bool) -> None:
    """Azure's ``content_filter`` and OpenAI's ``invalid_prompt`` 400s were bare
    ``BadRequestError``s: ``except ContentFilteredError`` missed the commonest
    moderation refusal there is."""
    async with OpenAIFake() as fake:
        fake.add_error(400, {"error": error})
        fake.add(FakeReply(text="never sent"))
        with pytest.raises(ModeratedRequestError) as info:
            await run(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                      stream=stream, settings=FAST))
    assert isinstance(info.value, ContentFilteredError) and isinstance(info.value, BadRequestError)
    assert info.value.code == error["code"] and not info.value.retryable
    assert len(fake.requests) == 1
