"""AnthropicChatModel against the fake Messages API: wire shapes, structured
output on the native and tool paths, extended thinking, caching, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import (
    AuthenticationError,
    OutputTruncatedError,
    OverloadedError,
    ProviderConnectionError,
    RateLimitedError,
    ServerError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputPartial, OutputRetry
from agentflow.messages import Msg
from agentflow.model import FinishChunk, GenerateOptions
from agentflow.providers.anthropic import AnthropicChatModel, closed_schema, map_error
from agentflow.state import AgentState
from tests.fakes.anthropic import FORCED_WITH_THINKING, AnthropicFake, anthropic_error, signature_of
from tests.fakes.base import FakeCall, FakeReply, collect, sse
from tests.provider_scenarios import FAST, close_models, tracked

NATIVE, PLAIN, THINKING = "claude-sonnet-4-5", "claude-3-5-haiku-latest", "claude-sonnet-4-0"


class Contact(BaseModel):
    name: str
    email: str


CONTACT = {"name": "Ann", "email": "ann@example.org"}

STREAMED = GenerateOptions(stream=True)
"""Options of an agent whose call() streams (stream faults need a stream;
call() asks for whole replies otherwise)."""


def lookup(query: str) -> str:
    """Look a person up."""
    return f"{query}: ann@example.org"


@pytest.fixture
async def fake() -> AsyncIterator[AnthropicFake]:
    async with AnthropicFake() as server:
        yield server


@pytest.fixture(params=[True, False], ids=["stream", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    await close_models()


def model(fake: AnthropicFake, name: str = PLAIN, **kw: Any) -> AnthropicChatModel:
    kw.setdefault("api_key", "sk-test")
    built: AnthropicChatModel = tracked(
        AnthropicChatModel(name, base_url=fake.url, settings=FAST, **kw))
    return built


async def events(agent: ReActAgent, *args: Any, **kw: Any) -> list[Any]:
    return [e async for e in agent.stream(*args, **kw)]


def output_call(data: dict[str, Any] = CONTACT) -> FakeReply:
    return FakeReply(tool_calls=[FakeCall("generate_response", data)])


# ----------------------------------------------------------------------------- wire shape


@pytest.mark.parametrize(("start", "delta"), [
    ({}, {"input_tokens": 0, "output_tokens": 4}),                    # 0 in message_delta
    ({}, {"input_tokens": None, "output_tokens": 4, "cache_read_input_tokens": None}),
    ({"input_tokens": 0}, {"input_tokens": 30, "output_tokens": 4}),  # 0 in message_start
], ids=["delta-zero", "delta-null", "start-zero"])
async def test_streamed_usage_counts_never_go_down(fake: AnthropicFake, start: dict[str, Any],
                                                   delta: dict[str, Any]) -> None:
    # Anthropic-compatible servers put input_tokens: 0 in one event or the other;
    # the counts are cumulative, so the real input count stays.
    fake.add(FakeReply(text="Hello.", usage=(30, 4),
                       extra={"start_usage": start, "delta_usage": delta}))
    events_ = await events(ReActAgent("a", model(fake, stream=True)), "hi")
    assert events_[-1].usage.input_tokens == 30 and events_[-1].usage.output_tokens == 4


async def test_text_reply_system_top_level_and_headers(fake: AnthropicFake, stream: bool) -> None:
    fake.add(FakeReply(text="Hello there.", usage=(30, 4)))
    agent = ReActAgent("a", model(fake, stream=stream), sys_prompt="Be brief.")
    events_ = await events(agent, "hi")
    reply = events_[-1].message
    assert reply.text == "Hello there."
    assert events_[-1].usage.input_tokens == 30 and events_[-1].usage.output_tokens == 4
    body, headers = fake.bodies[0], fake.requests[0].headers
    assert headers["x-api-key"] == "sk-test" and headers["anthropic-version"] == "2023-06-01"
    assert body["system"] == [{"type": "text", "text": "Be brief.",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][0]["role"] == "user" and body["max_tokens"] == 4096
    assert body.get("stream", False) is stream


async def test_native_output_closes_objects(fake: AnthropicFake, stream: bool) -> None:
    fake.add(FakeReply(text='{"name": "Ann", "email": "ann@example.org"}'))
    agent = ReActAgent("a", model(fake, NATIVE, stream=stream))
    events_ = await events(agent, "Extract: Ann, ann@example.org", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    body = fake.bodies[0]
    schema = body["output_config"]["format"]["schema"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert schema["additionalProperties"] is False and "tools" not in body
    if stream:
        assert any(isinstance(e, OutputPartial) for e in events_)


def test_closed_schema_moves_unsupported_constraints() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 2},
        "inner": {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer",
                                                                   "minimum": 1}}}]},
    }}
    closed = closed_schema(schema)
    assert closed["additionalProperties"] is False
    assert "minItems" not in closed["properties"]["tags"]
    assert "minItems: 2" in closed["properties"]["tags"]["description"]
    assert closed["properties"]["tags"]["items"]["description"] == "maxLength: 5"
    inner = closed["properties"]["inner"]["anyOf"][0]
    assert inner["additionalProperties"] is False
    assert inner["properties"]["a"] == {"type": "integer", "description": "minimum: 1"}


async def test_native_refused_at_run_time_degrades_to_tool() -> None:
    async with AnthropicFake(native_output=False) as fake:
        fake.add(output_call())  # the native request is refused by the fake's check
        agent = ReActAgent("a", model(fake, NATIVE))
        events_ = await events(agent, "Extract", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    assert "output_config" in fake.bodies[0] and "output_config" not in fake.bodies[1]
    assert [t["name"] for t in fake.bodies[1]["tools"]] == ["generate_response"]
    assert any(isinstance(e, OutputRetry) and e.reason == "degradation" for e in events_)


# ----------------------------------------------------------------------------- tool path


async def test_tool_path_forces_generate_response(fake: AnthropicFake, stream: bool) -> None:
    fake.add(FakeReply(text="Ann's email is ann@example.org."), output_call())
    state = AgentState()
    agent = ReActAgent("a", model(fake, stream=stream))
    events_ = await events(agent, "Extract", Contact, state=state)
    assert events_[-1].output == Contact(**CONTACT)
    # C02: one output call with every item, never one per item
    assert fake.bodies[0]["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert fake.bodies[1]["tool_choice"] == {"type": "tool", "name": "generate_response",
                                             "disable_parallel_tool_use": True}
    assert fake.bodies[1]["messages"][-1] == {"role": "user", "content": [{  # never a prefill
        "type": "text",
        "text": "Now call the `generate_response` tool with your final answer."}]}
    assert [e.reason for e in events_ if isinstance(e, OutputRetry)] == ["forcing"]
    assert not any(b.type == "tool_use" for m in state.memory for b in m.content)


async def test_parallel_tool_calls_answered_in_one_user_turn(fake: AnthropicFake,
                                                             stream: bool) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}),
                                   FakeCall("lookup", {"query": "Bob"})]), output_call())
    agent = ReActAgent("a", model(fake, stream=stream), tools=[lookup])
    reply = await agent.call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT)
    calls = fake.bodies[1]["messages"][1]["content"]
    results = fake.bodies[1]["messages"][2]["content"]
    assert [b["type"] for b in calls] == ["tool_use", "tool_use"]
    assert [(r["type"], r["tool_use_id"]) for r in results] == [
        ("tool_result", calls[0]["id"]), ("tool_result", calls[1]["id"])]
    assert results[1]["content"] == "Bob: ann@example.org"


async def test_tool_input_given_whole_at_block_start_is_kept(fake: AnthropicFake) -> None:
    """C09/C10 kind: an Anthropic-compatible server that streams a tool_use with
    its whole ``input`` in ``content_block_start`` and no ``input_json_delta``;
    the arguments were read as ``{}`` (a business tool run without them)."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})],
                       extra={"input_in_start": True}),
             FakeReply(tool_calls=[FakeCall("generate_response", CONTACT)],
                       extra={"input_in_start": True}))
    agent = ReActAgent("a", model(fake, stream=True), tools=[lookup], options=STREAMED)
    reply = await agent.call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT)
    assert fake.transports == ["stream", "stream"]
    result = fake.bodies[1]["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == "Ann: ann@example.org"
    assert fake.bodies[1]["messages"][1]["content"][0]["input"] == {"query": "Ann"}


@pytest.mark.parametrize("given", [orjson.dumps(CONTACT).decode(),
                                   orjson.dumps(orjson.dumps(CONTACT).decode()).decode()])
async def test_tool_input_given_as_a_string_is_read(fake: AnthropicFake, given: str) -> None:
    """C10 kind on the Anthropic wire: ``tool_use.input`` as a JSON string
    (anthropics/anthropic-sdk-python#804) failed the reply as malformed."""
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", given)]))
    reply = await ReActAgent("a", model(fake)).call("Find Ann", Contact, strategy="tool")
    assert reply.output == Contact(**CONTACT) and len(fake.bodies) == 1


async def test_tool_input_that_is_no_json_is_sent_back_as_invalid(fake: AnthropicFake) -> None:
    """The API hands the model's raw text over as a string when it was not JSON:
    the model is told and retries; the history replays the failed call with an
    object ``input``, as the API requires. (Python triple quotes, the SDK
    report's case, are read as the literal they are.)"""
    raw = "Ann <ann@example.org>"
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", raw)]), output_call())
    agent = ReActAgent("a", model(fake, stream=False))
    events_ = await events(agent, "Find Ann", Contact, strategy="tool")
    assert events_[-1].output == Contact(**CONTACT)
    assert [e.reason for e in events_ if isinstance(e, OutputRetry)] == ["validation"]
    replayed = fake.bodies[1]["messages"][1]["content"][0]
    assert replayed["type"] == "tool_use" and isinstance(replayed["input"], dict)
    result = fake.bodies[1]["messages"][2]["content"][0]
    assert result["is_error"] and "JSON" in str(result["content"])


async def test_whitespace_only_text_is_never_sent_back(fake: AnthropicFake,
                                                       stream: bool) -> None:
    """Claude may write only "\n\n" before a tool call, and a tool may return a
    blank result; the API refuses whitespace-only text blocks ("messages: text
    content blocks must contain non-whitespace text"), which failed every
    later request of the conversation."""
    def blank(query: str) -> str:
        """Look up nothing."""
        return "  \n"

    fake.add(FakeReply(text="\n\n", tool_calls=[FakeCall("blank", {"query": "Ann"})]),
             output_call())
    agent = ReActAgent("a", model(fake, stream=stream), tools=[blank],
                       sys_prompt="Be brief.\n", options=STREAMED if stream else None)
    reply = await agent.call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT) and len(fake.bodies) == 2
    sent = fake.bodies[1]["messages"]
    assert sent[1]["content"] == [{"type": "tool_use", "id": sent[1]["content"][0]["id"],
                                   "name": "blank", "input": {"query": "Ann"}}]
    assert "content" not in sent[2]["content"][0]


