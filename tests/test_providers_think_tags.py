"""Reasoning a model writes inline as ``<think>...</think>`` on a generic
OpenAI-compatible server without a reasoning parser (``providers._think_tags``):
split into thinking, streamed and whole, tags cut anywhere, the opening tag
missing when the chat template wrote it, tool calls after the reasoning,
``reply.text`` without the reasoning, and the reasoning never sent back as
content. Against the fake OpenAI server's ``inline_thinking`` replies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow.messages import Msg, ThinkingBlock
from agentflow.model import GenerateOptions, ModelChunk, TextDelta, ThinkingDelta, ToolSpec
from agentflow.providers._openai_compat import GENERIC_PROFILE, OpenAICompatibleModel
from agentflow.providers._openai_wire import ChunkParser
from agentflow.providers._think_tags import (
    OpenedThinkTagParser,
    ThinkTagParser,
    inline_thinking_for_model,
    think_tag_parser,
)
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeReply
from .fakes.openai import OpenAIFake
from .provider_scenarios import FAST, WEATHER, Weather, agent_for, close_models, run, tracked

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})
THOUGHT = "The user greets me. <b>Be</b> brief; 2 < 3."


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        yield server
    await close_models()


def model_for(fake: OpenAIFake, name: str, stream: bool = True, **kw: Any) -> Any:
    return tracked(OpenAICompatibleModel(name, base_url=fake.url, stream=stream,
                                         settings=FAST, **kw))


def split(chunks: list[ModelChunk]) -> tuple[str, str]:
    thinking = "".join(c.text for c in chunks if isinstance(c, ThinkingDelta))
    text = "".join(c.text for c in chunks if isinstance(c, TextDelta))
    return thinking, text


def feed_pieces(parser: ChunkParser, pieces: list[str], finish: str = "stop"
                ) -> list[ModelChunk]:
    out: list[ModelChunk] = []
    for piece in pieces:
        out += parser.feed({"choices": [{"delta": {"content": piece}}]})
    out += parser.feed({"choices": [{"delta": {}, "finish_reason": finish}]})
    return out + parser.close()


# ----------------------------------------------------------------------------- name rules


def test_name_rules_pick_the_mode() -> None:
    assert inline_thinking_for_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B") == "opened"
    assert inline_thinking_for_model("QwQ-32B") == "opened"
    assert inline_thinking_for_model("Qwen/Qwen3-30B-A3B-Thinking-2507") == "opened"
    assert inline_thinking_for_model("THUDM/GLM-Z1-9B-0414") == "opened"
    assert inline_thinking_for_model("qwen3-8b") == "tags"
    assert inline_thinking_for_model("zai-org/GLM-4.5-Air") == "tags"
    assert inline_thinking_for_model("microsoft/Phi-4-reasoning-plus") == "tags"
    assert inline_thinking_for_model("llama-3.1-8b-instruct") is None
    assert inline_thinking_for_model("gpt-4o-mini") is None


def test_profile_gets_the_mode_on_generic_hosts_only() -> None:
    generic = OpenAICompatibleModel("DeepSeek-R1-Distill-Llama-8B", base_url="http://127.0.0.1:9/v1")
    assert generic.profile.inline_thinking == "opened"
    assert generic._parser_type is OpenedThinkTagParser
    plain = OpenAICompatibleModel("llama-3.1-8b", base_url="http://127.0.0.1:9/v1")
    assert plain.profile.inline_thinking is None and plain._parser_type is ChunkParser
    gateway = OpenAIChatModel("qwen3-32b", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert gateway.profile.inline_thinking == "tags"
    own = OpenAIChatModel("gpt-4o", api_key="k")
    assert own.profile.inline_thinking is None and own._parser_type is ChunkParser
    off = OpenAICompatibleModel("qwq-32b", base_url="http://127.0.0.1:9/v1",
                                profile=GENERIC_PROFILE)
    assert off.profile.inline_thinking is None and off._parser_type is ChunkParser
    on = OpenAICompatibleModel("my-finetune", base_url="http://127.0.0.1:9/v1",
                               profile=GENERIC_PROFILE.with_(inline_thinking="tags"))
    assert on._parser_type is ThinkTagParser


def test_a_vendor_parser_is_kept() -> None:
    class Own(ChunkParser):
        __slots__ = ()

    assert think_tag_parser(Own, "tags") is Own
    assert think_tag_parser(ChunkParser, None) is ChunkParser
    assert think_tag_parser(ChunkParser, "opened") is OpenedThinkTagParser


# ----------------------------------------------------------------------------- the parser


@pytest.mark.parametrize("kind", [ThinkTagParser, OpenedThinkTagParser])
def test_tags_cut_at_every_position(kind: type[ThinkTagParser]) -> None:
    content = "<think>\nplan <it>\n</think>\n\nThe <answer>."
    for cut in range(1, len(content)):
        for second in range(cut + 1, len(content) + 1):
            out = feed_pieces(kind(), [content[:cut], content[cut:second], content[second:]])
            assert split(out) == ("plan <it>\n", "The <answer>."), (cut, second)


def test_opened_reply_cut_at_every_position() -> None:
    content = "plan <it>\n</think>\n\nThe <answer>."
    for cut in range(len(content) + 1):
        out = feed_pieces(OpenedThinkTagParser(), [content[:cut], content[cut:]])
        assert split(out) == ("plan <it>\n", "The <answer>."), cut


def test_opened_reply_that_never_reasons_is_text() -> None:
    body = '{"city": "Paris", "note": "a <b> tag"}'
    out = feed_pieces(OpenedThinkTagParser(), [body[:5], body[5:]])
    assert split(out) == ("", body)  # grammar-constrained JSON: no reasoning at all


def test_opened_reply_cut_by_length_is_reasoning() -> None:
    out = feed_pieces(OpenedThinkTagParser(), ["\nstill ", "weighing"], finish="length")
    assert split(out) == ("still weighing", "")


def test_tags_mode_streams_text_at_once() -> None:
    parser = ThinkTagParser()
    out = parser.feed({"choices": [{"delta": {"content": "Hello"}}]})
    assert split(out) == ("", "Hello")  # no reasoning: nothing held back


def test_a_reasoning_field_turns_splitting_off() -> None:
    parser = OpenedThinkTagParser()
    out = parser.feed({"choices": [{"delta": {"reasoning_content": "think"}}]})
    out += feed_pieces(parser, ["The ", "answer."])
    assert split(out) == ("think", "The answer.")


def test_unclosed_tag_at_the_end_is_flushed() -> None:
    out = feed_pieces(ThinkTagParser(), ["Answer <thi"])
    assert split(out) == ("", "Answer <thi")


# ----------------------------------------------------------------------------- end to end


@STREAMS
@pytest.mark.parametrize("inline,name", [("tags", "Qwen/Qwen3-8B"),
                                         ("opened", "deepseek-r1-distill-qwen-7b"),
                                         ("opened", "QwQ-32B")])
@pytest.mark.parametrize("size", [1, 3, 8, 500])
async def test_reply_text_without_the_reasoning(fake: OpenAIFake, stream: bool, inline: str,
                                                name: str, size: int) -> None:
    fake.add(FakeReply(thinking=THOUGHT, text="Hello <there>!", chunk_size=size,
                       extra={"inline_thinking": inline}))
    model = model_for(fake, name, stream)
    chunks = [c async for c in model.stream([Msg.user("hi")], [], GenerateOptions())]
    thinking, text = split(chunks)
    assert text == "Hello <there>!"
    assert thinking.strip() == THOUGHT


@STREAMS
async def test_tool_call_after_the_reasoning(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(thinking="Need the weather.", tool_calls=[
        FakeCall("get_weather", {"city": "Paris"})], extra={"inline_thinking": "opened"}))
    reply = await generate(model_for(fake, "DeepSeek-R1-0528", stream), [Msg.user("hi")], [TOOL])
    assert reply.message.text == ""
    assert dict(reply.message.tool_uses[0].input) == {"city": "Paris"}
    blocks = [b for b in reply.message.content if isinstance(b, ThinkingBlock)]
    assert "".join(b.thinking for b in blocks).strip() == "Need the weather."


@STREAMS
async def test_reasoning_is_not_sent_back_as_content(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(thinking="Private plan.", text="Paris is sunny.",
                       extra={"inline_thinking": "tags"}),
             FakeReply(text="ok"))
    model = model_for(fake, "qwen3-14b", stream)
    first = await generate(model, [Msg.user("weather?")], [])
    assert first.message.text == "Paris is sunny."
    assert any(isinstance(b, ThinkingBlock) for b in first.message.content)
    await generate(model, [Msg.user("weather?"), first.message, Msg.user("thanks")], [])
    assistant = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert assistant["content"] == "Paris is sunny."
    assert "Private plan" not in str(fake.bodies[1])


@STREAMS
async def test_models_without_the_flag_keep_the_text(fake: OpenAIFake, stream: bool) -> None:
    content = "<think>literal</think> tags in a reply"
    fake.add(FakeReply(text=content))
    reply = await generate(model_for(fake, "llama-3.1-8b-instruct", stream), [Msg.user("hi")], [])
    assert reply.message.text == content


def test_answer_inside_a_block_never_closed_is_text() -> None:
    out = feed_pieces(ThinkTagParser(), ["<think>\nweigh it", ' then {"city": ', '"Paris"}'])
    assert split(out) == ('weigh it then {"city": "Paris"}', '{"city": "Paris"}')
    cut = feed_pieces(ThinkTagParser(), ['<think>\nweigh {"a"'], finish="length")
    assert split(cut) == ('weigh {"a"', "")  # cut by the length limit: still reasoning
    said = feed_pieces(ThinkTagParser(), ["Hi. <think>\nmore {x}"])
    assert split(said) == ("more {x}", "Hi. ")  # the reply said something: nothing added


@STREAMS
async def test_structured_output_after_inline_reasoning(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(thinking='Paris? {"maybe": 1} no, decide.',
                       text=orjson.dumps(WEATHER).decode(), chunk_size=5,
                       extra={"inline_thinking": "opened"}))
    _, complete = await run(agent_for(model_for(fake, "DeepSeek-R1-Distill-Qwen-32B", stream)))
    assert complete.output == Weather(**WEATHER)
