"""The OpenAI chat-completions wire format (providers/_openai_wire.py) and the
request bodies ``OpenAICompatibleModel`` builds, without a server."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    ResponseFormat,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from agentflow.providers._openai_wire import ChunkParser, format_messages, sanitize_schema_name
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import ToolCallAssembler

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


def test_parser_skips_zero_usage_and_null_finish() -> None:
    parser = ChunkParser()
    out = parser.feed({"choices": [{"delta": {"content": "a"}, "finish_reason": "null"}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0}})
    assert out == [TextDelta("a")]
    out = parser.feed({"choices": [{"message": {"content": None}, "finish_reason": "stop"}]})
    assert out == [FinishChunk("stop", "stop")]