@pytest.mark.parametrize("with_output", [False, True], ids=["text", "output"])
async def test_a_tool_history_goes_on_with_an_agent_without_tools(
        fake: AnthropicFake, stream: bool, with_output: bool) -> None:
    """A conversation in which tools ran, continued by an agent that offers
    none (a summarizer sharing the state): the API refuses tool blocks in a
    request without tools (anthropics/anthropic-sdk-python#494), so the
    history's tools are declared, with tool_choice none."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             FakeReply(text="Found her."))
    state = AgentState()
    await ReActAgent("a", model(fake, stream=stream), tools=[lookup]).call("Find Ann", state=state)
    fake.add(FakeReply(text=orjson.dumps(CONTACT).decode() if with_output else "Ann."))
    summarizer = ReActAgent("s", model(fake, stream=stream))
    reply = await summarizer.call("Summarize.", Contact if with_output else None, state=state,
                                  strategy="native" if with_output else None)
    assert (reply.output == Contact(**CONTACT)) if with_output else reply.text == "Ann."
    body = fake.bodies[2]
    assert [t["name"] for t in body["tools"]] == ["lookup"]
    assert body["tool_choice"] == {"type": "none"}


async def test_mid_conversation_system_message_becomes_user_reminder(fake: AnthropicFake) -> None:
    state = AgentState([Msg.user("earlier"), Msg.assistant("ok"),
                        Msg.system("Answer in French from now on.")])
    fake.add(FakeReply(text="Bonjour"))
    await ReActAgent("a", model(fake), sys_prompt="Be brief.").call("hello", state=state)
    messages = fake.bodies[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    texts = [b["text"] for b in messages[2]["content"]]
    assert texts == ["<system-reminder>Answer in French from now on.</system-reminder>", "hello"]
    assert fake.bodies[0]["system"][0]["text"] == "Be brief."


# ----------------------------------------------------------------------------- thinking


async def test_thinking_uses_reminder_never_forced_choice(fake: AnthropicFake) -> None:
    fake.add(FakeReply(thinking="The user wants a contact.", text="Ann, ann@example.org."),
             FakeReply(thinking="Call the tool now.", tool_calls=[
                 FakeCall("generate_response", CONTACT)]))
    agent = ReActAgent("a", model(fake, THINKING, thinking_budget=2048),
                       options=GenerateOptions(temperature=0.2))
    events_ = await events(agent, "Extract", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    for body in fake.bodies:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert (body.get("tool_choice") or {}).get("type") not in ("any", "tool")
        assert "temperature" not in body
    last_turn = fake.bodies[1]["messages"][-1]
    assert last_turn["role"] == "user"
    reminder = last_turn["content"][-1]
    assert "<system-reminder>" in reminder["text"] and "cache_control" not in reminder
    sent_back = fake.bodies[1]["messages"][1]["content"][0]
    assert sent_back == {"type": "thinking", "thinking": "The user wants a contact.",
                         "signature": signature_of("The user wants a contact.")}


async def test_thinking_blocks_round_trip_unchanged_in_tool_loop(fake: AnthropicFake,
                                                                  stream: bool) -> None:
    fake.add(FakeReply(thinking="Look Ann up first.", extra={"redacted": True},
                       tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             FakeReply(thinking="Now answer.", tool_calls=[FakeCall("generate_response", CONTACT)]))
    agent = ReActAgent("a", model(fake, THINKING, thinking_budget=1024, stream=stream,
                                  max_tokens=1024), tools=[lookup])
    reply = await agent.call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT)
    assert fake.bodies[0]["max_tokens"] > 1024  # budget must stay below max_tokens
    assistant = fake.bodies[1]["messages"][1]["content"]
    assert assistant[:2] == [
        {"type": "thinking", "thinking": "Look Ann up first.",
         "signature": signature_of("Look Ann up first.")},
        {"type": "redacted_thinking", "data": "EncryptedOpaqueData=="},
    ]
    assert assistant[2]["type"] == "tool_use"


async def test_c20_forced_choice_refused_while_thinking_degrades_once(fake: AnthropicFake) -> None:
    """C20: a profile that wrongly allows forcing while thinking: the vendor's
    400 steps the call down to the reminder, and the model remembers it."""
    wrong = model(fake, THINKING, thinking_budget=2048)
    wrong._profile = wrong.profile.with_(forced_tool_choice_with_thinking=True)
    fake.add(FakeReply(text="prose"), output_call())
    agent = ReActAgent("a", wrong)
    events_ = await events(agent, "Extract", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    one = {"disable_parallel_tool_use": True}
    assert fake.bodies[1]["tool_choice"] == {"type": "tool", "name": "generate_response", **one}
    assert fake.bodies[2]["tool_choice"] == {"type": "auto", **one}
    assert "<system-reminder>" in fake.bodies[2]["messages"][-1]["content"][-1]["text"]
    assert any(isinstance(e, OutputRetry) and e.reason == "degradation" for e in events_)
    fake.add(FakeReply(text="prose again"), output_call())
    assert (await agent.call("Again", Contact)).output == Contact(**CONTACT)
    assert all(b["tool_choice"] == {"type": "auto", **one} for b in fake.bodies[3:])


def test_map_error_table() -> None:
    def body(kind: str, message: str) -> bytes:
        import orjson
        return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})

    forced = map_error(400, {}, body("invalid_request_error", FORCED_WITH_THINKING))
    assert isinstance(forced, UnsupportedFeatureError) and forced.feature == "tool_choice"
    native = map_error(400, {}, body("invalid_request_error",
                                     "output_config.format: not supported for this model"))
    assert isinstance(native, UnsupportedFeatureError) and native.feature == "native_output"
    assert isinstance(map_error(529, {}, body("overloaded_error", "Overloaded")), OverloadedError)
    limited = map_error(429, {"retry-after": "7"}, body("rate_limit_error", "slow down"))
    assert isinstance(limited, RateLimitedError) and limited.retry_after == 7
    assert isinstance(map_error(401, {}, body("authentication_error", "bad")),
                      AuthenticationError)


# ----------------------------------------------------------------------------- caching


async def test_cache_breakpoints_skip_transient_messages(fake: AnthropicFake) -> None:
    fake.add(FakeReply(thinking="t", text="prose"), output_call())
    agent = ReActAgent("a", model(fake, THINKING, thinking_budget=2048), tools=[lookup],
                       sys_prompt="Be brief.")
    await agent.call("Extract", Contact)
    body = fake.bodies[1]
    marked = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) == 1 and marked[0]["type"] == "text" and marked[0]["text"] == "prose"
    assert "cache_control" in body["tools"][-1] and "cache_control" in body["system"][-1]


async def test_no_cache_breakpoints_when_disabled(fake: AnthropicFake) -> None:
    fake.add(FakeReply(text="hi"))
    await ReActAgent("a", model(fake, cache=False), sys_prompt="s").call("hi")
    assert "cache_control" not in str(fake.bodies[0])


# ----------------------------------------------------------------------------- errors


async def test_rate_limit_and_overload_are_retried(fake: AnthropicFake) -> None:
    fake.add(AnthropicFake.rate_limited(0),
             anthropic_error(529, "overloaded_error", "Overloaded"), FakeReply(text="ok"))
    assert (await ReActAgent("a", model(fake)).call("hi")).text == "ok"
    assert len(fake.requests) == 3


async def test_authentication_error_is_not_retried(fake: AnthropicFake) -> None:
    agent = ReActAgent("a", model(fake, api_key=""))
    with pytest.raises(AuthenticationError):
        await agent.call("hi")
    assert len(fake.requests) == 1


async def test_mid_stream_overloaded_error_keeps_state(fake: AnthropicFake) -> None:
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    fake.add(FakeReply(text="partial answer", chunk_size=3, extra={
        "error": {"type": "overloaded_error", "message": "Overloaded"}, "error_after": 4}))
    with pytest.raises(OverloadedError):
        await ReActAgent("a", model(fake), options=STREAMED).call("hi", Contact, state=state)
    assert state.to_json() == snapshot


async def test_stream_cut_leaves_state_unchanged(fake: AnthropicFake) -> None:
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", CONTACT)], chunk_size=4,
                       cut_after=5))
    with pytest.raises(ProviderConnectionError) as info:
        await ReActAgent("a", model(fake), options=STREAMED).call("hi", Contact, state=state)
    assert info.value.partial and state.to_json() == snapshot
    assert len(fake.requests) == 1  # a cut stream is never retried


@pytest.mark.parametrize(("max_tokens", "budget", "transport"), [
    (4096, None, "whole"), (21_333, None, "whole"), (21_334, None, "stream"),
    (1024, 21_000, "stream"),  # a budget above max_tokens is added to it
    (21_000, 2048, "whole"),
])
async def test_call_fetches_whole_replies_unless_the_reply_may_take_long(
        fake: AnthropicFake, max_tokens: int, budget: int | None, transport: str) -> None:
    """The official SDK refuses a non-streaming request expected over 10 minutes
    (max_tokens sent > 21,333): such a call keeps streaming."""
    fake.add(FakeReply(text="ok"))
    agent = ReActAgent("a", model(fake, THINKING if budget else PLAIN, thinking_budget=budget),
                       options=GenerateOptions(max_tokens=max_tokens))
    assert (await agent.call("hi")).text == "ok"
    assert fake.transports == [transport]


# ----------------------------------------------------------------------------- C08


async def test_c08_max_tokens_on_native_path_is_truncation(fake: AnthropicFake,
                                                          stream: bool) -> None:
    cut = '{"name": "Ann", "email": "ann@exa'
    fake.add(FakeReply(text=cut, extra={"stop_reason": "max_tokens"}))
    reply = await ReActAgent("a", model(fake, NATIVE, stream=stream)).call("Extract", Contact)
    with pytest.raises(OutputTruncatedError) as info:
        _ = reply.output
    assert info.value.raw_text == cut and len(fake.requests) == 1


async def test_c08_max_tokens_on_tool_path_is_truncation(fake: AnthropicFake) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", '{"name": "Ann", "em')],
                       extra={"stop_reason": "max_tokens"}))
    reply = await ReActAgent("a", model(fake), options=STREAMED).call("Extract", Contact)
    with pytest.raises(OutputTruncatedError):
        _ = reply.output
    assert len(fake.requests) == 1  # truncated arguments are never sent back for repair


# ----------------------------------------------------------------------------- malformed replies


class RawAnthropicFake(AnthropicFake):
    """Streams ``extra["frames"]`` and answers ``extra["json"]`` as they are."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return list(reply.extra["frames"])

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["json"]


