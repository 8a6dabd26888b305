"""OllamaChatModel against the fake /api/chat: NDJSON framing, ``format``
output, emulated tool forcing, object arguments and synthesised ids (C10),
runtime degradation for models without tools, errors and stream cuts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.errors import (
    NotFoundError,
    OutputTruncatedError,
    OverloadedError,
    ProviderConnectionError,
    ServerError,
    UnsupportedFeatureError,
)
from agentflow.events import OutputRetry, ThinkingChunk
from agentflow.messages import Msg
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    TextDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.output.strategies import ToolStrategy
from agentflow.providers.ollama import DEFAULT_PROFILE, OllamaChatModel, map_error
from agentflow.reply import generate
from agentflow.state import AgentState
from tests.fakes.base import FakeCall, FakeReply, collect
from tests.fakes.ollama import OllamaFake, ollama_error
from tests.provider_scenarios import FAST, close_models, tracked

TOOLS_MODEL, NO_TOOLS_MODEL, THINKING = "llama3.1:8b", "mistral-lite", "qwen3:8b"


class Contact(BaseModel):
    name: str
    email: str


CONTACT = {"name": "Ann", "email": "ann@example.org"}
CONTACT_JSON = orjson.dumps(CONTACT).decode()

STREAMED = GenerateOptions(stream=True)
"""Options of an agent whose call() streams (stream faults need a stream;
call() asks for whole replies otherwise)."""


def lookup(query: str) -> str:
    """Look a person up."""
    return f"{query}: ann@example.org"


@pytest.fixture
async def fake() -> AsyncIterator[OllamaFake]:
    async with OllamaFake(no_tools=frozenset({NO_TOOLS_MODEL})) as server:
        yield server


@pytest.fixture(params=[True, False], ids=["stream", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    await close_models()


def model(fake: OllamaFake, name: str = TOOLS_MODEL, **kw: Any) -> OllamaChatModel:
    built: OllamaChatModel = tracked(OllamaChatModel(name, base_url=fake.url, settings=FAST, **kw))
    return built


async def events(agent: ReActAgent, *args: Any, **kw: Any) -> list[Any]:
    return [e async for e in agent.stream(*args, **kw)]


# ----------------------------------------------------------------------------- wire shape


async def test_text_reply_wire_shape(fake: OllamaFake, stream: bool) -> None:
    fake.add(FakeReply(text="Hello there.", usage=(26, 5)))
    agent = ReActAgent("o", model(fake, stream=stream), sys_prompt="Be brief.",
                       options=GenerateOptions(max_tokens=64, temperature=0))
    done = (await events(agent, "hi"))[-1]
    assert done.message.text == "Hello there."
    assert (done.usage.input_tokens, done.usage.output_tokens) == (26, 5)
    body = fake.bodies[0]
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "hi"}]
    assert body["stream"] is stream and body["options"] == {"num_predict": 64, "temperature": 0}


async def test_native_output_sends_format_schema(fake: OllamaFake, stream: bool) -> None:
    fake.add(FakeReply(text=CONTACT_JSON))
    reply = await ReActAgent("o", model(fake, stream=stream)).call("Extract", Contact)
    assert reply.output == Contact(**CONTACT)
    assert fake.bodies[0]["format"]["properties"]["email"] == {"type": "string"}


class Described(BaseModel):
    city: str = Field(description="the city, in English")


async def test_the_format_schema_is_in_the_prompt_too(fake: OllamaFake) -> None:
    """The grammar constrains sampling only: the model never sees the schema
    or its field descriptions (ollama/ollama#8162), so a system instruction
    holds it, after the caller's system prompt."""
    fake.add(FakeReply(text='{"city": "Paris"}'))
    agent = ReActAgent("o", model(fake), sys_prompt="Be brief.")
    assert (await agent.call("Where?", Described)).output == Described(city="Paris")
    messages = fake.bodies[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "system", "user"]
    assert messages[0]["content"] == "Be brief."
    assert "the city, in English" in messages[1]["content"] and "JSON" in messages[1]["content"]


async def test_with_tools_the_output_takes_the_tool_path(fake: OllamaFake, stream: bool) -> None:
    """A ``format`` schema leaves the model no way to call a tool (the server's
    grammar: ollama/ollama#8095, an empty tool_calls; the fake does the same),
    so with tools offered the output is the generate_response tool, never
    ``format``: the business tool runs."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             FakeReply(tool_calls=[FakeCall("generate_response", CONTACT)]))
    agent = ReActAgent("o", model(fake, stream=stream), tools=[lookup])
    reply = await agent.call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT)
    assert all("format" not in b for b in fake.bodies)
    assert OllamaFake.tool_names(fake.bodies[0]) == ["lookup", "generate_response"]
    assert fake.bodies[1]["messages"][-1]["role"] == "tool"  # lookup ran


# ----------------------------------------------------------------------------- tools


async def test_forcing_is_emulated_with_one_tool_and_a_reminder(fake: OllamaFake,
                                                                 stream: bool) -> None:
    fake.add(FakeReply(text="Ann is at ann@example.org"),
             FakeReply(tool_calls=[FakeCall("generate_response", CONTACT)]))
    agent = ReActAgent("o", model(fake, stream=stream), tools=[lookup])
    events_ = await events(agent, "Extract", Contact, strategy=ToolStrategy())
    assert events_[-1].output == Contact(**CONTACT)
    first, forced = fake.bodies
    assert OllamaFake.tool_names(first) == ["lookup", "generate_response"]
    assert OllamaFake.tool_names(forced) == ["generate_response"]
    assert "tool_choice" not in forced
    last = forced["messages"][-1]
    assert last["role"] == "system" and "`generate_response`" in last["content"]
    assert [e.reason for e in events_ if isinstance(e, OutputRetry)] == ["forcing"]


async def test_tool_choice_none_omits_tools(fake: OllamaFake) -> None:
    fake.add(FakeReply(text="no tools"))
    spec = ToolSpec("lookup", "Look up.", {"type": "object", "properties": {}})
    await generate(model(fake), [Msg.user("hi")], [spec], GenerateOptions(
        tool_choice=ToolChoice.NONE))
    assert "tools" not in fake.bodies[0]


async def test_c10_object_arguments_without_ids(fake: OllamaFake, stream: bool) -> None:
    """C10: arguments arrive as objects without ids; ids are synthesised and
    the history goes back with object arguments (a string is refused)."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}),
                                   FakeCall("lookup", {"query": "Bob"})]),
             FakeReply(text="done"))
    state = AgentState()
    agent = ReActAgent("o", model(fake, stream=stream), tools=[lookup])
    await agent.call("Find both", state=state)
    calls = state.memory[1].tool_uses
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)
    sent = fake.bodies[1]["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == {"query": "Ann"}
    assert [(m["role"], m["tool_name"], m["tool_call_id"]) for m in sent[2:4]] == [
        ("tool", "lookup", calls[0].id), ("tool", "lookup", calls[1].id)]


async def test_c10_string_and_double_encoded_arguments_are_normalised(fake: OllamaFake) -> None:
    double = orjson.dumps(orjson.dumps({"query": "Bob"}).decode()).decode()
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}),
                                   FakeCall("lookup", double)],
                       extra={"string_arguments": True, "with_ids": True}),
             FakeReply(text="done"))
    state = AgentState()
    await ReActAgent("o", model(fake), tools=[lookup]).call("Find", state=state)
    assert [dict(c.input) for c in state.memory[1].tool_uses] == [{"query": "Ann"},
                                                                  {"query": "Bob"}]
    assert [c.id for c in state.memory[1].tool_uses] == ["call_0", "call_1"]


