"""Issue 32, kind 6: a whole-reply request answered with a stream (a proxy
that forces streaming) is read as the stream it is, in every adapter's
whole-reply path: by its content type (``text/event-stream``; Ollama's
``application/x-ndjson``) or, mislabelled, by its body (``data:`` first;
one JSON object a line). Served by each vendor's fake with ``force_stream``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.model import ChatModel, GenerateOptions
from agentflow.providers._streams import ndjson_body, sse_body
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.minimax import MiniMaxChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

Vendor = tuple[Callable[[], FakeServer], Callable[[str], ChatModel], str]

VENDORS: dict[str, Vendor] = {
    "openai": (OpenAIFake, lambda url: OpenAIChatModel(
        "gpt-4o-mini", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "deepseek": (DeepSeekFake, lambda url: DeepSeekChatModel(
        "deepseek-chat", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "dashscope": (DashScopeFake, lambda url: DashScopeChatModel(
        "qwen-plus", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "glm": (GLMFake, lambda url: GLMChatModel(
        "glm-4.6", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "minimax": (MiniMaxFake, lambda url: MiniMaxChatModel(
        "MiniMax-M2.7", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "anthropic": (AnthropicFake, lambda url: AnthropicChatModel(
        "claude-sonnet-4-5", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "gemini": (GeminiFake, lambda url: GeminiChatModel(
        "gemini-2.5-flash", base_url=url, api_key="k", stream=False, settings=FAST),
        "text/event-stream"),
    "ollama": (OllamaFake, lambda url: OllamaChatModel(
        "llama3.2", base_url=url, stream=False, settings=FAST), "application/x-ndjson"),
}


class City(BaseModel):
    city: str
    temperature_c: float


async def _close(model: Any) -> None:
    await model.aclose()


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "mislabelled"])
@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_forced_stream_answers_a_whole_reply_request(vendor: str, labelled: bool) -> None:
    make_fake, make_model, content_type = VENDORS[vendor]
    async with make_fake() as fake:
        fake.force_stream = content_type if labelled else "application/json"
        fake.add(FakeReply(text="Hello there, general.", chunk_size=4))
        model = make_model(fake.url)
        try:
            reply = await generate(model, [_user("hi")], [], GenerateOptions(stream=False))
        finally:
            await _close(model)
    assert reply.message.text == "Hello there, general."
    assert reply.finish_reason == "stop"
    assert fake.transports == ["whole"]  # it asked for a whole reply


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_structured_output_through_a_forced_stream(vendor: str) -> None:
    make_fake, make_model, content_type = VENDORS[vendor]
    async with make_fake() as fake:
        fake.force_stream = content_type
        answer = {"city": "Paris", "temperature_c": 18.5}

        def answering(body: Any) -> FakeReply:  # the output tool when offered, else JSON text
            if "generate_response" in str(body.get("tools")):
                return FakeReply(tool_calls=[FakeCall("generate_response", answer)],
                                 chunk_size=5)
            return FakeReply(text='{"city": "Paris", "temperature_c": 18.5}', chunk_size=5)

        fake.default = answering
        model = make_model(fake.url)
        try:
            reply = await ReActAgent("sse", model).call("Paris?", City)
        finally:
            await _close(model)
    assert reply.output == City(city="Paris", temperature_c=18.5)


def test_stream_bodies_are_told_from_json() -> None:
    assert sse_body(b'data: {"a": 1}\n\n') and sse_body(b"\xef\xbb\xbf\n: keep-alive\n\n")
    assert sse_body(b"event: message_start\ndata: {}\n\n")
    assert not sse_body(b'{"data": 1}') and not sse_body(b"")
    assert ndjson_body(b'{"a": 1}\n{"b": 2}\n')
    assert not ndjson_body(b'{"a": 1}\n') and not ndjson_body(b'{\n"a": 1\n}')


def _user(text: str) -> Any:
    from agentflow.messages import Msg
    return Msg.user(text) if hasattr(Msg, "user") else Msg("user", text)
