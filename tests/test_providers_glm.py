"""The GLM adapter against the fake GLM server: only ``auto`` tool choice,
the prompt-reminder path, whole tool calls, thinking, numeric error codes.
Case C21 lives here."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import (
    AuthenticationError,
    ModeratedRequestError,
    NotFoundError,
    QuotaExceededError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputPartial, OutputRetry, ThinkingChunk
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers.glm import GLMChatModel
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeReply
from .fakes.glm import GLMFake, glm_error
from .provider_scenarios import (
    FAST,
    PROSE,
    WEATHER,
    Weather,
    agent_for,
    check_prompt_reminder_path,
    check_retry_after,
    check_state_unchanged_after_cut,
    close_models,
    expect_error,
    forced_choices,
    output_call,
    run,
    tracked,
)

KEY = "glm-test-key"
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]}, strict=True)


@pytest.fixture
async def fake() -> Any:
    async with GLMFake(api_key=KEY) as server:
        yield server
    await close_models()


def model_for(fake: GLMFake, stream: bool = True, name: str = "glm-4.6", **kw: Any) -> GLMChatModel:
    model = GLMChatModel(name, api_key=KEY, base_url=fake.url, stream=stream, settings=FAST, **kw)
    return tracked(model)  # type: ignore[no-any-return]


def test_profiles_and_body() -> None:
    model = GLMChatModel("glm-4.6", api_key="k")
    assert model.profile.tool_choice_modes == {"auto", "none", "specific"}  # two emulated
    assert model.profile.thinking_default and model.profile.native_output is None
    assert not GLMChatModel("glm-4-plus", api_key="k").profile.supports_thinking
    body = model.build_body([Msg.user("hi")], [TOOL], GenerateOptions(
        tool_choice=ToolChoice.AUTO, thinking=False, max_tokens=9, parallel_tool_calls=False))
    assert body["tool_choice"] == "auto" and body["thinking"] == {"type": "disabled"}
    assert "stream_options" not in body and "strict" not in body["tools"][0]["function"]
    assert body["max_tokens"] == 9 and "parallel_tool_calls" not in body


@STREAMS
async def test_agent_prompt_reminder_path(fake: GLMFake, stream: bool) -> None:
    await check_prompt_reminder_path(fake, lambda s: model_for(fake, s), stream)


async def test_none_and_specific_are_emulated_and_forced_choices_never_sent(
        fake: GLMFake) -> None:
    fake.add(FakeReply(text="no tools"), FakeReply(text="named"))
    await generate(model_for(fake), [Msg.user("hi")], [TOOL],
                   GenerateOptions(tool_choice=ToolChoice.NONE))
    assert "tools" not in fake.bodies[0] and "tool_choice" not in fake.bodies[0]
    other = ToolSpec("get_time", "The time.", {"type": "object", "properties": {}})
    await generate(model_for(fake), [Msg.user("hi")], [other, TOOL],
                   GenerateOptions(tool_choice=ToolChoice.specific(TOOL.name)))
    named = fake.bodies[1]
    assert [t["function"]["name"] for t in named["tools"]] == [TOOL.name]
    assert "tool_choice" not in named
    assert named["messages"][-1]["role"] == "system"
    assert f"`{TOOL.name}`" in named["messages"][-1]["content"]
    error = await expect_error(model_for(fake), UnsupportedFeatureError, [TOOL],
                               GenerateOptions(tool_choice=ToolChoice.REQUIRED))
    assert error.feature == "tool_choice" and len(fake.bodies) == 2


@STREAMS
async def test_c21_tool_choice_must_be_auto(fake: GLMFake, stream: bool) -> None:
    """C21: GLM answers a named or required tool_choice "Tool choice must be
    auto". The forced turn sends none: it offers generate_response alone, with a
    reminder; no 400, no degradation, and the next call does the same."""
    agent = agent_for(model_for(fake, stream))
    fake.add(FakeReply(text=PROSE), output_call(), FakeReply(text=PROSE), output_call())
    events, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["forcing"]
    _, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert forced_choices(fake) == []
    first, forced = fake.bodies[0], fake.bodies[1]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather",
                                                                 "generate_response"]
    assert [t["function"]["name"] for t in forced["tools"]] == ["generate_response"]


async def test_tool_calls_arrive_whole_or_streamed(fake: GLMFake) -> None:
    call = FakeCall("generate_response", WEATHER)
    fake.add(FakeReply(tool_calls=[call], chunk_size=4), FakeReply(tool_calls=[call]))
    events, complete = await run(agent_for(model_for(fake)))
    assert complete.output == Weather(**WEATHER)
    assert [e.data for e in events if isinstance(e, OutputPartial)] == [WEATHER]  # whole
    reply = await generate(model_for(fake), [Msg.user("hi")], [TOOL],
                           GenerateOptions(extra={"tool_stream": True}))
    assert dict(reply.message.tool_uses[0].input) == WEATHER


@STREAMS
async def test_reasoning_and_sensitive_finish(fake: GLMFake, stream: bool) -> None:
    fake.add(FakeReply(thinking="think first", text="answer", finish_reason="sensitive"))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")])
    assert reply.finish_reason == "content_filter"
    assert reply.message.content[0].thinking == "think first"  # type: ignore[union-attr]
    assert reply.message.text == "answer"


@STREAMS
async def test_thinking_events_in_agent(fake: GLMFake, stream: bool) -> None:
    fake.add(FakeReply(thinking="hmm", tool_calls=[FakeCall("generate_response", WEATHER)]))
    events, complete = await run(agent_for(model_for(fake, stream)))
    assert complete.output == Weather(**WEATHER)
    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["hmm"]


@pytest.mark.parametrize(("status", "code", "kind"), [
    (429, "1113", QuotaExceededError), (429, "1304", QuotaExceededError),
    (401, "1002", AuthenticationError), (400, "1211", NotFoundError),
    (400, "1301", ModeratedRequestError),
])
async def test_error_codes(fake: GLMFake, status: int, code: str,
                           kind: type[Exception]) -> None:
    fake.add(glm_error(status, code, "vendor says no"))
    error = await expect_error(model_for(fake), kind)  # type: ignore[arg-type]
    assert error.code == code and len(fake.bodies) == 1


@STREAMS
async def test_401(fake: GLMFake, stream: bool) -> None:
    model = tracked(GLMChatModel("glm-4.6", api_key="nope", base_url=fake.url, stream=stream,
                                 settings=FAST))
    error = await expect_error(model, AuthenticationError)
    assert error.code == "1000"


async def test_1302_retried_after_retry_after(fake: GLMFake) -> None:
    await check_retry_after(fake, lambda s: model_for(fake, s), True, (
        429, {"error": {"code": "1302", "message": "High concurrency"}}, {"Retry-After": "0.2"}))


async def test_state_unchanged_after_stream_cut(fake: GLMFake) -> None:
    await check_state_unchanged_after_cut(fake, lambda s: model_for(fake, s))
