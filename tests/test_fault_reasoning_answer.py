"""Issue 32, kind 4: a server that splits reasoning (vLLM ``reasoning_content``
/ ``reasoning``, whole replies and deltas; DeepSeek, GLM, DashScope alike)
may put the whole answer in the reasoning channel and leave ``content``
empty. The answer is used, and the reply says so (``ANSWER_FROM_REASONING``):
plain text, and structured output on the native and prompt paths."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.messages import ANSWER_FROM_REASONING
from agentflow.model import FinishChunk, ModelProfile, TextDelta, ThinkingDelta
from agentflow.output.config import OutputConfig
from agentflow.output.strategies import NativeStrategy, PromptStrategy
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import ReplyBuilder
from tests.fakes.base import FakeReply
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

ANSWER = '{"city": "Paris", "temperature_c": 18.5}'


class City(BaseModel):
    city: str
    temperature_c: float


def vllm(field: str) -> OpenAIFake:
    fake = OpenAIFake()
    fake.reasoning_field = field  # vLLM: reasoning_content (older) / reasoning (newer)
    return fake


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("stream", [True, False])
async def test_plain_text_answer_only_in_reasoning(field: str, stream: bool) -> None:
    async with vllm(field) as fake:
        fake.add(FakeReply(thinking="The capital of France is Paris.", text="", chunk_size=5))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            reply = await ReActAgent("r", model).call("Capital of France?")
    assert reply.text == "The capital of France is Paris."
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True
    assert len(fake.requests) == 1


@pytest.mark.parametrize("strategy", [NativeStrategy(), PromptStrategy()],
                         ids=["native", "prompt"])
@pytest.mark.parametrize("stream", [True, False])
async def test_structured_answer_only_in_reasoning(strategy: Any, stream: bool) -> None:
    async with vllm("reasoning") as fake:
        fake.add(FakeReply(thinking=f"Reading the record.\n{ANSWER}", text="", chunk_size=7))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("r", model, output=OutputConfig(strategy=strategy))
            reply = await agent.call("Paris, 18.5 C", City)
    assert reply.output == City(city="Paris", temperature_c=18.5)
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True
    assert len(fake.requests) == 1  # no forced retries


async def test_deepseek_reasoning_content_holds_the_json() -> None:
    async with DeepSeekFake() as fake:
        fake.add(FakeReply(thinking=ANSWER, text=""))
        async with DeepSeekChatModel("deepseek-reasoner", base_url=fake.url, api_key="k",
                                     stream=True, settings=FAST) as model:
            agent = ReActAgent("r", model, output=OutputConfig(strategy=PromptStrategy()))
            reply = await agent.call("Paris, 18.5 C", City)
    assert reply.output == City(city="Paris", temperature_c=18.5)
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True


def test_a_reply_with_content_or_cut_is_not_taken_from_reasoning() -> None:
    rb = ReplyBuilder()
    for chunk in (ThinkingDelta("draft"), TextDelta("final"), FinishChunk("stop", "stop")):
        rb.add(chunk)
    msg = rb.build()
    assert msg.text == "final" and ANSWER_FROM_REASONING not in msg.metadata
    rb = ReplyBuilder()
    for chunk in (ThinkingDelta("thinking until the limit"), FinishChunk("length", "length")):
        rb.add(chunk)
    msg = rb.build()
    assert msg.text == "" and ANSWER_FROM_REASONING not in msg.metadata


def test_profile_default_is_untouched() -> None:
    assert ModelProfile() == ModelProfile()


async def test_tool_path_answer_only_in_reasoning_is_read_without_a_forced_retry() -> None:
    from agentflow.output.strategies import ToolStrategy

    async with vllm("reasoning_content") as fake:
        fake.add(FakeReply(thinking=ANSWER, text=""))
        async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("r", model, output=OutputConfig(strategy=ToolStrategy()))
            reply = await agent.call("Paris, 18.5 C", City)
    assert reply.output == City(city="Paris", temperature_c=18.5)
    assert len(fake.requests) == 1
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True


async def _answer_from(fake: Any, model: Any) -> Any:
    try:
        agent = ReActAgent("r", model, output=OutputConfig(strategy=PromptStrategy()))
        return await agent.call("Paris, 18.5 C", City)
    finally:
        await model.aclose()


@pytest.mark.parametrize("vendor", ["glm", "dashscope", "ollama"])
async def test_other_split_reasoning_servers(vendor: str) -> None:
    from agentflow.providers.dashscope import DashScopeChatModel
    from agentflow.providers.glm import GLMChatModel
    from agentflow.providers.ollama import OllamaChatModel
    from tests.fakes.dashscope import DashScopeFake
    from tests.fakes.glm import GLMFake
    from tests.fakes.ollama import OllamaFake

    fakes = {"glm": GLMFake, "dashscope": DashScopeFake, "ollama": OllamaFake}
    async with fakes[vendor]() as fake:
        fake.default = FakeReply(thinking=ANSWER, text="")
        if vendor == "glm":
            model: Any = GLMChatModel("glm-4.6", base_url=fake.url, api_key="k", settings=FAST)
        elif vendor == "dashscope":
            model = DashScopeChatModel("qwq-plus", base_url=fake.url, api_key="k", settings=FAST)
        else:
            model = OllamaChatModel("qwen3:8b", base_url=fake.url, settings=FAST)
        reply = await _answer_from(fake, model)
    assert reply.output == City(city="Paris", temperature_c=18.5)
    assert reply.metadata.get(ANSWER_FROM_REASONING) is True