async def raw_reply(stream: bool, **extra: Any) -> list[Any]:
    async with RawAnthropicFake() as server:
        server.add(FakeReply(extra=extra))
        return await collect(model(server, stream=stream).stream(
            [Msg.user("hi")], [], GenerateOptions()))


START = sse({"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
            "message_start")
STOP = sse({"type": "message_stop"}, "message_stop")
END_TURN = sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, "message_delta")


@pytest.mark.parametrize("frames", [
    [sse(b"not json", "message_start")], [START, sse([1, 2]), STOP],
    [START, sse({"type": "content_block_start", "content_block": {"type": "text"}}), STOP],
    [START, sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}),
     STOP],
    [START, sse({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": 5}}), STOP],
    [START, sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                 "usage": {"output_tokens": "many"}}), STOP],
    [START, sse({"type": "message_delta", "delta": "end_turn"}), STOP],
    [STOP], [START, STOP],
], ids=["non-json", "list", "no-index", "no-text", "text-int", "usage-str", "delta-str",
        "stop-only", "start-stop"])
async def test_malformed_or_empty_stream_is_a_partial_connection_error(
        frames: list[bytes]) -> None:
    with pytest.raises(ProviderConnectionError) as info:
        await raw_reply(True, frames=frames)
    assert info.value.partial and info.value.vendor == "anthropic"


