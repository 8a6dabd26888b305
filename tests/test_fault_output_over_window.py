"""Vendor fault: a reply limit that does not fit the window beside the prompt.

OpenAI and vLLM refuse a request whose prompt fits the context window but
whose ``max_tokens`` does not fit beside it: 400 "This model's maximum
context length is 32768 tokens. However, you requested 33792 tokens (1592 in
the messages, 32200 in the completion). Please reduce the length of the
messages or completion." (newer vLLM: "... and your request has 1000 input
tokens"), TGI "`inputs` tokens + `max_new_tokens` must be <= 8192. Given:
6204 `inputs` tokens and 2047 `max_new_tokens`" (huggingface/chat-ui#1149);
Anthropic (Claude 3.7 and later) "input length and `max_tokens` exceed context
limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try
again".
It was a ``ContextLengthError`` telling the caller to split an input that
already fits. The request now goes again with ``max_tokens`` the room the
prompt leaves; a prompt that leaves no room is still a ``ContextLengthError``.

Served by OpenAI and Anthropic fakes that count tokens against a small window."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import ContextLengthError, GenerateOptions, ReActAgent
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST

WINDOW = 2048
VLLM = ("This model's maximum context length is {window} tokens. However, you requested "
        "{total} tokens ({prompt} in the messages, {out} in the completion). Please reduce "
        "the length of the messages or completion.")
VLLM_NEW = ("'max_tokens' or 'max_completion_tokens' is too large: {out}. This model's maximum "
            "context length is {window} tokens and your request has {prompt} input tokens "
            "({out} > {window} - {prompt}).")
TGI = ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= {window}. "
       "Given: {prompt} `inputs` tokens and {out} `max_new_tokens`")


class WindowFake(OpenAIFake):
    """A server with a ``WINDOW``-token context (4 characters a token)."""

    def __init__(self, wording: str) -> None:
        super().__init__()
        self.wording = wording

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4 + 8
        out = body.get("max_tokens") or 0
        if prompt + out > WINDOW:
            return openai_error(400, self.wording.format(
                window=WINDOW, total=prompt + out, prompt=prompt, out=out), "BadRequestError")
        return super().validate(body)


@pytest.mark.parametrize("wording", [VLLM, VLLM_NEW, TGI], ids=["vllm", "vllm-new", "tgi"])
async def test_a_reply_limit_over_the_window_is_lowered_to_the_room_left(wording: str) -> None:
    async with WindowFake(wording) as fake:
        fake.add(FakeReply(text="Paris."))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, options=GenerateOptions(max_tokens=WINDOW))
            reply = await agent.call("Where is the Louvre?")
    assert reply.text == "Paris."
    assert len(fake.requests) == 2
    sent = fake.bodies[1]["max_tokens"]
    assert 0 < sent < WINDOW


async def test_a_prompt_that_leaves_no_room_is_still_a_context_length_error() -> None:
    async with WindowFake(VLLM) as fake:
        fake.add(FakeReply(text="never"))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("w", model, options=GenerateOptions(max_tokens=256))
            with pytest.raises(ContextLengthError):
                await agent.call("x" * 4 * WINDOW)
    assert len(fake.requests) == 1


class AnthropicWindowFake(AnthropicFake):
    """Anthropic's refusal of a prompt and ``max_tokens`` over a ``WINDOW``-token window."""

    def check(self, request: Any, body: Any) -> FakeError | None:
        prompt = len(str(body.get("messages"))) // 4
        if prompt + body["max_tokens"] > WINDOW:
            return FakeError(400, {"type": "error", "error": {
                "type": "invalid_request_error",
                "message": f"input length and `max_tokens` exceed context limit: {prompt} + "
                           f"{body['max_tokens']} > {WINDOW}, decrease input length or "
                           "`max_tokens` and try again"}})
        return super().check(request, body)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_anthropic_lowers_max_tokens_to_the_room_left(stream: bool) -> None:
    async with AnthropicWindowFake() as fake:
        fake.add(FakeReply(text="Paris."))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST)
        try:
            agent = ReActAgent("w", model, options=GenerateOptions(max_tokens=WINDOW))
            reply = await agent.call("Where is the Louvre?")
        finally:
            await model.aclose()
    assert reply.text == "Paris."
    assert len(fake.requests) == 2 and 0 < fake.bodies[1]["max_tokens"] < WINDOW
