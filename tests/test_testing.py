"""Tests for agentflow.testing: ScriptedModel and FunctionModel are public API."""

import time

import anyio
import anyio.lowlevel
import pytest

import agentflow.testing as testing_module
from agentflow.messages import Msg
from agentflow.model import (
    ChatModel,
    FinishChunk,
    GenerateOptions,
    ModelProfile,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.reply import generate
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel


async def _collect(model, messages=(), tools=(), options=None):
    return [c async for c in model.stream(list(messages), list(tools),
                                          options or GenerateOptions())]


def test_public_names_exist():
    for name in testing_module.__all__:
        assert hasattr(testing_module, name), name


def test_models_are_chat_models_with_configurable_profile():
    profile = ModelProfile(supports_tools=False, native_output="json_object")
    scripted = ScriptedModel(profile=profile, name="mine")
    assert isinstance(scripted, ChatModel)
    assert scripted.profile is profile
    assert scripted.model_name == "mine"
    assert ScriptedModel().profile == ModelProfile()
    assert ScriptedModel().model_name == "scripted"
    fn = FunctionModel(lambda r: "x", profile=profile)
    assert isinstance(fn, ChatModel)
    assert fn.profile is profile
    assert fn.model_name == "function"


async def test_text_reply_chunks():
    chunks = await _collect(ScriptedModel(["hello"]))
    assert chunks == [TextDelta("hello"), UsageChunk(Usage(10, 5)), FinishChunk("stop", "stop")]


async def test_replies_are_played_in_order_and_requests_recorded():
    model = ScriptedModel(["one", Reply(text="two")])
    tools = [ToolSpec("t", "d", {"type": "object"})]
    options = GenerateOptions(tool_choice=ToolChoice.REQUIRED)
    first = await generate(model, [Msg.user("a")], tools, options)
    second = await generate(model, [Msg.user("b"), Msg.assistant("c")])
    assert (first.message.text, second.message.text) == ("one", "two")
    assert len(model.requests) == 2
    req = model.requests[0]
    assert isinstance(req, RecordedRequest)
    assert [m.text for m in req.messages] == ["a"]
    assert req.tools == tuple(tools)
    assert req.tool_names == ["t"]
    assert req.options is options
    assert [m.text for m in model.requests[1].messages] == ["b", "c"]


async def test_recorded_messages_are_a_snapshot():
    model = ScriptedModel(["x"])
    messages = [Msg.user("a")]
    await generate(model, messages)
    messages.append(Msg.user("later"))
    assert len(model.requests[0].messages) == 1


async def test_exhausted_script_raises_and_records():
    model = ScriptedModel(["only"])
    await generate(model, [Msg.user("a")])
    with pytest.raises(RuntimeError, match="request 2 but only 1 replies"):
        await generate(model, [Msg.user("b")])
    assert len(model.requests) == 2


async def test_chunk_size_thinking_first_and_usage_finish_last():
    chunks = await _collect(ScriptedModel([
        Reply(text="abcdefg", thinking="xyz", chunk_size=3, usage=Usage(1, 2),
              finish_reason="length"),
    ]))
    assert chunks == [
        ThinkingDelta("xyz"),
        TextDelta("abc"), TextDelta("def"), TextDelta("g"),
        UsageChunk(Usage(1, 2)),
        FinishChunk("length", "length"),
    ]


async def test_tool_calls_stream_as_fragments():
    chunks = await _collect(ScriptedModel([
        Reply(text="t", tool_calls=[Call("alpha", {"k": "vvvvv"}, id="id-a"), Call("beta")],
              chunk_size=4),
    ]))
    deltas = [c for c in chunks if isinstance(c, ToolCallDelta)]
    alpha = [d for d in deltas if d.index == 0]
    assert alpha[0].id == "id-a"
    assert alpha[0].name == "alpha"
    assert all(d.id is None and d.name is None for d in alpha[1:])
    assert len(alpha) > 1
    assert "".join(d.arguments for d in alpha) == '{"k":"vvvvv"}'
    (beta,) = [d for d in deltas if d.index == 1]
    assert beta.name == "beta"
    assert beta.id.startswith("call_")
    assert beta.arguments == "{}"
    assert chunks[-1] == FinishChunk("tool_calls", "tool_calls")


async def test_raw_string_arguments_are_sent_as_given():
    model = ScriptedModel([Reply(tool_calls=[Call("a", ""), Call("b", "{broken")])])
    response = await generate(model, [Msg.user("x")])
    a, b = response.message.tool_uses
    assert a.input == {}
    assert b.input == {"__raw_arguments__": "{broken"}


async def test_error_without_error_after_raises_before_any_chunk():
    got = []
    with pytest.raises(ValueError, match="at once"):
        async for chunk in ScriptedModel([Reply(text="x", error=ValueError("at once"))]).stream(
            [], [], GenerateOptions()
        ):
            got.append(chunk)
    assert got == []


async def test_error_after_n_chunks():
    got = []
    model = ScriptedModel([Reply(text="abcdef", chunk_size=2, error=OSError("cut"),
                                 error_after=2)])
    with pytest.raises(OSError, match="cut"):
        async for chunk in model.stream([], [], GenerateOptions()):
            got.append(chunk)
    assert got == [TextDelta("ab"), TextDelta("cd")]


async def test_error_after_past_the_last_chunk_still_raises():
    model = ScriptedModel([Reply(text="ab", error=OSError("late"), error_after=10)])
    with pytest.raises(OSError, match="late"):
        await _collect(model)


async def test_delay_before_each_chunk():
    model = ScriptedModel([Reply(text="abc", chunk_size=1, delay=0.01)])
    start = time.monotonic()
    chunks = await _collect(model)
    assert len(chunks) == 5
    assert time.monotonic() - start >= 0.045


async def test_function_model_sync_and_async_functions():
    def sync_fn(request: RecordedRequest) -> str:
        return "echo: " + request.messages[-1].text

    async def async_fn(request: RecordedRequest) -> Reply:
        await anyio.lowlevel.checkpoint()
        return Reply(text="async " + request.messages[-1].text, usage=Usage(2, 3))

    sync_model = FunctionModel(sync_fn)
    r1 = await generate(sync_model, [Msg.user("hi")])
    assert r1.message.text == "echo: hi"
    assert sync_model.requests[0].messages[0].text == "hi"

    async_model = FunctionModel(async_fn)
    r2 = await generate(async_model, [Msg.user("yo")])
    assert r2.message.text == "async yo"
    assert r2.usage == Usage(2, 3, requests=1)


async def test_function_model_sees_the_recorded_request():
    seen = []

    def fn(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply(tool_calls=[Call("t", {"n": len(request.messages)})])

    model = FunctionModel(fn)
    response = await generate(model, [Msg.user("a"), Msg.user("b")],
                              [ToolSpec("t", "", {"type": "object"})])
    assert seen == model.requests
    assert response.message.tool_uses[0].input == {"n": 2}
    assert seen[0].tool_names == ["t"]