@pytest.mark.parametrize("body", [[1], None, "hi", {}, {"content": "abc", "stop_reason": "x"},
                                  {"content": [{"type": "text", "text": 5}]}],
                         ids=["list", "null", "str", "empty", "content-str", "text-int"])
async def test_malformed_or_empty_whole_reply_is_a_server_error(body: Any) -> None:
    with pytest.raises(ServerError, match="reply from anthropic"):
        await raw_reply(False, json=body)


async def test_empty_text_with_a_stop_reason_is_an_answer() -> None:
    chunks = await raw_reply(True, frames=[START, END_TURN, STOP])
    assert chunks[-1] == FinishChunk("stop", "end_turn")
    chunks = await raw_reply(False, json={"content": [], "stop_reason": "end_turn"})
    assert chunks[-1] == FinishChunk("stop", "end_turn")


# ------------------------------------------------------------------------ maps in native output


class Labels(BaseModel):
    name: str
    labels: dict[str, str]


def test_closed_schema_keeps_the_string_formats_the_sdk_keeps() -> None:
    """Wire fact witnessed by the anthropic SDK (``transform_schema``): only its
    ``SupportedStringFormats`` stay ``format``; others (a SecretStr's
    ``password``, bytes' ``binary``, ``uuid1``, a number's format) are moved into
    the description instead of being sent as formats output_config refuses."""
    import uuid

    from anthropic.lib._parse._transform import transform_schema
    from pydantic import UUID1, AnyUrl, Field, SecretStr

    class Account(BaseModel):
        site: AnyUrl
        ref: uuid.UUID
        legacy: UUID1
        secret: SecretStr
        blob: bytes
        day: str = Field(json_schema_extra={"format": "date"})
        ratio: float = Field(json_schema_extra={"format": "double"})

    schema = Account.model_json_schema()
    ours, theirs = closed_schema(schema), transform_schema(schema)
    formats = {k: v.get("format") for k, v in ours["properties"].items()}
    assert formats == {k: v.get("format") for k, v in theirs["properties"].items()}
    assert formats == {"site": "uri", "ref": "uuid", "legacy": None, "secret": None,
                       "blob": None, "day": "date", "ratio": None}
    assert 'format: "password"' in ours["properties"]["secret"]["description"]


def test_closed_schema_refuses_a_map() -> None:
    schema = {"type": "object", "properties": {"labels": {
        "type": "object", "additionalProperties": {"type": "string"}}}}
    with pytest.raises(UnsupportedFeatureError) as info:
        closed_schema(schema)
    assert info.value.feature == "native_output"


def test_schema_refusal_of_output_config_is_unsupported_native_output() -> None:
    refused = anthropic_error(400, "invalid_request_error",
                              "output_config.format.schema: For 'object' type, "
                              "'additionalProperties' must be explicitly set to false")
    error = map_error(400, {}, orjson.dumps(refused.body))
    assert isinstance(error, UnsupportedFeatureError) and error.feature == "native_output"


async def test_map_field_steps_down_to_the_tool_path(fake: AnthropicFake, stream: bool) -> None:
    data = {"name": "Ann", "labels": {"team": "core"}}
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", data)]))
    agent = ReActAgent("a", model(fake, "claude-sonnet-4-6", stream=stream))
    reply = await agent.call("Extract Ann (team core)", Labels)
    assert reply.output == Labels(**data)
    assert len(fake.requests) == 1 and "output_config" not in fake.bodies[0]
    assert [t["name"] for t in fake.bodies[0]["tools"]] == ["generate_response"]
