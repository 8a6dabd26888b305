"""The DeepSeek adapter against the fake DeepSeek server: profiles, thinking
(reasoning streamed and sent back), forcing with and without thinking, JSON
mode only, errors. Cases C20 and C24 live here."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import (
    AuthenticationError,
    QuotaExceededError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputRetry, ThinkingChunk
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ResponseFormat,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers._openai_wire import parse_usage
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeReply
from .fakes.deepseek import DeepSeekFake
from .provider_scenarios import (
    FAST,
    PROSE,
    WEATHER,
    Weather,
    agent_for,
    check_retry_after,
    check_state_unchanged_after_cut,
    check_tool_path_with_forcing,
    close_models,
    expect_error,
    forced_choices,
    output_call,
    run,
    system_texts,
    tracked,
)

KEY = "ds-test-key"
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"], "additionalProperties": False},
    strict=True)


@pytest.fixture
async def fake() -> Any:
    async with DeepSeekFake(api_key=KEY) as server:
        yield server
    await close_models()


def model_for(fake: DeepSeekFake, stream: bool = True, name: str = "deepseek-chat",
              **kw: Any) -> DeepSeekChatModel:
    kw.setdefault("base_url", fake.url)
    model = DeepSeekChatModel(name, api_key=KEY, stream=stream, settings=FAST, **kw)
    return tracked(model)  # type: ignore[no-any-return]


def profile(name: str, **changes: Any) -> Any:
    """The profile of ``name`` with ``changes`` (a user override)."""
    return DeepSeekChatModel(name, api_key="k").profile.with_(**changes)


def test_profiles() -> None:
    chat = DeepSeekChatModel("deepseek-chat", api_key="k").profile
    assert not chat.thinking_default and not chat.forced_tool_choice_with_thinking
    for name in ("deepseek-reasoner", "deepseek-v4-flash", "deepseek-v4-pro", "deepseek-v9"):
        profile = DeepSeekChatModel(name, api_key="k").profile
        assert profile.thinking_default and not profile.forced_tool_choice_with_thinking
        assert profile.native_output is None
        assert not profile.allows_tool_choice(ToolChoice.specific("x"), GenerateOptions())
        assert profile.allows_tool_choice(ToolChoice.specific("x"),
                                          GenerateOptions(thinking=False))


def test_thinking_switch_and_strict_only_on_beta() -> None:
    model = DeepSeekChatModel("deepseek-v4-flash", api_key="k")
    body = model.build_body([Msg.user("hi")], [TOOL], GenerateOptions(thinking=False))
    assert body["thinking"] == {"type": "disabled"}
    assert "strict" not in body["tools"][0]["function"]
    beta = DeepSeekChatModel("deepseek-v4-flash", api_key="k",
                             base_url="https://api.deepseek.com/beta")
    assert beta.build_body([Msg.user("hi")], [TOOL], GenerateOptions())["tools"][0][
        "function"]["strict"] is True


def test_usage_from_cache_hit_fields() -> None:
    usage = parse_usage({"prompt_tokens": 10, "completion_tokens": 2,
                         "prompt_cache_hit_tokens": 6, "prompt_cache_miss_tokens": 4})
    assert usage is not None and usage.cached_tokens == 6


@STREAMS
async def test_agent_tool_path_with_specific_forcing(fake: DeepSeekFake, stream: bool) -> None:
    await check_tool_path_with_forcing(fake, lambda s: model_for(fake, s), stream)


@STREAMS
async def test_thinking_streamed_sent_back_and_forcing_by_reminder(fake: DeepSeekFake,
                                                                   stream: bool) -> None:
    fake.add(FakeReply(thinking="I need the weather tool.", chunk_size=6,
                       tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
             FakeReply(thinking="Answer now.", text=PROSE),
             FakeReply(thinking="Use the output tool.",
                       tool_calls=[FakeCall("generate_response", WEATHER)]))
    events, complete = await run(agent_for(model_for(fake, stream, "deepseek-v4-flash")))
    assert complete.output == Weather(**WEATHER)
    assert "".join(e.text for e in events if isinstance(e, ThinkingChunk)).startswith(
        "I need the weather tool.")
    assistant = next(m for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == "I need the weather tool."
    assert forced_choices(fake) == []  # C20: never a forced choice while thinking
    assert any("<system-reminder>" in t for t in system_texts(fake.bodies[2]))


@STREAMS
async def test_c20_forced_choice_refused_in_thinking_degrades_once(fake: DeepSeekFake,
                                                                   stream: bool) -> None:
    """C20: a profile that wrongly allows forcing while thinking: the 400 becomes
    UnsupportedFeatureError(tool_choice), the call falls back to a reminder, and
    the refusal is remembered for later calls."""
    model = model_for(fake, stream, "deepseek-reasoner", profile=profile(
        "deepseek-reasoner", forced_tool_choice_with_thinking=True))
    agent = agent_for(model)
    fake.add(FakeReply(text=PROSE), output_call(), FakeReply(text=PROSE), output_call())
    events, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["forcing", "degradation"]
    assert len(forced_choices(fake)) == 1
    _, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert len(forced_choices(fake)) == 1  # not sent again


async def test_forced_choice_while_thinking_is_refused_before_sending(fake: DeepSeekFake) -> None:
    error = await expect_error(model_for(fake, name="deepseek-v4-pro"), UnsupportedFeatureError,
                               [TOOL], GenerateOptions(tool_choice=ToolChoice.REQUIRED))
    assert error.feature == "tool_choice" and fake.bodies == []
    fake.add(FakeReply(text="ok"))
    await generate(model_for(fake, name="deepseek-v4-pro"), [Msg.user("hi")], [TOOL],
                   GenerateOptions(tool_choice=ToolChoice.REQUIRED, thinking=False))
    assert fake.bodies[0]["tool_choice"] == "required"


@STREAMS
async def test_c24_json_schema_never_sent(fake: DeepSeekFake, stream: bool) -> None:
    """C24: even a profile claiming json_schema gets JSON mode with the schema
    in the prompt (the fake refuses json_schema)."""
    model = model_for(fake, stream, profile=profile("deepseek-chat", native_output="json_schema"))
    fake.add(FakeReply(text='{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'))
    _, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    body = fake.bodies[0]
    assert body["response_format"] == {"type": "json_object"}
    assert any("JSON Schema" in t and "temperature_c" in t for t in system_texts(body))


async def test_json_schema_refusal_maps_to_native_output(fake: DeepSeekFake) -> None:
    fake.add(fake.bad("This response_format type is unavailable now"))
    error = await expect_error(model_for(fake), UnsupportedFeatureError)
    assert error.feature == "native_output" and error.status == 400


async def test_json_object_opt_in(fake: DeepSeekFake) -> None:
    model = model_for(fake, profile=profile("deepseek-chat", native_output="json_object"))
    fake.add(FakeReply(text='{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'))
    _, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert fake.bodies[0]["response_format"] == {"type": "json_object"}


async def test_json_mode_direct_gets_json_word(fake: DeepSeekFake) -> None:
    fake.add(FakeReply(text="{}"))
    await generate(model_for(fake), [Msg.user("facts please")],
                   options=GenerateOptions(response_format=ResponseFormat("json_object")))
    assert "JSON" in fake.bodies[0]["messages"][0]["content"]


@STREAMS
async def test_usage_and_finish(fake: DeepSeekFake, stream: bool) -> None:
    fake.add(FakeReply(text="x", usage=(40, 3), finish_reason="insufficient_system_resource",
                       extra={"cached_tokens": 32}))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")])
    assert reply.finish_reason == "error"
    assert (reply.usage.input_tokens, reply.usage.cached_tokens) == (40, 32)


@STREAMS
async def test_401_octet_stream_body(fake: DeepSeekFake, stream: bool) -> None:
    model = tracked(DeepSeekChatModel("deepseek-chat", api_key="bad", base_url=fake.url,
                                      stream=stream, settings=FAST))
    error = await expect_error(model, AuthenticationError)
    assert "Authentication Fails" in error.message


async def test_402_not_retried(fake: DeepSeekFake) -> None:
    fake.add_error(402, {"error": {"message": "Insufficient Balance", "type": "unknown_error"}})
    await expect_error(model_for(fake), QuotaExceededError)
    assert len(fake.bodies) == 1


async def test_429_retry_after(fake: DeepSeekFake) -> None:
    await check_retry_after(fake, lambda s: model_for(fake, s), True, (
        429, {"error": {"message": "Rate Limit Reached", "type": "rate_limit_error"}},
        {"Retry-After": "0.2"}))


async def test_state_unchanged_after_stream_cut(fake: DeepSeekFake) -> None:
    await check_state_unchanged_after_cut(fake, lambda s: model_for(fake, s))
