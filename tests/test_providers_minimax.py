"""The MiniMax adapter against the fake MiniMax server: tool_choice never
sent, the prompt-reminder path, HTTP-200 ``base_resp`` errors, inline
``<think>`` split out while streaming, the final-frame dedup, temperature."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    ContentFilteredError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    UnsupportedFeatureError,
)
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ResponseFormat,
    TextDelta,
    ThinkingDelta,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers.minimax import MiniMaxChatModel, MiniMaxParser, base_resp_error
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeReply
from .fakes.minimax import MiniMaxFake, base_error
from .provider_scenarios import (
    FAST,
    WEATHER,
    Weather,
    agent_for,
    check_prompt_reminder_path,
    check_state_unchanged_after_cut,
    close_models,
    expect_error,
    run,
    tracked,
)

KEY = "mm-test-key"
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})


@pytest.fixture
async def fake() -> Any:
    async with MiniMaxFake(api_key=KEY) as server:
        yield server
    await close_models()


def model_for(fake: MiniMaxFake, stream: bool = True, name: str = "MiniMax-M2.7",
              **kw: Any) -> MiniMaxChatModel:
    model = MiniMaxChatModel(name, api_key=KEY, base_url=fake.url, stream=stream, settings=FAST,
                             **kw)
    return tracked(model)  # type: ignore[no-any-return]


def test_profiles_and_body() -> None:
    model = MiniMaxChatModel("MiniMax-M2.7", api_key="k")
    assert model.profile.tool_choice_modes == {"auto", "none", "specific"}  # two emulated
    assert model.profile.thinking_default and model.profile.native_output is None
    assert not MiniMaxChatModel("MiniMax-Text-01", api_key="k").profile.supports_thinking
    body = model.build_body([Msg.user("hi")], [TOOL], GenerateOptions(
        tool_choice=ToolChoice.AUTO, temperature=0.0, max_tokens=20))
    assert "tool_choice" not in body and body["temperature"] == 0.01
    assert body["max_completion_tokens"] == 20 and "stream_options" not in body
    assert model.build_body([Msg.user("hi")], [], GenerateOptions(temperature=1.7))[
        "temperature"] == 1.0


@STREAMS
async def test_agent_prompt_reminder_path(fake: MiniMaxFake, stream: bool) -> None:
    await check_prompt_reminder_path(fake, lambda s: model_for(fake, s), stream)
    assert not any("tool_choice" in b for b in fake.bodies)


async def test_tool_choice_forms(fake: MiniMaxFake) -> None:
    fake.add(FakeReply(text="none"))
    await generate(model_for(fake), [Msg.user("hi")], [TOOL],
                   GenerateOptions(tool_choice=ToolChoice.NONE))
    assert "tools" not in fake.bodies[0]
    error = await expect_error(model_for(fake), UnsupportedFeatureError, [TOOL],
                               GenerateOptions(tool_choice=ToolChoice.REQUIRED))
    assert error.feature == "tool_choice"
    error = await expect_error(model_for(fake), UnsupportedFeatureError, options=GenerateOptions(
        response_format=ResponseFormat("json_object")))
    assert error.feature == "native_output" and len(fake.bodies) == 1


@STREAMS
@pytest.mark.parametrize("size", [1, 2, 3, 7, 200])
@pytest.mark.parametrize("final_message", [True, False], ids=["final-message", "usage-chunk"])
async def test_think_tags_split_and_final_frame_deduped(stream: bool, size: int,
                                                        final_message: bool) -> None:
    async with MiniMaxFake(api_key=KEY, final_message=final_message) as fake:
        await _think_tags_split(fake, stream, size)
    await close_models()


async def _think_tags_split(fake: MiniMaxFake, stream: bool, size: int) -> None:
    fake.add(FakeReply(thinking="Weigh <b>options</b>.", text="Hello, <world>!", chunk_size=size,
                       usage=(42, 38)))
    model = model_for(fake, stream)
    chunks = [c async for c in model.stream([Msg.user("hi")], [], GenerateOptions())]
    thinking = "".join(c.text for c in chunks if isinstance(c, ThinkingDelta))
    text = "".join(c.text for c in chunks if isinstance(c, TextDelta))
    assert thinking.strip() == "Weigh <b>options</b>." and text == "Hello, <world>!"
    usage = [c.usage for c in chunks if c.type == "usage"]
    assert usage and usage[-1].input_tokens == 42 and usage[-1].output_tokens == 38


def test_parser_tag_cut_at_every_position() -> None:
    content = "<think>\nplan it\n</think>\n\nThe answer."
    for cut in range(1, len(content)):
        parser = MiniMaxParser()
        out = []
        for piece in (content[:cut], content[cut:]):
            out += parser.feed({"choices": [{"delta": {"content": piece}}]})
        out += parser.close()
        assert "".join(c.text for c in out if isinstance(c, ThinkingDelta)) == "plan it\n"
        assert "".join(c.text for c in out if isinstance(c, TextDelta)) == "The answer."


async def test_thinking_goes_back_inline(fake: MiniMaxFake) -> None:
    fake.add(FakeReply(thinking="Need the tool.", tool_calls=[FakeCall("get_weather",
                                                                       {"city": "Paris"})]),
             FakeReply(tool_calls=[FakeCall("generate_response", WEATHER)]))
    _, complete = await run(agent_for(model_for(fake)))
    assert complete.output == Weather(**WEATHER)
    assistant = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert assistant["content"] == "<think>\nNeed the tool.\n</think>\n\n"


async def test_stream_ends_on_final_frame_without_done() -> None:
    async with MiniMaxFake(send_done=False, fragment_tool_args=True, final_message=True) as fake:
        fake.add(FakeReply(text="ok", tool_calls=[FakeCall("get_weather", {"city": "Rome"})],
                           chunk_size=3))
        reply = await generate(model_for(fake), [Msg.user("hi")], [TOOL])
        await close_models()
    assert reply.message.text == "ok"
    assert dict(reply.message.tool_uses[0].input) == {"city": "Rome"}


@STREAMS
@pytest.mark.parametrize(("code", "kind"), [
    (1004, AuthenticationError), (1008, QuotaExceededError), (1026, ContentFilteredError),
    (2013, BadRequestError),
])
async def test_base_resp_errors_not_retried(fake: MiniMaxFake, stream: bool, code: int,
                                            kind: type[Exception]) -> None:
    fake.add_base_error(code, "vendor says no")
    error = await expect_error(model_for(fake, stream), kind)  # type: ignore[arg-type]
    assert error.code == str(code) and len(fake.bodies) == 1


@STREAMS
@pytest.mark.parametrize("code", [1002, 1039])
async def test_base_resp_rate_limits_retried(fake: MiniMaxFake, stream: bool, code: int) -> None:
    fake.add_base_error(code, "rate limit exceeded")
    fake.add(FakeReply(text="after retry"))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")])
    assert reply.message.text == "after retry" and len(fake.bodies) == 2


async def test_base_resp_exhausted_retries_typed(fake: MiniMaxFake) -> None:
    for _ in range(3):
        fake.add(base_error(1002, "rate limit exceeded"))
    error = await expect_error(model_for(fake), RateLimitedError)
    assert error.status == 429 and len(fake.bodies) == 3


def test_base_resp_in_a_stream_frame() -> None:
    model = MiniMaxChatModel("MiniMax-M2.7", api_key="k")
    error = model.payload_error({"base_resp": {"status_code": 1027, "status_msg": "sensitive"}})
    assert isinstance(error, ContentFilteredError) and not error.retryable
    assert model.payload_error({"base_resp": {"status_code": 0, "status_msg": ""}}) is None


@STREAMS
async def test_wrong_key(fake: MiniMaxFake, stream: bool) -> None:
    model = tracked(MiniMaxChatModel("MiniMax-M2.7", api_key="bad", base_url=fake.url,
                                     stream=stream, settings=FAST))
    await expect_error(model, AuthenticationError)


async def test_state_unchanged_after_stream_cut(fake: MiniMaxFake) -> None:
    await check_state_unchanged_after_cut(fake, lambda s: model_for(fake, s))


def test_final_frame_is_used_when_nothing_was_streamed() -> None:
    parser = MiniMaxParser()
    out = parser.feed({"object": "chat.completion.chunk",
                       "choices": [{"delta": {"role": "assistant"}}]})
    out += parser.feed({"object": "chat.completion", "choices": [{
        "message": {"content": "<think>x</think>whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
    assert [c.text for c in out if isinstance(c, TextDelta)] == ["whole"]
    assert parser.terminal and [c.type for c in out][-1] == "finish"


def test_base_resp_with_a_non_numeric_code_is_a_server_error() -> None:
    error = base_resp_error("minimax", {"base_resp": {"status_code": "abc", "status_msg": "x"}})
    assert type(error) is ServerError and str(error).endswith("x")
