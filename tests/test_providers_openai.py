"""The OpenAI adapter (and the shared OpenAI-style machinery) against the fake
OpenAI server: requests as sent, streaming and whole replies, errors,
retries, and the agent's native / degraded paths. Cases C09, C10 and C23 live
here; wire-format unit tests are in test_providers_openai_wire.py."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow.agent import ReActAgent
from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    OverloadedError,
    ProviderConnectionError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    TruncatedStreamError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputRetry, ToolResult
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ResponseFormat,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate

from .fakes.base import FakeCall, FakeReply
from .fakes.openai import OpenAIFake, openai_error
from .provider_scenarios import (
    FAST,
    PROSE,
    WEATHER,
    Weather,
    agent_for,
    check_retry_after,
    check_state_unchanged_after_cut,
    close_models,
    expect_error,
    lookup,
    output_call,
    run,
    tracked,
)

KEY = "sk-test-secret-0123456789"
TOOL = ToolSpec("get_weather", "Weather of a city.",
                {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"]})
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake(api_key=KEY) as server:
        yield server
    await close_models()


def model_for(fake: OpenAIFake, stream: bool = True, **kw: Any) -> OpenAIChatModel:
    kw.setdefault("api_key", KEY)
    model = OpenAIChatModel(kw.pop("name", "gpt-4o-mini"), base_url=fake.url, stream=stream,
                            settings=FAST, **kw)
    return tracked(model)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- request format


@pytest.mark.parametrize(("choice", "wire"), [
    (ToolChoice.AUTO, "auto"), (ToolChoice.NONE, "none"), (ToolChoice.REQUIRED, "required"),
    (ToolChoice.specific("get_weather"),
     {"type": "function", "function": {"name": "get_weather"}}),
])
async def test_every_tool_choice_form_is_accepted(fake: OpenAIFake, choice: ToolChoice,
                                                  wire: Any) -> None:
    fake.add(FakeReply(text="ok"))
    await generate(model_for(fake), [Msg.user("hi")], [TOOL], GenerateOptions(tool_choice=choice))
    assert fake.bodies[0]["tool_choice"] == wire


async def test_json_schema_response_format_sent_strict(fake: OpenAIFake) -> None:
    fake.add(FakeReply(text='{"city": "Paris"}'))
    schema = {"type": "object", "properties": {"city": {"type": "string"}},
              "required": ["city"], "additionalProperties": False}
    rf = ResponseFormat("json_schema", schema, name="City card!", description="a city")
    await generate(model_for(fake), [Msg.user("hi")], options=GenerateOptions(response_format=rf))
    assert fake.bodies[0]["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "City_card_", "schema": schema, "strict": True, "description": "a city"}}


async def test_c23_json_mode_always_names_json(fake: OpenAIFake) -> None:
    """C23: JSON mode without "json" in the prompt is a 400; the adapter adds an
    instruction naming JSON when no message does, and only then."""
    fake.add(FakeReply(text='{"facts": []}'), FakeReply(text='{"facts": []}'))
    options = GenerateOptions(response_format=ResponseFormat("json_object"))
    await generate(model_for(fake), [Msg.system("Extract facts."), Msg.user("Sky is blue")],
                   options=options)
    sent = fake.bodies[0]["messages"]
    assert sent[1] == {"role": "system", "content": "Reply with a JSON object."}
    await generate(model_for(fake), [Msg.user("Give JSON facts")], options=options)
    assert len(fake.bodies[1]["messages"]) == 1


# ----------------------------------------------------------------------------- reply parsing


@STREAMS
async def test_text_usage_and_finish(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(text="Grüße, 世界! 😀", usage=(30, 9), chunk_size=3,
                       extra={"cached_tokens": 20, "reasoning_tokens": 4}))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")])
    assert reply.message.text == "Grüße, 世界! 😀"
    assert reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cached_tokens,
            reply.usage.reasoning_tokens) == (30, 9, 20, 4)


@STREAMS
async def test_tool_calls_assembled(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(text="Let me check.", tool_calls=[
        FakeCall("get_weather", {"city": "Paris"}, id="c1"),
        FakeCall("get_weather", {"city": "Zürich \"ZH\""}, id="c2")], chunk_size=3))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")], [TOOL])
    assert reply.finish_reason == "tool_calls"
    assert [(c.id, dict(c.input)) for c in reply.message.tool_uses] == [
        ("c1", {"city": "Paris"}), ("c2", {"city": 'Zürich "ZH"'})]


@STREAMS
async def test_refusal(fake: OpenAIFake, stream: bool) -> None:
    fake.add(FakeReply(extra={"refusal": "I can't help with that."}))
    reply = await generate(model_for(fake, stream), [Msg.user("hi")])
    assert reply.finish_reason == "refusal"
    assert reply.message.text == "I can't help with that."


@STREAMS
@pytest.mark.parametrize(("raw", "reason"), [("length", "length"),
                                             ("content_filter", "content_filter"),
                                             ("something_new", "other")])
async def test_finish_reasons_normalized(fake: OpenAIFake, stream: bool, raw: str,
                                         reason: str) -> None:
    fake.add(FakeReply(text="cut", finish_reason=raw))
    assert (await generate(model_for(fake, stream), [Msg.user("hi")])).finish_reason == reason


@STREAMS
async def test_output_call_padded_to_the_token_limit_is_whole(fake: OpenAIFake,
                                                               stream: bool) -> None:
    """GPT-4.1 writes newlines after a tool call's closed object until max_tokens
    (finish reason ``length``): the call lost nothing and is the output."""
    from contextlib import aclosing

    import orjson

    from agentflow.events import Complete

    padded = orjson.dumps(WEATHER).decode() + "\n" * 300
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", padded, id="call_1")],
                       finish_reason="length", chunk_size=40))
    agent = agent_for(model_for(fake, stream, name="gpt-4.1-mini"))
    async with aclosing(agent.stream("Weather in Paris?", Weather, strategy="tool")) as events_:
        events = [e async for e in events_]
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.output == Weather(**WEATHER) and len(fake.bodies) == 1
    assert not [e for e in events if isinstance(e, OutputRetry)]


@STREAMS
@pytest.mark.parametrize("arguments", ['{"city": "Paris", "days": 3',
                                       '{"city": "Paris", "days": 3}}'])
async def test_arguments_with_a_closing_brace_lost_or_doubled(fake: OpenAIFake, stream: bool,
                                                              arguments: str) -> None:
    """vLLM's Hermes parser drops the final brace of arguments ending in a number
    (vllm-project/vllm#32152) and Qwen models write one too many: the tool runs
    with the arguments the model meant, no retry."""
    seen: list[tuple[str, int]] = []

    def forecast(city: str, days: int) -> str:
        """The forecast.

        Args:
            city: the city.
            days: how many days.
        """
        seen.append((city, days))
        return "sunny"

    fake.add(FakeReply(tool_calls=[FakeCall("forecast", arguments, id="call_1")], chunk_size=6),
             FakeReply(text="Sunny."))
    agent = ReActAgent("t", model_for(fake, stream, name="Qwen/Qwen3-32B"), tools=[forecast])
    reply = await agent.call("forecast for Paris")
    assert reply.text == "Sunny." and seen == [("Paris", 3)]
    assert fake.bodies[1]["messages"][-1]["content"] == "sunny"


@STREAMS
async def test_c09_empty_arguments_string(fake: OpenAIFake, stream: bool) -> None:
    """C09: arguments "" parse as {}, the no-arg tool runs, history replays "{}";
    an empty output call gets a validation error listing the missing fields."""
    def get_time() -> str:
        """The current time."""
        return "12:00"

    fake.add(FakeReply(tool_calls=[FakeCall("get_time", "", id="call_1")]),
             FakeReply(tool_calls=[FakeCall("generate_response", "", id="call_2")]),
             output_call({"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}))
    from agentflow.agent import ReActAgent

    agent = ReActAgent("t", model_for(fake, stream, name="gpt-4-turbo"), tools=[get_time])
    events, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.name for r in results] == ["get_time"]  # the output tool's are not tool events
    assert results[0].output == "12:00" and not results[0].is_error
    refused = next(m for m in fake.bodies[2]["messages"] if m.get("tool_call_id") == "call_2")
    assert "city" in str(refused["content"])  # the empty output call's validation error
    replayed = fake.bodies[1]["messages"]
    call = next(m for m in replayed if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["arguments"] == "{}"


@STREAMS
async def test_c10_arguments_object_without_ids(fake: OpenAIFake, stream: bool) -> None:
    """C10: arguments sent as an object, no id/type: parsed, ids synthesised,
    replayed as a JSON string (the fake refuses object arguments)."""
    fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})],
                       extra={"arguments_as_object": True, "omit_tool_ids": True}),
             output_call())
    _, complete = await run(agent_for(model_for(fake, stream, name="gpt-4-turbo")))
    assert complete.output == Weather(**WEATHER)
    call = next(m for m in fake.bodies[1]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert call["id"].startswith("call_") and call["function"]["arguments"] == '{"city":"Paris"}'


async def test_sse_crlf_and_split_utf8_writes(fake: OpenAIFake) -> None:
    fake.add(FakeReply(text="日本語のテキスト✓", chunk_size=2,
                       extra={"crlf": True, "split_writes": True}))
    reply = await generate(model_for(fake), [Msg.user("hi")])
    assert reply.message.text == "日本語のテキスト✓"


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("kind", "error"), [
    (RateLimitedError, {"message": "slow down", "type": "rate_limit_exceeded"}),
    (ServerError, {"message": "boom", "type": "server_error"}),
    (QuotaExceededError, {"message": "pay", "type": "insufficient_quota"}),
])
async def test_mid_stream_error_line_is_typed_and_not_retried(
        fake: OpenAIFake, kind: type[Exception], error: dict[str, Any]) -> None:
    fake.add(FakeReply(text="partial text here", chunk_size=4,
                       extra={"stream_error": error, "error_after": 2}))
    with pytest.raises(kind):
        await generate(model_for(fake), [Msg.user("hi")])
    assert len(fake.bodies) == 1


async def test_stream_without_done_is_a_partial_connection_error(fake: OpenAIFake) -> None:
    fake.add(FakeReply(text="a long reply " * 5, chunk_size=4, cut_after=3))
    error = await expect_error(model_for(fake), ProviderConnectionError)
    assert error.partial and len(fake.bodies) == 1


async def test_a_stream_that_ends_after_its_finish_reason_without_done_is_whole(
        fake: OpenAIFake) -> None:
    """ik_llama.cpp, text-generation-webui and some gateways end a complete
    stream at EOF without ``data: [DONE]`` (ikawrakow/ik_llama.cpp#467); the
    openai SDK reads it as whole, and so do we: every streamed call to such a
    server failed as truncated. A stream cut before its finish_reason is still."""
    fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})], chunk_size=4,
                       extra={"no_done": True}), FakeReply(text="Sunny.", extra={"no_done": True}))
    model = model_for(fake, name="llama-3-8b")
    reply = await agent_for(model, options=GenerateOptions(stream=True)).call("Weather in Paris?")
    assert reply.text == "Sunny." and len(fake.bodies) == 2
    assert fake.transports == ["stream", "stream"]
    fake.add(FakeReply(text="cut " * 20, chunk_size=4, extra={"no_done": True, "no_finish": True}))
    await expect_error(model_for(fake), TruncatedStreamError)


@STREAMS
async def test_401_typed_without_the_key(fake: OpenAIFake, stream: bool) -> None:
    model = model_for(fake, stream, api_key="sk-wrong-key-999")
    error = await expect_error(model, AuthenticationError)
    assert error.status == 401 and error.code == "invalid_api_key" and error.vendor == "openai"
    assert "sk-wrong-key-999" not in str(error) and "sk-wrong-key-999" not in repr(model)
    assert len(fake.bodies) == 1


@STREAMS
async def test_400_typed(fake: OpenAIFake, stream: bool) -> None:
    fake.add(openai_error(400, "Invalid value for 'temperature'", param="temperature"))
    error = await expect_error(model_for(fake, stream), BadRequestError)
    assert type(error) is BadRequestError and error.status == 400


@pytest.mark.parametrize(("error", "feature"), [
    (openai_error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not "
                  "supported with this model.", param="response_format"), "native_output"),
    (openai_error(400, "tool_choice 'required' is not supported by this model",
                  param="tool_choice"), "tool_choice"),
    (openai_error(400, "tools is not supported in this model.", param="tools"), "tools"),
])
async def test_unsupported_feature_400s(fake: OpenAIFake, error: Any, feature: str) -> None:
    fake.add(error)
    raised = await expect_error(model_for(fake), UnsupportedFeatureError)
    assert raised.feature == feature


@STREAMS
async def test_429_retry_after_honoured(fake: OpenAIFake, stream: bool) -> None:
    await check_retry_after(fake, lambda s: model_for(fake, s), stream, (
        429, {"error": {"message": "Rate limit reached", "type": "requests",
                        "code": "rate_limit_exceeded"}}, {"Retry-After": "0.2"}))


async def test_insufficient_quota_is_not_retried(fake: OpenAIFake) -> None:
    fake.add(openai_error(429, "You exceeded your current quota", "insufficient_quota",
                          code="insufficient_quota", headers={"Retry-After": "0"}))
    await expect_error(model_for(fake), QuotaExceededError)
    assert len(fake.bodies) == 1


async def test_500_retried_then_succeeds(fake: OpenAIFake) -> None:
    fake.add(openai_error(500, "The server had an error", "server_error"),
             FakeReply(text="fine"))
    reply = await generate(model_for(fake), [Msg.user("hi")])
    assert reply.message.text == "fine" and len(fake.bodies) == 2


async def test_missing_key_for_openai_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error = await expect_error(OpenAIChatModel("gpt-4o"), AuthenticationError)
    assert "OPENAI_API_KEY" in str(error)


async def test_env_key_never_sent_to_another_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="hi"))
        async with OpenAIChatModel("local-model", base_url=fake.url, settings=FAST) as model:
            await generate(model, [Msg.user("hi")])
        assert "Authorization" not in fake.requests[0].headers
        assert model.profile.tool_choice_modes == {"auto", "none", "required"}


async def test_session_lifecycle(fake: OpenAIFake) -> None:
    fake.add(FakeReply(text="a"), FakeReply(text="b"))
    async with model_for(fake) as model:
        await generate(model, [Msg.user("hi")])
        session = model._http._session
        await generate(model, [Msg.user("hi")])
        assert model._http._session is session  # one session per model
    assert session is not None and session.closed
    await model.aclose()  # idempotent


# ----------------------------------------------------------------------------- agent end to end


@STREAMS
async def test_agent_native_path(fake: OpenAIFake, stream: bool) -> None:
    fake.add(lookup(), FakeReply(text='{"city": "Paris", "temperature_c": 18.5, '
                                      '"condition": "sunny"}', chunk_size=6))
    events, complete = await run(agent_for(model_for(fake, stream)))
    assert complete.output == Weather(**WEATHER)
    first = fake.bodies[0]
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["name"] == "Weather"
    assert first["response_format"]["json_schema"]["strict"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert not any(isinstance(e, OutputRetry) for e in events)


class Reading(BaseModel):
    """A reading whose schema strict mode cannot hold (a typeless field, a tuple)."""

    raw: Any
    at: tuple[int, int]


@STREAMS
async def test_agent_sends_a_schema_it_cannot_close_non_strict(fake: OpenAIFake,
                                                                stream: bool) -> None:
    # C13 kind: "schema must have a 'type' key" / prefixItems are 400s under
    # strict: true; the first request must already be acceptable.
    fake.add(FakeReply(text='{"raw": {"v": 1}, "at": [3, 4]}'))
    agent = ReActAgent("r", model_for(fake, stream, name="gpt-4o"))
    reply = await agent.call("read it", Reading)
    assert reply.output == Reading(raw={"v": 1}, at=(3, 4))
    assert len(fake.bodies) == 1
    sent = fake.bodies[0]["response_format"]["json_schema"]
    assert sent["strict"] is False and "prefixItems" in str(sent["schema"])


async def test_c20_refusal_wrapped_by_a_gateway_still_degrades(fake: OpenAIFake) -> None:
    # DeepSeek's thinking-mode refusal of a forced tool_choice, as OpenRouter
    # relays it: "Provider returned error" with the vendor's body in metadata.raw.
    raw = '{"error":{"message":"Thinking mode does not support this tool_choice"}}'
    model = model_for(fake, name="deepseek/deepseek-v4-flash",
                      profile=OpenAIChatModel("gpt-4-turbo", api_key="k").profile)
    fake.add(FakeReply(text=PROSE))
    fake.add_error(400, {"error": {"message": "Provider returned error", "code": 400,
                                   "metadata": {"provider_name": "DeepSeek", "raw": raw}}})
    fake.add(output_call())
    events, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == [
        "forcing", "degradation"]
    assert "tool_choice" not in fake.bodies[-1]


@STREAMS
async def test_c14_strict_function_schema_refused_is_sent_again_non_strict(
        fake: OpenAIFake, stream: bool) -> None:
    # A strict schema the vendor still refuses (C14's own 400; or a nesting depth, a
    # pattern it cannot compile): resent once without strict, and never strict again
    # from this model, instead of failing the call.
    fake.add_error(400, {"error": {
        "message": "Invalid schema for function 'generate_response': In context=("
                   "'properties', 'city'), 'default' is not permitted.",
        "type": "invalid_request_error", "param": "tools[1].function.parameters",
        "code": "invalid_function_parameters"}})
    fake.add(output_call(), output_call())
    agent = agent_for(model_for(fake, stream, name="gpt-4-turbo"))
    _, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    _, complete = await run(agent)
    assert complete.output == Weather(**WEATHER)
    strict = [[bool(t["function"].get("strict")) for t in b["tools"]] for b in fake.bodies]
    assert strict == [[True, True], [False, False], [False, False]]


@STREAMS
async def test_agent_degrades_when_json_schema_is_refused(stream: bool) -> None:
    async with OpenAIFake(json_schema=False) as fake:
        fake.add(lookup(), output_call())
        model = model_for(fake, stream, name="gpt-4o")
        events, complete = await run(agent_for(model))
        await close_models()
        assert complete.output == Weather(**WEATHER)
        assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]
        assert "response_format" in fake.bodies[0]
        assert "response_format" not in fake.bodies[1]
        assert fake.bodies[1]["tools"][-1]["function"]["name"] == "generate_response"
        assert fake.bodies[1]["tools"][-1]["function"]["strict"] is True


async def test_agent_json_mode_path_names_json(fake: OpenAIFake) -> None:
    model = model_for(fake, profile=OpenAIChatModel("gpt-4o", api_key="k").profile.with_(
        native_output="json_object"))
    # an invalid JSON answer is retried on JSON mode (prose would step down to the
    # output tool: test_structured_output), every request naming JSON
    fake.add(lookup(), FakeReply(text='{"city": "Paris"}'), FakeReply(text='{"city": "Paris", '
                                                              '"temperature_c": 18.5, '
                                                              '"condition": "sunny"}'))
    _, complete = await run(agent_for(model))
    assert complete.output == Weather(**WEATHER)
    assert all(b["response_format"] == {"type": "json_object"} for b in fake.bodies)


async def test_agent_state_unchanged_after_stream_cut(fake: OpenAIFake) -> None:
    await check_state_unchanged_after_cut(fake, lambda s: model_for(fake, s))


async def test_agent_accepts_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = agent_for("openai:gpt-4o-mini")  # type: ignore[arg-type]
    assert isinstance(agent.model, OpenAIChatModel)
    assert agent.model.profile.native_output == "json_schema"


async def test_key_echoed_by_the_server_is_redacted(fake: OpenAIFake) -> None:
    fake.add(openai_error(400, f"bad request from key {KEY}"))
    error = await expect_error(model_for(fake), BadRequestError)
    assert KEY not in str(error) and "***" in error.message


async def test_server_answering_json_to_a_stream_request() -> None:
    class NoStreaming(OpenAIFake):
        def is_stream(self, request: Any, body: Any) -> bool:
            return False

    async with NoStreaming() as fake:
        fake.add(FakeReply(text="whole anyway"))
        reply = await generate(model_for(fake, True, api_key=None), [Msg.user("hi")])
        await close_models()
    assert reply.message.text == "whole anyway"


async def test_named_error_event_is_typed() -> None:
    class ErrorEvent(OpenAIFake):
        def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
            frames = super().render_events(reply, body)[:2]
            return [*frames, b'event: error\ndata: {"message": "busy", "type": '
                             b'"overloaded_error"}\n\n']

    async with ErrorEvent() as fake:
        fake.add(FakeReply(text="some text"))
        with pytest.raises(OverloadedError):
            await generate(model_for(fake, api_key=None), [Msg.user("hi")])
        await close_models()


def test_thinking_off_sends_the_lowest_reasoning_effort() -> None:
    from agentflow.model import GenerateOptions
    from agentflow.providers.openai import OpenAIChatModel, lowest_reasoning_effort

    assert lowest_reasoning_effort("gpt-5.1") == "none"
    assert lowest_reasoning_effort("gpt-6-sol") == "none"
    assert lowest_reasoning_effort("gpt-5-mini") == "minimal"
    assert lowest_reasoning_effort("o3") is None
    off = GenerateOptions(thinking=False)
    body = OpenAIChatModel("gpt-5.2", api_key="k").build_body([], [], off)
    assert body["reasoning_effort"] == "none"
    assert "reasoning_effort" not in OpenAIChatModel("gpt-4o", api_key="k").build_body([], [], off)


def test_refused_response_format_schema_is_unsupported_native_output() -> None:
    import orjson

    from agentflow.errors import UnsupportedFeatureError
    from agentflow.providers.openai import openai_error

    body = orjson.dumps({"error": {
        "message": "Invalid schema for response_format 'Labels': In context=('properties', "
                   "'labels'), 'additionalProperties' is required to be supplied and to be false.",
        "type": "invalid_request_error", "param": "response_format", "code": None}})
    error = openai_error("openai", 400, {}, body)
    assert isinstance(error, UnsupportedFeatureError) and error.feature == "native_output"


async def test_org_and_project_from_the_environment_on_openai_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` as the openai SDK reads them
    (``OpenAI.__init__``), on OpenAI's host; never sent to another one."""
    monkeypatch.setenv("OPENAI_ORG_ID", " org-env\n")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_env")
    async with OpenAIChatModel("gpt-4o", api_key=KEY) as own:
        sent = {k.lower(): v for k, v in own._http._headers.items()}
    assert (sent["openai-organization"], sent["openai-project"]) == ("org-env", "proj_env")
    async with OpenAIChatModel("gpt-4o", api_key=KEY, organization="org-arg") as given:
        assert given._http._headers["OpenAI-Organization"] == "org-arg"
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="hi"))
        async with OpenAIChatModel("local-model", base_url=fake.url, settings=FAST) as model:
            await generate(model, [Msg.user("hi")])
        headers = {k.lower() for k in fake.requests[0].headers}
    assert not {"openai-organization", "openai-project"} & headers
