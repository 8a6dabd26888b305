"""The OpenAI chat-completions wire format (providers/_openai_wire.py), the
request bodies ``OpenAICompatibleModel`` builds, the error classification
(providers/_openai_errors.py), and malformed or empty replies read under
``ReplyGuard`` (providers/_payload.py): as units, and through ``stream()``
against a fake that sends raw frames."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from agentflow.errors import ProviderConnectionError, ServerError
from agentflow.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    ResponseFormat,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.providers._markup import MarkupFilter, resolve_markups
from agentflow.providers._openai_errors import unsupported_feature
from agentflow.providers._openai_wire import ChunkParser, format_messages, sanitize_schema_name
from agentflow.providers._payload import ReplyGuard
from agentflow.providers.minimax import MiniMaxParser
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import ToolCallAssembler
from tests.fakes.base import FakeReply, collect, sse
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

TOOL = ToolSpec("get_weather", "Weather of a city.",
                {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"]})


def body_of(model: OpenAIChatModel, tools: list[ToolSpec] | None = None,
            messages: list[Msg] | None = None, **options: Any) -> dict[str, Any]:
    return model.build_body(messages or [Msg.user("hi")], tools or [], GenerateOptions(**options))


def test_messages_to_wire() -> None:
    messages = [
        Msg.system("be brief"),
        Msg.user("weather?"),
        Msg("assistant", [ThinkingBlock("hmm"), TextBlock("looking"),
                          ToolUseBlock("c1", "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock("c1", "18C"), ToolResultBlock("c2", "boom", is_error=True)]),
        Msg.system("reminder"),
    ]
    assert format_messages(messages) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "looking", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: boom"},
        {"role": "system", "content": "reminder"},
    ]
    only_calls = format_messages([Msg("assistant", [ToolUseBlock("c", "f", {})])])[0]
    assert only_calls["content"] is None and only_calls["tool_calls"][0]["function"][
        "arguments"] == "{}"
    late = format_messages(messages, late_system="user")
    assert late[0]["role"] == "system" and late[-1]["role"] == "user"


def test_tool_choice_and_parallel_flag_need_tools() -> None:
    model = OpenAIChatModel("gpt-4o", api_key="k")
    body = body_of(model, tool_choice=ToolChoice.REQUIRED, parallel_tool_calls=False)
    assert "tool_choice" not in body and "parallel_tool_calls" not in body
    body = body_of(model, [TOOL], parallel_tool_calls=False)
    assert body["parallel_tool_calls"] is False


def test_tools_strict_flag_and_empty_parameters() -> None:
    model = OpenAIChatModel("gpt-4o", api_key="k")
    tools = [ToolSpec("a", "A", {}, strict=True), ToolSpec("b", "B", TOOL.parameters)]
    body = body_of(model, tools)
    assert body["tools"][0]["function"] == {
        "name": "a", "description": "A", "strict": True,
        "parameters": {"type": "object", "properties": {}}}
    assert "strict" not in body["tools"][1]["function"]


def test_body_fields_own_host_and_compatible_host() -> None:
    own = body_of(OpenAIChatModel("gpt-4o", api_key="k"), max_tokens=50, temperature=0.2,
                  extra={"seed": 7})
    assert own["stream_options"] == {"include_usage": True}
    assert own["max_completion_tokens"] == 50 and "max_tokens" not in own
    assert own["temperature"] == 0.2 and own["seed"] == 7
    compat = body_of(OpenAIChatModel("qwen3", base_url="http://127.0.0.1:1/v1"), max_tokens=50)
    assert compat["max_tokens"] == 50
    whole = body_of(OpenAIChatModel("gpt-4o", api_key="k", stream=False))
    assert "stream" not in whole and "stream_options" not in whole


@pytest.mark.parametrize(("name", "wire"), [
    ("Weather", "Weather"), ("list[Weather Item]", "list_Weather_Item_"),
    ("x" * 80, "x" * 64), ("???", "output"), ("", "output"),
])
def test_schema_name_sanitized(name: str, wire: str) -> None:
    assert sanitize_schema_name(name) == wire


def test_json_schema_on_a_model_without_it_goes_as_json_mode() -> None:
    body = body_of(OpenAIChatModel("gpt-3.5-turbo", api_key="k"),
                   response_format=ResponseFormat("json_schema", {"type": "object"}))
    assert body["response_format"] == {"type": "json_object"}
    assert "JSON Schema" in body["messages"][0]["content"]


def test_interleaved_tool_call_fragments() -> None:
    parser, assembler = ChunkParser(), ToolCallAssembler()
    frames = [
        {"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
        {"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": "{"}},
        {"index": 0, "function": {"arguments": '{"x":'}},
        {"index": 1, "function": {"arguments": '"y": 2}'}},
        {"index": 0, "function": {"arguments": " 1}"}},
    ]
    for frame in frames:
        for chunk in parser.feed({"choices": [{"delta": {"tool_calls": [frame]}}]}):
            assert isinstance(chunk, ToolCallDelta)
            assembler.add(chunk)
    assert [(b.id, b.name, dict(b.input)) for b in assembler.finish()] == [
        ("a", "f", {"x": 1}), ("b", "g", {"y": 2})]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_legacy_function_call_is_a_tool_call(raw: RawOpenAIFake, stream: bool) -> None:
    # The deprecated single `function_call` some older compatible servers still answer
    # with (finish reason "function_call"): read as the tool call it is, not an empty reply.
    frames = [sse(chunk({"role": "assistant", "function_call": {"name": "get_weather",
                                                                 "arguments": ""}})),
              sse(chunk({"function_call": {"arguments": '{"city": '}})),
              sse(chunk({"function_call": {"arguments": '"Paris"}'}})),
              sse(chunk({}, "function_call")), DONE]
    body = {"choices": [{"message": {"role": "assistant", "content": None, "function_call": {
        "name": "get_weather", "arguments": '{"city": "Paris"}'}},
        "finish_reason": "function_call"}]}
    chunks = await reply_of(raw, stream=stream, frames=frames, json=body)
    assembler = ToolCallAssembler()
    for c in chunks:
        if isinstance(c, ToolCallDelta):
            assembler.add(c)
    assert [(b.name, dict(b.input)) for b in assembler.finish()] == [
        ("get_weather", {"city": "Paris"})]
    assert next(c for c in chunks if isinstance(c, FinishChunk)).reason == "tool_calls"


def test_parser_skips_zero_usage_and_null_finish() -> None:
    parser = ChunkParser()
    out = parser.feed({"choices": [{"delta": {"content": "a"}, "finish_reason": "null"}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0}})
    assert out == [TextDelta("a")]
    out = parser.feed({"choices": [{"message": {"content": None}, "finish_reason": "stop"}]})
    assert out == [FinishChunk("stop", "stop")]



# ----------------------------------------------------------------------------- malformed replies


def chunk(delta: Any = None, finish: Any = None) -> dict[str, Any]:
    return {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


@pytest.mark.parametrize("payload", [
    {"choices": {"a": 1}}, {"choices": ["x"]}, {"choices": 5}, {"choices": [{"delta": "hello"}]},
    chunk({"content": 5}), chunk({"refusal": ["no"]}), chunk({"tool_calls": "f"}),
    chunk({"tool_calls": [{"index": 0, "id": "a", "function": "f"}]}),
    chunk({"tool_calls": [{"index": 0, "id": ["a"], "function": {"name": "f"}}]}),
    chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": ["f"]}}]}),
    chunk({}, ["stop"]), chunk({}, 3),
    {"choices": [], "usage": {"prompt_tokens": "abc"}},
    {"choices": [], "usage": {"prompt_tokens": 1, "prompt_tokens_details": "x"}},
    {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens_details": [1]}},
], ids=["choices-dict", "choices-str-item", "choices-int", "delta-str", "content-int",
        "refusal-list", "tool-calls-str", "function-str", "id-list", "name-list",
        "finish-list", "finish-int", "usage-str", "prompt-details-str", "completion-details-list"])
@pytest.mark.parametrize("parser_class", [ChunkParser, MiniMaxParser])
def test_malformed_payloads_are_typed_errors(payload: Any, parser_class: type[ChunkParser]) -> None:
    with pytest.raises(ProviderConnectionError) as info:
        ReplyGuard("v", stream=True).fold(parser_class().feed, payload)
    assert info.value.partial and info.value.vendor == "v" and "malformed" in str(info.value)
    with pytest.raises(ServerError, match="malformed reply from v"):
        ReplyGuard("v", stream=False).fold(parser_class().feed, payload)


def _end(*payloads: Any) -> None:
    guard, parser = ReplyGuard("v", stream=True), ChunkParser()
    for payload in payloads:
        guard.fold(parser.feed, payload)
    guard.end()


USAGE = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


@pytest.mark.parametrize("payloads", [(), ({},), ({"choices": []},), (USAGE,),
                                      (chunk({"role": "assistant"}), USAGE)],
                         ids=["nothing", "empty-object", "no-choice", "usage-only", "role-only"])
def test_reply_without_content_or_finish_reason_is_refused(payloads: tuple[Any, ...]) -> None:
    with pytest.raises(ProviderConnectionError, match="empty reply"):
        _end(*payloads)


@pytest.mark.parametrize("payloads", [
    (chunk({"content": ""}, "stop"), USAGE),
    (chunk({"content": "hi"}),),
    ({"choices": [{"message": {"content": None}, "finish_reason": "stop"}]},),
], ids=["empty-text-with-finish-then-usage", "text-without-finish", "whole-empty-with-finish"])
def test_empty_text_with_a_finish_reason_is_an_answer(payloads: tuple[Any, ...]) -> None:
    _end(*payloads)


class RawOpenAIFake(OpenAIFake):
    """Streams ``extra["frames"]`` and answers ``extra["json"]`` as they are."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return list(reply.extra["frames"])

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["json"]