async def test_model_without_tools_degrades_to_prompt(fake: OllamaFake) -> None:
    wrong = model(fake, NO_TOOLS_MODEL)
    wrong._profile = wrong.profile.with_(native_output=None)  # auto -> tool strategy
    fake.add(FakeReply(text=CONTACT_JSON), FakeReply(text=CONTACT_JSON))
    agent = ReActAgent("o", wrong)
    events_ = await events(agent, "Extract", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    assert "tools" in fake.bodies[0] and "tools" not in fake.bodies[1]
    assert "JSON Schema" in OllamaFake.request_text(fake.bodies[1])
    assert any(isinstance(e, OutputRetry) and e.reason == "degradation" for e in events_)
    assert (await agent.call("Again", Contact)).output == Contact(**CONTACT)
    assert "tools" not in fake.bodies[2]  # the refusal is remembered


# ----------------------------------------------------------------------------- thinking


async def test_thinking_streams_and_is_requested(fake: OllamaFake) -> None:
    fake.add(FakeReply(thinking="Greeting detected.", text="Hi"))
    agent = ReActAgent("o", model(fake, THINKING), options=GenerateOptions(thinking=True))
    events_ = await events(agent, "hi")
    assert "".join(e.text for e in events_ if isinstance(e, ThinkingChunk)) == (
        "Greeting detected.")
    assert fake.bodies[0]["think"] is True


async def test_think_on_a_model_that_cannot_is_unsupported(fake: OllamaFake) -> None:
    agent = ReActAgent("o", model(fake), options=GenerateOptions(thinking=True))
    with pytest.raises(UnsupportedFeatureError) as info:
        await agent.call("hi")
    assert info.value.feature == "thinking"


# ----------------------------------------------------------------------------- errors


async def test_busy_and_rate_limited_are_retried(fake: OllamaFake) -> None:
    fake.add(OllamaFake.rate_limited(0),
             ollama_error(503, "server busy, please try again.  maximum pending requests "
                               "exceeded"), FakeReply(text="ok"))
    assert (await ReActAgent("o", model(fake)).call("hi")).text == "ok"
    assert len(fake.requests) == 3


async def test_unknown_model_is_not_found() -> None:
    async with OllamaFake(known=frozenset({"qwen3:8b"})) as fake:
        with pytest.raises(NotFoundError):
            await ReActAgent("o", model(fake, "nope")).call("hi")
        assert len(fake.requests) == 1


def test_map_error_table() -> None:
    tools = map_error(400, {}, b'{"error":"registry.ollama.ai/library/x does not support tools"}')
    assert isinstance(tools, UnsupportedFeatureError) and tools.feature == "tools"
    assert isinstance(map_error(503, {}, b'{"error":"server busy"}'), OverloadedError)


async def test_mid_stream_error_line_is_typed(fake: OllamaFake) -> None:
    fake.add(FakeReply(text="partial", chunk_size=2, extra={"error": "llama runner crashed",
                                                           "error_after": 2}))
    with pytest.raises(ServerError, match="runner crashed"):
        await ReActAgent("o", model(fake), options=STREAMED).call("hi")


async def test_stream_cut_leaves_state_unchanged(fake: OllamaFake) -> None:
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    fake.add(FakeReply(text=CONTACT_JSON, chunk_size=5, cut_after=3))
    with pytest.raises(ProviderConnectionError) as info:
        await ReActAgent("o", model(fake), options=STREAMED).call("Extract", Contact, state=state)
    assert info.value.partial and state.to_json() == snapshot


async def test_c08_length_is_truncation(fake: OllamaFake, stream: bool) -> None:
    cut = '{"name": "Ann", "email": "a'
    fake.add(FakeReply(text=cut, extra={"done_reason": "length"}))
    reply = await ReActAgent("o", model(fake, stream=stream)).call("Extract", Contact)
    with pytest.raises(OutputTruncatedError):
        _ = reply.output
    assert len(fake.requests) == 1


# ----------------------------------------------------------------------------- malformed replies


class RawOllamaFake(OllamaFake):
    """Streams ``extra["lines"]`` (JSON-encoded unless bytes) and answers
    ``extra["json"]`` as they are."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [line if isinstance(line, bytes) else orjson.dumps(line) + b"\n"
                for line in reply.extra["lines"]]

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["json"]


async def raw_reply(stream: bool, **extra: Any) -> list[Any]:
    async with RawOllamaFake() as server:
        server.add(FakeReply(extra=extra))
        return await collect(model(server, stream=stream).stream(
            [Msg.user("hi")], [], GenerateOptions()))


DONE = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}


@pytest.mark.parametrize("lines", [
    [[1], DONE], ["text", DONE], [{"message": "hi", "done": False}, DONE],
    [{"message": {"content": 5}, "done": False}, DONE],
    [{"message": {"tool_calls": {"function": {}}}, "done": False}, DONE],
    [{**DONE, "eval_count": "many"}], [{**DONE, "done_reason": 5}],
    [{"done": True}], [{"message": {"role": "assistant", "content": ""}, "done": True}],
], ids=["list", "string", "message-str", "content-int", "tool-calls-dict", "count-str",
        "reason-int", "done-only", "done-without-reason-or-content"])
async def test_malformed_or_empty_stream_is_a_partial_connection_error(lines: list[Any]) -> None:
    with pytest.raises(ProviderConnectionError) as info:
        await raw_reply(True, lines=lines)
    assert info.value.partial and info.value.vendor == "ollama"


@pytest.mark.parametrize("body", [{}, {"done": True}, [1], None, {**DONE, "message": "hi"}],
                         ids=["empty", "done-only", "list", "null", "message-str"])
async def test_malformed_or_empty_whole_reply_is_a_server_error(body: Any) -> None:
    with pytest.raises(ServerError, match="reply from ollama"):
        await raw_reply(False, json=body)


async def test_empty_content_with_done_reason_and_old_servers_answer() -> None:
    assert (await raw_reply(True, lines=[DONE]))[-1] == FinishChunk("stop", "stop")
    old = [{"message": {"content": "hi"}, "done": False}, {"done": True, "eval_count": 1}]
    assert await raw_reply(True, lines=old) == [
        TextDelta("hi"), UsageChunk(Usage(0, 1)), FinishChunk("stop", "")]


@pytest.mark.parametrize("how", ["num_ctx", "profile"])
async def test_a_larger_window_is_asked_of_the_server(how: str) -> None:
    """Ollama cuts a prompt longer than its ``num_ctx`` silently (keeping its
    end): a window given to the model is sent, so a document chunked for it
    reaches the model whole."""
    document = "word " * 8000  # ~10,000 tokens: over the server's 4096
    async with OllamaFake(num_ctx=4096) as fake:
        fake.add(FakeReply(text="ok"))
        kw: dict[str, Any] = ({"num_ctx": 32768} if how == "num_ctx"
                              else {"profile": DEFAULT_PROFILE.with_(context_window=32768)})
        built = model(fake, **kw)
        assert built.profile.context_window == 32768
        await generate(built, [Msg.user(document)])
    assert fake.requests[0].body["options"]["num_ctx"] == 32768 and fake.cut_prompts == 0


async def test_no_window_is_sent_unless_given(fake: OllamaFake) -> None:
    """The server's own window (``OLLAMA_CONTEXT_LENGTH``) is left alone."""
    fake.add(FakeReply(text="ok"))
    await generate(model(fake), [Msg.user("hi")])
    assert "num_ctx" not in (fake.requests[0].body.get("options") or {})
