"""The DashScope compatible-mode adapter against the fake DashScope server:
profiles, ``specific`` forcing (never ``required``), thinking, native output
off by default / opt-in / never while thinking, errors. Case C04 lives here."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.agent import ReActAgent
from agentflow.errors import (
    AuthenticationError,
    ModeratedRequestError,
    QuotaExceededError,
    StructuredOutputError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputRetry, ThinkingChunk
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeError, FakeReply
from .fakes.dashscope import DashScopeFake
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
    lookup,
    output_call,
    run,
    run_failing,
    system_texts,
    tracked,
)

KEY = "sk-dashscope-test"
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})
WEATHER_TEXT = '{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'


@pytest.fixture
async def fake() -> Any:
    async with DashScopeFake(api_key=KEY) as server:
        yield server
    await close_models()


def profile(name: str, **changes: Any) -> Any:
    """The profile of ``name`` with ``changes`` (a user override)."""
    return DashScopeChatModel(name, api_key="k").profile.with_(**changes)


@pytest.mark.parametrize(("name", "thinking", "transport", "enable_thinking"), [
    ("qwen-plus", None, "whole", None),  # thinking off by default: whole is the same reply
    ("qwen3-32b", None, "stream", None),  # thinks by default, which needs a stream
    ("qwen-plus", True, "stream", True),
    ("qwen3-32b", False, "whole", False),
])
async def test_call_fetches_whole_replies_unless_thinking_needs_a_stream(
        fake: DashScopeFake, name: str, thinking: bool | None, transport: str,
        enable_thinking: bool | None) -> None:
    fake.add(FakeReply(text="ok"))
    agent = ReActAgent("d", model_for(fake, name=name),
                       options=GenerateOptions(thinking=thinking))
    assert (await agent.call("hi")).text == "ok"
    assert fake.transports == [transport]
    assert fake.bodies[0].get("enable_thinking") == enable_thinking


def model_for(fake: DashScopeFake, stream: bool = True, name: str = "qwen-plus",
              **kw: Any) -> DashScopeChatModel:
    model = DashScopeChatModel(name, api_key=KEY, base_url=fake.url, stream=stream,
                               settings=FAST, **kw)
    return tracked(model)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "supports", "default"), [
    ("qwen-plus", True, False), ("qwen-flash", True, False), ("qwen3-max", True, False),
    ("qwen3-32b", True, True), ("qwq-plus", True, True),
    ("qwen3-235b-a22b-thinking-2507", True, True),
    ("qwen3-235b-a22b-instruct-2507", False, False), ("qwen-max", False, False),
])
def test_profiles(name: str, supports: bool, default: bool) -> None:
    p = profile(name)
    assert (p.supports_thinking, p.thinking_default) == (supports, default)
    assert p.tool_choice_modes == {"auto", "none", "specific"}
    assert p.native_output is None and not p.forced_tool_choice_with_thinking


@STREAMS
async def test_agent_tool_path_with_specific_forcing(fake: DashScopeFake, stream: bool) -> None:
    await check_tool_path_with_forcing(fake, lambda s: model_for(fake, s), stream)


async def test_required_is_never_sent(fake: DashScopeFake) -> None:
    error = await expect_error(model_for(fake), UnsupportedFeatureError, [TOOL],
                               GenerateOptions(tool_choice=ToolChoice.REQUIRED))
    assert error.feature == "tool_choice" and fake.bodies == []


@STREAMS
async def test_thinking_mode_uses_reminders(fake: DashScopeFake, stream: bool) -> None:
    fake.add(FakeReply(thinking="Look it up.", tool_calls=[FakeCall("get_weather",
                                                                    {"city": "Paris"})]),
             FakeReply(text=PROSE), output_call())
    agent = agent_for(model_for(fake, stream), options=GenerateOptions(thinking=True))
    events, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert all(b["enable_thinking"] is True for b in fake.bodies)
    assert forced_choices(fake) == []
    assert any(isinstance(e, ThinkingChunk) for e in events)
    assert any("<system-reminder>" in t for t in system_texts(fake.bodies[2]))


async def test_forced_choice_refused_in_thinking_maps_to_tool_choice(fake: DashScopeFake) -> None:
    model = model_for(fake, profile=profile("qwen-plus", forced_tool_choice_with_thinking=True))
    error = await expect_error(model, UnsupportedFeatureError, [TOOL], GenerateOptions(
        thinking=True, tool_choice=ToolChoice.specific("get_weather")))
    assert error.feature == "tool_choice" and "thinking mode" in error.message


@STREAMS
async def test_native_json_object_opt_in(fake: DashScopeFake, stream: bool) -> None:
    model = model_for(fake, stream, profile=profile("qwen-plus", native_output="json_object"))
    fake.add(lookup(), FakeReply(text=WEATHER_TEXT))
    _, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert fake.bodies[0]["response_format"] == {"type": "json_object"}


async def test_native_json_schema_opt_in(fake: DashScopeFake) -> None:
    model = model_for(fake, profile=profile("qwen-plus", native_output="json_schema"))
    fake.add(FakeReply(text=WEATHER_TEXT))
    _, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert fake.bodies[0]["response_format"]["type"] == "json_schema"


@STREAMS
async def test_native_output_never_sent_while_thinking(fake: DashScopeFake, stream: bool) -> None:
    model = model_for(fake, stream, profile=profile("qwen-plus", native_output="json_object"))
    fake.add(lookup(), output_call())
    agent = agent_for(model, options=GenerateOptions(thinking=True))
    events, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]
    assert not any("response_format" in b for b in fake.bodies)


@STREAMS
async def test_c04_native_output_ignored_is_never_silent(stream: bool) -> None:
    """C04: the server ignores response_format and answers prose: the engine
    steps down to the tool strategy (once, within output_retries), and a call
    that never gets an output ends with StructuredOutputError carrying the raw
    text, not a reply without data."""
    async with DashScopeFake(ignore_response_format=True) as fake:
        fake.default = FakeReply(text="It is sunny in Hangzhou today, around 25°C.")
        model = model_for(fake, stream, profile=profile("qwen-plus", native_output="json_object"))
        events, error = await run_failing(agent_for(model))
        await close_models()
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation", "forcing"]
    assert "response_format" in fake.bodies[0]
    assert "response_format" not in fake.bodies[1]
    assert "generate_response" in [t["function"]["name"] for t in fake.bodies[1]["tools"]]
    assert isinstance(error, StructuredOutputError) and "Hangzhou" in error.raw_text


@STREAMS
async def test_c04_prose_on_json_mode_then_the_output_tool(stream: bool) -> None:
    async with DashScopeFake(ignore_response_format=True) as fake:
        fake.add(FakeReply(text="It is sunny in Paris today, around 18°C."), output_call())
        model = model_for(fake, stream, profile=profile("qwen-plus", native_output="json_object"))
        events, complete = await run(agent_for(model))
        await close_models()
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]


async def test_whole_reply_turns_default_thinking_off(fake: DashScopeFake) -> None:
    fake.add(FakeReply(text="hi"))
    reply = await generate(model_for(fake, False, "qwen3-32b"), [Msg.user("hi")])
    assert reply.message.text == "hi" and fake.bodies[0]["enable_thinking"] is False


async def test_whole_reply_with_thinking_asked_is_refused_by_the_vendor(
        fake: DashScopeFake) -> None:
    error = await expect_error(model_for(fake, False, "qwen3-32b"), UnsupportedFeatureError,
                               options=GenerateOptions(thinking=True))
    assert error.feature == "thinking"


@STREAMS
async def test_401(fake: DashScopeFake, stream: bool) -> None:
    model = tracked(DashScopeChatModel("qwen-plus", api_key="wrong", base_url=fake.url,
                                       stream=stream, settings=FAST))
    await expect_error(model, AuthenticationError)


@pytest.mark.parametrize(("error", "kind"), [
    (FakeError(400, {"error": {"message": "Access denied, please make sure your account is "
                               "in good standing.", "type": "Arrearage", "code": "Arrearage"},
                     "request_id": "r"}), QuotaExceededError),
    (FakeError(400, {"error": {"message": "Input data may contain inappropriate content.",
                               "type": "data_inspection_failed",
                               "code": "DataInspectionFailed"}, "request_id": "r"}),
     ModeratedRequestError),
])
async def test_error_codes(fake: DashScopeFake, error: FakeError,
                           kind: type[Exception]) -> None:
    fake.add(error)
    await expect_error(model_for(fake), kind)  # type: ignore[arg-type]
    assert len(fake.bodies) == 1


async def test_429_retry_after(fake: DashScopeFake) -> None:
    await check_retry_after(fake, lambda s: model_for(fake, s), False, (
        429, {"error": {"message": "Requests rate limit exceeded", "type": "Throttling",
                        "code": "Throttling.RateQuota"}}, {"Retry-After": "0.2"}))


async def test_state_unchanged_after_stream_cut(fake: DashScopeFake) -> None:
    await check_state_unchanged_after_cut(fake, lambda s: model_for(fake, s))
