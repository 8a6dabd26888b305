"""Self-hosted OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) refusing a
response format, a strict tool schema, a forced tool choice or tools in their own
wording: the refusal is an ``UnsupportedFeatureError`` naming the part of the
request to drop (``providers._openai_errors``, ``OpenAICompatibleModel.stream``),
so the same fallback applies as for the vendors. The bodies are the servers'
own: llama.cpp's ``{"error": {"code", "message", "type"}}`` (400, or 500
``server_error`` in many builds), vLLM's ``{"error": {"message", "type":
"BadRequestError", "param", "code": 400}}``, LM Studio's ``{"error": "..."}``."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import ServerError, UnsupportedFeatureError
from agentflow.events import OutputRetry
from agentflow.model import ModelProfile
from agentflow.providers._openai_compat import GENERIC_PROFILE, OpenAICompatibleModel
from agentflow.providers._openai_errors import (
    openai_error,
    schema_carrier,
    unsupported_feature,
)

from .fakes.base import FakeReply
from .fakes.openai import OpenAIFake
from .provider_scenarios import (
    FAST,
    PROSE,
    WEATHER,
    Weather,
    agent_for,
    close_models,
    output_call,
    run,
    tracked,
)

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])

XGRAMMAR = "The provided JSON schema contains features not supported by xgrammar."
LLAMA_SCHEMA = "JSON schema conversion failed:\nPattern must start with '^' and end with '$'"
LLAMA_TOOLS = ("Unable to generate parser for this template. Automatic parser generation "
               "failed: JSON schema conversion failed:\nUnrecognized schema: \"object\"")


def vllm(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "BadRequestError", "param": None,
                      "code": 400}}


def llama(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status == 400 else "server_error"
    return {"error": {"code": status, "message": message, "type": kind}}


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        yield server
    await close_models()


def model_for(fake: OpenAIFake, stream: bool = True,
              profile: ModelProfile | None = None) -> OpenAICompatibleModel:
    model = OpenAICompatibleModel("qwen3-8b", base_url=fake.url, stream=stream,
                                  settings=FAST, profile=profile)
    return tracked(model)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- classification


@pytest.mark.parametrize(("message", "feature"), [
    (XGRAMMAR, "native_output"),
    ("Failed to transform json schema into a grammar: unsupported keyword", "native_output"),
    ("Grammar error: unsatisfiable schema", "native_output"),
    ("Regex uses unsupported feature for structured outputs: lookaround.", "native_output"),
    (LLAMA_SCHEMA, "native_output"),
    (LLAMA_TOOLS, "native_output"),  # the adapter names the tools (schema_carrier)
    ("output_config.format.schema: Invalid schema: The compiled grammar is too large, which "
     "would cause performance issues.", "native_output"),  # Anthropic behind a gateway
    ("Schemas contains too many optional parameters (30), which would cause the grammar to "
     "be too large.", "native_output"),
    ("'response_format.type' must be 'json_schema' or 'text'", "native_output"),  # LM Studio
    ("'response_format.type' must be 'json_schema'", "native_output"),
    ('response_format type must be one of "text" or "json_object", but got: json_schema',
     "native_output"),  # older llama.cpp
    ("tools param requires --jinja flag", "tools"),
    ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
     "tools"),
    ("Unsupported param: tool_choice", "tool_choice"),
    # Anthropic's forced-tool refusal while thinking, relayed by a gateway (C20)
    ("Provider returned error: Thinking may not be enabled when tool_choice forces tool use.",
     "tool_choice"),
    ("Invalid parameter: only 'text' and 'json_object' response_format types are supported",
     "native_output"),
    ("tool_choice should be 'auto' for this model", "tool_choice"),
    ("Only one of max_tokens and max_completion_tokens may be set.", None),
    ("Only 128 tools are allowed per request.", None),  # no feature is refused as such
    ("max_tokens must be at least 1, got 0.", None),
    ("This model's maximum context length is 4096 tokens.", None),
])
def test_self_hosted_servers_wording_is_classified(message: str, feature: str | None) -> None:
    assert unsupported_feature(message) == feature


@pytest.mark.parametrize("message", [LLAMA_SCHEMA, "tools param requires --jinja flag",
                                     'response_format type must be one of "text" or '
                                     '"json_object", but got: json_schema'])
def test_llama_cpp_500_refusal_is_unsupported_not_a_server_fault(message: str) -> None:
    import orjson
    error = openai_error("openai-compatible", 500, {}, orjson.dumps(llama(500, message)))
    assert isinstance(error, UnsupportedFeatureError) and not error.retryable
    assert error.status == 500
    other = openai_error("openai-compatible", 500, {}, orjson.dumps(
        llama(500, "CUDA error: out of memory")))
    assert isinstance(other, ServerError) and other.retryable


@pytest.mark.parametrize(("body", "carrier"), [
    ({"response_format": {"type": "json_schema"}, "tools": [{"function": {"strict": True}}]},
     "native_output"),
    ({"response_format": {"type": "json_object"}}, None),
    ({"tools": [{"function": {"name": "a"}}, {"function": {"strict": True}}]}, "strict"),
    ({"tools": [{"function": {}}], "tool_choice": "required"}, "tool_choice"),
    ({"tools": [{"function": {}}], "tool_choice": {"type": "function"}}, "tool_choice"),
    ({"tools": [{"function": {}}], "tool_choice": "auto"}, "tools"),
    ({"tools": [{"function": {}}]}, "tools"),
    ({"tools": []}, None),
])
def test_schema_carrier(body: dict[str, Any], carrier: str | None) -> None:
    assert schema_carrier(body) == carrier


# ----------------------------------------------------------------------------- the fallbacks


@STREAMS
@pytest.mark.parametrize(("status", "body"), [
    (400, vllm(XGRAMMAR)),
    (400, llama(400, LLAMA_SCHEMA)),
    (500, llama(500, LLAMA_SCHEMA)),
    (500, llama(500, 'response_format type must be one of "text" or "json_object", but '
                     "got: json_schema")),
], ids=["vllm", "llama.cpp-400", "llama.cpp-500", "old-llama.cpp"])
async def test_refused_response_format_takes_the_tool_path(
        fake: OpenAIFake, stream: bool, status: int, body: dict[str, Any]) -> None:
    fake.add_error(status, body)
    fake.add(output_call())
    events, complete = await run(agent_for(model_for(fake, stream)))
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]
    assert len(fake.bodies) == 2  # the refusal was not retried as a server fault
    assert fake.bodies[0]["response_format"]["type"] == "json_schema"
    assert "response_format" not in fake.bodies[1]
    assert fake.bodies[1]["tools"][-1]["function"]["name"] == "generate_response"


@STREAMS
async def test_lm_studio_refusing_json_mode_takes_the_tool_path(fake: OpenAIFake,
                                                                stream: bool) -> None:
    fake.add_error(400, {"error": "'response_format.type' must be 'json_schema' or 'text'"})
    fake.add(output_call())
    profile = GENERIC_PROFILE.with_(native_output="json_object")
    events, complete = await run(agent_for(model_for(fake, stream, profile)))
    assert complete.output == Weather(**WEATHER)
    assert fake.bodies[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in fake.bodies[1]
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]


@STREAMS
async def test_strict_tools_refused_by_the_engine_are_sent_again_non_strict(
        fake: OpenAIFake, stream: bool) -> None:
    fake.add_error(400, vllm(XGRAMMAR))
    fake.add(output_call(), output_call())
    profile = GENERIC_PROFILE.with_(native_output=None, schema_dialect="openai_strict")
    agent = agent_for(model_for(fake, stream, profile))
    for _ in range(2):
        _, complete = await run(agent)
        assert complete.output == Weather(**WEATHER)
    strict = [[bool(t["function"].get("strict")) for t in b["tools"]] for b in fake.bodies]
    assert strict[0] == [True, True] and strict[1:] == [[False, False], [False, False]]


@STREAMS
async def test_strict_and_forced_refused_twice_drops_strict_then_the_forcing(
        fake: OpenAIFake, stream: bool) -> None:
    # vLLM compiles the tools of a required/named tool_choice even without strict.
    fake.add(FakeReply(text=PROSE))
    fake.add_error(400, vllm(XGRAMMAR))
    fake.add_error(400, vllm(XGRAMMAR))
    fake.add(output_call())
    profile = GENERIC_PROFILE.with_(native_output=None, schema_dialect="openai_strict",
                                    tool_choice_modes=frozenset({"auto", "none", "required",
                                                                 "specific"}))
    named = {"type": "function", "function": {"name": "generate_response"}}
    events, complete = await run(agent_for(model_for(fake, stream, profile)))
    assert complete.output == Weather(**WEATHER)
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == [
        "forcing", "degradation"]
    assert fake.bodies[1]["tool_choice"] == named
    assert fake.bodies[1]["tools"][0]["function"]["strict"] is True
    assert "strict" not in fake.bodies[2]["tools"][0]["function"]
    assert fake.bodies[2]["tool_choice"] == named
    assert "tool_choice" not in fake.bodies[3]
    assert len(fake.bodies) == 4


@STREAMS
@pytest.mark.parametrize(("status", "body"), [
    (500, llama(500, "tools param requires --jinja flag")),
    (400, llama(400, LLAMA_TOOLS)),
    (400, vllm('"auto" tool choice requires --enable-auto-tool-choice and '
               "--tool-call-parser to be set")),
], ids=["llama.cpp-no-jinja", "llama.cpp-parser", "vllm-no-auto-tools"])
async def test_tools_refused_take_the_prompt_path(
        fake: OpenAIFake, stream: bool, status: int, body: dict[str, Any]) -> None:
    fake.add_error(status, body)
    fake.add(FakeReply(text='{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'))
    profile = GENERIC_PROFILE.with_(native_output=None)
    events, complete = await run(agent_for(model_for(fake, stream, profile)))
    assert complete.output == Weather(**WEATHER)
    assert "tools" in fake.bodies[0]
    assert "tools" not in fake.bodies[1]
    assert len(fake.bodies) == 2
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]


async def test_a_vendor_strict_refusal_beside_a_response_format_still_drops_strict(
        fake: OpenAIFake) -> None:
    # OpenAI's own wording for a strict function schema it refuses is about the tools
    # even when the request also carries a response format (the carrier rule is for
    # the engines' wording, which does not say which schema it means).
    from agentflow.messages import Msg
    from agentflow.model import GenerateOptions, ResponseFormat, ToolSpec
    from agentflow.reply import generate

    fake.add_error(400, {"error": {
        "message": "Invalid schema for function 'f': In context=(), 'default' is not permitted.",
        "type": "invalid_request_error", "param": "tools[0].function.parameters",
        "code": "invalid_function_parameters"}})
    fake.add(FakeReply(text='{"city": "Paris"}'))
    profile = GENERIC_PROFILE.with_(schema_dialect="openai_strict")
    tool = ToolSpec("f", "f.", {"type": "object", "properties": {"a": {"type": "string"}},
                                "required": ["a"], "additionalProperties": False}, strict=True)
    schema = {"type": "object", "properties": {"city": {"type": "string"}},
              "required": ["city"], "additionalProperties": False}
    reply = await generate(model_for(fake, False, profile), [Msg.user("x")], [tool],
                           GenerateOptions(response_format=ResponseFormat(
                               "json_schema", schema, "w", strict=True)))
    assert reply.message.text == '{"city": "Paris"}'
    assert fake.bodies[0]["tools"][0]["function"]["strict"] is True
    assert "strict" not in fake.bodies[1]["tools"][0]["function"]
    assert fake.bodies[1]["response_format"]["type"] == "json_schema"


# ----------------------------------------------------------------------------- optional fields


@pytest.mark.parametrize("body", [
    # vLLM before extra fields were allowed (vllm-project/vllm#10463)
    vllm("[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra "
         "inputs are not permitted', 'input': {'include_usage': True}}]"),
    # older Azure OpenAI api-versions
    {"error": {"message": "Unrecognized request argument supplied: stream_options",
               "type": "invalid_request_error", "param": "", "code": None}},
    # FastAPI-style servers
    {"detail": [{"type": "extra_forbidden", "loc": ["body", "stream_options"],
                 "msg": "Extra inputs are not permitted"}]},
], ids=["vllm", "azure", "fastapi"])
async def test_a_refused_stream_options_is_dropped_for_good(fake: OpenAIFake,
                                                            body: dict[str, Any]) -> None:
    fake.add_error(400, body)
    fake.add(FakeReply(text='{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'),
             FakeReply(text='{"city": "Paris", "temperature_c": 18.5, "condition": "sunny"}'))
    agent = agent_for(model_for(fake, True, GENERIC_PROFILE.with_(native_output="json_object")))
    for _ in range(2):
        _, complete = await run(agent)
        assert complete.output == Weather(**WEATHER)
    assert "stream_options" in fake.bodies[0]
    assert ["stream_options" in b for b in fake.bodies[1:]] == [False, False]
    assert all(b["stream"] is True for b in fake.bodies)


@pytest.mark.parametrize("message", [
    "Extra inputs are not permitted, field: 'parallel_tool_calls'",
    "Parallel tool calls are not supported for this model",  # in words: not the tools
])
async def test_a_refused_parallel_tool_calls_is_dropped(fake: OpenAIFake, message: str) -> None:
    fake.add_error(400, {"error": {"message": message, "code": 400}})
    fake.add(output_call())
    profile = GENERIC_PROFILE.with_(native_output=None, parallel_tool_calls_flag=True)
    _, complete = await run(agent_for(model_for(fake, False, profile)))
    assert complete.output == Weather(**WEATHER)
    assert fake.bodies[0]["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in fake.bodies[1]
    assert [t["function"]["name"] for t in fake.bodies[1]["tools"]] == [
        "get_weather", "generate_response"]  # the tools themselves are kept


@pytest.mark.parametrize("message", [
    "Extra inputs are not permitted, field: 'temperature'",   # not an optional field
    "stream_options.include_usage must be a boolean",          # named, but not refused as unknown
])
async def test_other_field_errors_stay_bad_requests(fake: OpenAIFake, message: str) -> None:
    from agentflow.errors import BadRequestError
    from agentflow.messages import Msg
    from agentflow.model import GenerateOptions
    from agentflow.reply import generate

    fake.add_error(400, {"error": {"message": message}})
    with pytest.raises(BadRequestError):
        await generate(model_for(fake, True), [Msg.user("x")], options=GenerateOptions(
            temperature=0.5))
    assert len(fake.bodies) == 1