@pytest.fixture
async def raw() -> AsyncIterator[RawOpenAIFake]:
    async with RawOpenAIFake() as server:
        yield server


async def reply_of(fake: RawOpenAIFake, stream: bool = True, **extra: Any) -> list[Any]:
    fake.add(FakeReply(extra=extra))
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST,
                            stream=stream)
    try:
        return await collect(model.stream([Msg.user("hi")], [], GenerateOptions()))
    finally:
        await model.aclose()


DONE = b"data: [DONE]\n\n"


@pytest.mark.parametrize("frames", [
    [DONE], [b": keep-alive\n\n", DONE], [sse(USAGE), DONE], [sse([1, 2]), DONE],
    [sse(b'"text"'), DONE], [sse("text"), DONE], [sse(chunk({"content": 5})), DONE],
    [sse(b""), DONE],
], ids=["done-only", "comment-done", "usage-done", "list", "json-string", "not-json",
        "content-int", "empty-data"])
async def test_stream_malformed_or_empty_is_a_partial_connection_error(
        raw: RawOpenAIFake, frames: list[bytes]) -> None:
    with pytest.raises(ProviderConnectionError) as info:
        await reply_of(raw, frames=frames)
    assert info.value.partial and info.value.vendor == "openai"


@pytest.mark.parametrize("data", [b'"boom"', b"boom", b'{"message": "boom"}'],
                         ids=["json-string", "text", "object-without-error"])
async def test_error_event_is_a_server_error(raw: RawOpenAIFake, data: bytes) -> None:
    with pytest.raises(ServerError, match="boom"):
        await reply_of(raw, frames=[sse(data, "error")])


@pytest.mark.parametrize("body", [[1, 2], None, "hello", {}, {"choices": []},
                                  {"choices": [{"message": "hi", "finish_reason": "stop"}]}],
                         ids=["list", "null", "str", "empty", "no-choice", "message-str"])
async def test_whole_reply_malformed_or_empty_is_a_server_error(raw: RawOpenAIFake,
                                                                body: Any) -> None:
    raw.default = FakeReply(extra={"json": body})  # on every retry (a JSON object's are)
    with pytest.raises(ServerError, match="reply from openai"):
        await reply_of(raw, stream=False, json=body)


async def test_whole_reply_refused_passes_on_no_chunk_first(raw: RawOpenAIFake) -> None:
    # usage but neither content nor a finish reason: refused before any chunk
    # of it (a usage chunk) reaches the caller
    raw.default = FakeReply(extra={"json": USAGE})  # the same on every retry
    model = OpenAIChatModel("gpt-4o-mini", base_url=raw.url, api_key="k", settings=FAST,
                            stream=False)
    seen: list[Any] = []
    try:
        with pytest.raises(ServerError, match="empty reply from openai"):
            async for item in model.stream([Msg.user("hi")], [], GenerateOptions()):
                seen.append(item)
    finally:
        await model.aclose()
    assert seen == []


def test_whole_chunks_is_the_reply_as_one_list() -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="k")
    body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": {
        "prompt_tokens": 3, "completion_tokens": 1}}
    chunks = model.whole_chunks(ReplyGuard("openai", stream=False), body,
                                MarkupFilter(resolve_markups(("hermes",))))
    assert chunks == [TextDelta("hi"), UsageChunk(Usage(3, 1)), FinishChunk("stop", "stop")]


async def test_whole_reply_with_empty_text_and_finish_reason_is_an_answer(
        raw: RawOpenAIFake) -> None:
    body = {"choices": [{"message": {"content": ""}, "finish_reason": "stop"}]}
    assert await reply_of(raw, stream=False, json=body) == [FinishChunk("stop", "stop")]


# ----------------------------------------------------------------------------- error classification


@pytest.mark.parametrize(("message", "param", "feature"), [
    ("Function calling with a response mime type: 'application/json' is unsupported", None,
     "native_output"),
    ("Function calling with a response mime type: 'application/json' is unsupported", "tools",
     "native_output"),
    ("responseMimeType is not supported together with tools", None, "native_output"),
    ("Response format 'json_object' is not supported by this model", None, "native_output"),
    ("json mode is not supported with tools", None, "native_output"),
    ("tools is not supported in this model.", "tools", "tools"),
    ("deepseek-reasoner does not support Function Calling", None, "tools"),
    ("Thinking mode does not support this tool_choice", None, "tool_choice"),
    ("tool_choice 'required' is not supported with response_format", None, "tool_choice"),
    ("This model does not support thinking", None, "thinking"),
    ("Invalid value for 'temperature'", "temperature", None),
    ("tools is not supported", ["tools"], "tools"),
])
def test_unsupported_feature_classification(message: str, param: Any, feature: str | None) -> None:
    assert unsupported_feature(message, param) == feature


def test_tool_call_arguments_with_lone_surrogates_are_serialized() -> None:
    wire = format_messages([Msg("assistant", [ToolUseBlock("c", "f", {"p": "caf\udce9"})])])
    args = wire[0]["tool_calls"][0]["function"]["arguments"]
    assert orjson.loads(args) == {"p": "caf\ufffd"}
