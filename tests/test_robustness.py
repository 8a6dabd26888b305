"""Robustness tests: bad inputs to the public API, the CLI and the provider
adapters, and variants of the failure kinds in /work/shared/cases/cases.json.

Each test pins behaviour that is right; many began as a reproduction of a
bug found by attacking the framework, and stay as its regression test.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import io
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import anyio
import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentflow import (
    AgentflowError,
    AgentState,
    Complete,
    InvalidInputError,
    ModelProfile,
    Msg,
    OutputRetry,
    OutputTruncatedError,
    ProviderConnectionError,
    ProviderError,
    ReActAgent,
    SchemaError,
    ServerError,
    StructuredOutputError,
    StructuredOutputValidationError,
    Tool,
    ToolDefinitionError,
    ToolNameError,
    ToolResultBlock,
    ToolUseBlock,
    UnexpectedReplyError,
)
from agentflow import cli as af_cli
from agentflow.model import GenerateOptions
from agentflow.output.parsing import parse_output
from agentflow.output.schema import OutputSpec
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from agentflow.testing import Call, Reply, ScriptedModel

from .fakes.anthropic import AnthropicFake
from .fakes.base import FakeCall, FakeReply
from .fakes.gemini import GeminiFake
from .fakes.openai import OpenAIFake, openai_error

GR = "generate_response"
FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, max_retries=1, read_timeout=30)
NATIVE = ModelProfile(native_output="json_schema")
PROMPT_ONLY = ModelProfile(supports_tools=False)


def out(data: Any, **kw: Any) -> Reply:
    """A reply calling the output tool with ``data``."""
    return Reply(tool_calls=[Call(GR, data)], **kw)


class Contact(BaseModel):
    name: str
    email: str


class Label(BaseModel):
    label: str
    reason: str


class ImageRef(BaseModel):
    url: str
    source: str


class SearchResult(BaseModel):
    query: str
    results: list[ImageRef]


# A truncated reply that json_repair can close into a *valid* SearchResult.
TRUNCATED = ('{"query":"family photos","results":[{"url":"https://example.com/1.jpg",'
             '"source":"Stock"}')


def no_dangling_calls(memory: list[Msg]) -> bool:
    """Every tool call in ``memory`` has its result."""
    calls = {c.id for m in memory for c in m.tool_uses}
    results = {r.tool_use_id for m in memory for r in m.tool_results}
    return calls <= results


def has_output_tool(memory: list[Msg]) -> bool:
    return any(c.name == GR for m in memory for c in m.tool_uses)


# ============================================================================ call() inputs


@pytest.mark.parametrize("bad", [b"bytes", 5, {"a": 1}, [{"role": "user", "content": "x"}],
                                 [], [None], ["ok", 3]],
                         ids=["bytes", "int", "dict", "list-of-dicts", "empty-list", "[None]",
                              "mixed"])
async def test_call_rejects_bad_message_types_before_any_request(bad: Any) -> None:
    model = ScriptedModel(["never"])
    state = AgentState([Msg.user("earlier")])
    with pytest.raises(InvalidInputError):
        await ReActAgent("a", model).call(bad, state=state)
    assert model.requests == []
    assert [m.text for m in state.memory] == ["earlier"]


async def test_huge_input_string_round_trips() -> None:
    text = "é😀" * 1_000_000
    model = ScriptedModel(["ok"])
    state = AgentState()
    await ReActAgent("a", model).call(text, state=state)
    assert model.requests[0].messages[-1].text == text
    assert AgentState.from_json(state.to_json()) == state


async def test_call_none_on_empty_state_is_an_input_error() -> None:
    model = ScriptedModel(["hi"])
    with pytest.raises(InvalidInputError):
        await ReActAgent("a", model).call(None)
    assert model.requests == []


@pytest.mark.parametrize("make", [
    lambda: Msg("User", "what is 2+2?"),  # type: ignore[arg-type]
    lambda: Msg("user", [{"type": "text", "text": "what is 2+2?"}]),  # type: ignore[list-item]
    lambda: Msg("user", ["what is 2+2?"]),  # type: ignore[list-item]
], ids=["role-typo", "dict-block", "str-block"])
async def test_weird_msg_is_rejected_or_sent_intact(make: Any) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="4"))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        try:
            try:
                msg = make()
                await ReActAgent("a", model).call(msg)
            except (InvalidInputError, TypeError, ValueError):
                return  # a clear refusal is fine
            sent = fake.bodies[0]["messages"]
            assert any("2+2" in str(m.get("content")) for m in sent), sent
        finally:
            await model.aclose()


# ============================================================================ output types


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: int
    label: str


class Node(BaseModel):
    name: str
    children: list[Node] = []


class KindA(BaseModel):
    kind: Literal["a"]
    x: int


class KindB(BaseModel):
    kind: Literal["b"]
    y: str


class Bounded(BaseModel):
    n: int = Field(ge=0, le=10)
    s: str = Field(min_length=2, pattern=r"^[a-z]+$")


@pytest.mark.parametrize(("tp", "data", "expected"), [
    (KindA | KindB, {"result": {"kind": "b", "y": "hi"}}, KindB(kind="b", y="hi")),
    (KindA | None, {"result": None}, None),
    (Node, {"name": "r", "children": [{"name": "c"}]},
     Node(name="r", children=[Node(name="c")])),
    (Color, {"result": "blue"}, Color.BLUE),
    (Level, {"result": "2"}, Level.HIGH),
    (Point, {"x": "3", "label": "p"}, Point(3, "p")),
    (dict[str, int], {"result": {"a": "1"}}, {"a": 1}),
    (list[KindA], {"result": [{"kind": "a", "x": 1}]}, [KindA(kind="a", x=1)]),
    (Literal["x", "y"], {"result": "y"}, "y"),
    (int, {"result": "42"}, 42),
    (bool, {"result": True}, True),
], ids=["union-root", "optional-root-none", "recursive", "enum", "int-enum-from-str",
        "dataclass", "dict-str-int", "list-model", "literal", "int", "bool"])
async def test_output_types_on_the_tool_path(tp: Any, data: Any, expected: Any) -> None:
    model = ScriptedModel([out(data)])
    state = AgentState()
    reply = await ReActAgent("a", model).call("x", tp, state=state)
    assert reply.output == expected
    assert not has_output_tool(state.memory) and no_dangling_calls(state.memory)
    assert AgentState.from_json(state.to_json()) == state


async def test_constrained_fields_are_retried_with_every_failing_field() -> None:
    model = ScriptedModel([out({"n": 99, "s": "A"}), out({"n": 1, "s": "ab"})])
    reply = await ReActAgent("a", model).call("x", Bounded)
    assert reply.output == Bounded(n=1, s="ab")
    feedback = model.requests[1].messages[-1].tool_results[0]
    assert feedback.is_error and "- n:" in feedback.output and "- s:" in feedback.output


def test_typing_typeddict_on_311_is_a_schema_error_before_any_request() -> None:
    class TD(TypedDict):  # typing.TypedDict on purpose
        a: int

    model = ScriptedModel([out({"a": 1})])

    async def go() -> None:
        await ReActAgent("a", model).call("x", TD)

    if sys.version_info < (3, 12):
        with pytest.raises(SchemaError):
            anyio.run(go)
        assert model.requests == []


async def test_validator_value_error_exhausts_retries_into_a_typed_error() -> None:
    class Positive(BaseModel):
        x: int

        @field_validator("x")
        @classmethod
        def positive(cls, v: int) -> int:
            if v < 0:
                raise ValueError("x must be >= 0")
            return v

    model = ScriptedModel([out({"x": -1})] * 6)
    state = AgentState()
    reply = await ReActAgent("a", model).call("x", Positive, state=state)
    with pytest.raises(StructuredOutputValidationError) as info:
        _ = reply.output
    assert "x must be >= 0" in str(info.value)
    assert not has_output_tool(state.memory) and no_dangling_calls(state.memory)


async def test_aliased_output_round_trips_through_structured_data() -> None:
    class Aliased(BaseModel):
        full_name: str = Field(alias="fullName")

    model = ScriptedModel([out({"fullName": "Ada"})])
    state = AgentState()
    reply = await ReActAgent("a", model).call("x", Aliased, state=state)
    assert reply.output.full_name == "Ada"
    assert reply.structured_data(Aliased).full_name == "Ada"
    restored = AgentState.from_json(state.to_json())
    assert restored.memory[-1].structured_data(Aliased).full_name == "Ada"


async def test_aliased_output_with_populate_by_name_round_trips() -> None:
    class Aliased(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        full_name: str = Field(alias="fullName")

    reply = await ReActAgent("a", ScriptedModel([out({"fullName": "Ada"})])).call("x", Aliased)
    assert reply.structured_data(Aliased).full_name == "Ada"


async def test_lone_surrogate_in_output_arguments_is_not_a_raw_crash() -> None:
    model = ScriptedModel([out('{"label":"\\ud83d","reason":"b"}'),
                           out({"label": "ok", "reason": "b"})])
    state = AgentState()
    try:
        reply = await ReActAgent("a", model).call("x", Label, state=state)
    except AgentflowError:
        return
    assert isinstance(reply.output, Label)
    state.to_json()


# ============================================================================ C01/C02 variants


async def test_c01_prose_forever_with_business_tools_gives_up_typed_and_clean() -> None:
    def lookup(q: str) -> str:
        return "r"

    prose = "Top movies: 1. Movie A  2. Movie B"
    model = ScriptedModel([prose] * 10)
    state = AgentState()
    reply = await ReActAgent("a", model, tools=[lookup]).call("x", SearchResult, state=state)
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert info.value.raw_text == prose
    assert len(model.requests) == 4  # 1 + max_forcing
    assert not any("<system-reminder>" in m.text for m in state.memory if m.role == "system"
                   and m.metadata.get("structured_output_reminder_type") == "prompt")
    assert no_dangling_calls(state.memory)


async def test_c02_three_output_calls_in_one_reply_cost_one_retry() -> None:
    class Score(BaseModel):
        name: str
        score: int

    class Scores(BaseModel):
        scores: list[Score]

    model = ScriptedModel([
        Reply(tool_calls=[Call(GR, {"scores": [{"name": "A", "score": 1}]}, id="same"),
                          Call(GR, {"scores": [{"name": "B", "score": "2"}]}, id="same"),
                          Call(GR, {})]),
        out({"scores": [{"name": "A", "score": 1}, {"name": "B", "score": 2}]}),
    ])
    events = [e async for e in ReActAgent("a", model).stream("x", Scores)]
    assert isinstance(events[-1], Complete)
    assert [s.name for s in events[-1].output.scores] == ["A", "B"]
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["multiple"]
    answered = model.requests[1].messages[-1].tool_results
    assert len(answered) == 3 and len({r.tool_use_id for r in answered}) == 3


@pytest.mark.parametrize("empty", [{}, "null", ""], ids=["{}", "null", "empty-string"])
async def test_c02_empty_output_object_is_retried_even_with_defaults(empty: Any) -> None:
    class Findings(BaseModel):
        items: list[str] = []
        note: str | None = None

    model = ScriptedModel([out(empty), out({"items": ["a"]})])
    reply = await ReActAgent("a", model).call("x", Findings)
    assert reply.output.items == ["a"]
    assert len(model.requests) == 2


# ============================================================================ C05 variants


@pytest.mark.parametrize("text", [
    '```json\n{"label":"a","reason":"b"}\n```',
    '```JSON\n{"label":"a","reason":"b"}\n```',
    '```\n{"label":"a","reason":"b"}\n```',
    '```json\r\n{"label":"a","reason":"b"}\r\n```',
    '~~~json\n{"label":"a","reason":"b"}\n~~~',
    'Here it is:\n```json\n{"label":"a","reason":"b",}\n```\nHope it helps.',
    "{'label': 'a', 'reason': 'b'}",
    '<think>{"label":"no"}</think>{"label":"a","reason":"b"}',
    '\ufeff{"label":"a","reason":"b"}',
], ids=["json", "JSON", "bare", "crlf", "tilde", "prose+trailing-comma", "single-quotes",
        "think", "bom"])
def test_c05_fence_and_repair_variants_parse(text: str) -> None:
    assert parse_output(text, OutputSpec.of(Label)) == Label(label="a", reason="b")


@pytest.mark.parametrize("profile", [NATIVE, PROMPT_ONLY], ids=["native", "prompt"])
async def test_c05_backticks_inside_a_fenced_string_value_are_kept(profile: ModelProfile) -> None:
    text = '```json\n{"label":"a","reason":"use ```code``` here"}\n```'
    reply = await ReActAgent("a", ScriptedModel([text], profile=profile)).call("x", Label)
    assert reply.output.reason == "use ```code``` here"


# ============================================================================ C08 variants


@pytest.mark.parametrize(("profile", "reply"), [
    (NATIVE, Reply(text=TRUNCATED, finish_reason="length", chunk_size=9)),
    (PROMPT_ONLY, Reply(text=TRUNCATED, finish_reason="length")),
    (None, out(TRUNCATED, finish_reason="length", chunk_size=5)),
], ids=["native-text", "prompt-text", "tool-arguments"])
async def test_c08_truncation_is_reported_without_a_repair_retry(
        profile: ModelProfile | None, reply: Reply) -> None:
    model = ScriptedModel([reply] * 3, profile=profile)
    state = AgentState()
    events = []
    with pytest.raises(OutputTruncatedError):  # raised by the stream, never a silent end
        async for event in ReActAgent("a", model).stream("q", SearchResult, state=state):
            events.append(event)
    assert events and not any(isinstance(e, Complete) for e in events)
    assert len(model.requests) == 1
    assert no_dangling_calls(state.memory)


async def test_c08_truncated_text_on_the_tool_path_is_not_accepted() -> None:
    def lookup(q: str) -> str:
        return "r"

    model = ScriptedModel([Reply(text=TRUNCATED, finish_reason="length")] * 3)
    reply = await ReActAgent("a", model, tools=[lookup]).call("q", SearchResult)
    with pytest.raises(OutputTruncatedError):
        _ = reply.output


# ============================================================================ C09 / tools


async def test_c09_whitespace_arguments_run_a_no_arg_tool_and_replay_as_object() -> None:
    def now() -> str:
        return "12:00"

    model = ScriptedModel([Reply(tool_calls=[Call("now", "  \n\t")]), out({"summary": "noon"})])

    class Report(BaseModel):
        summary: str

    state = AgentState()
    reply = await ReActAgent("a", model, tools=[now]).call("time?", Report, state=state)
    assert reply.output.summary == "noon"
    assert model.requests[1].messages[-1].tool_results[0].output == "12:00"
    assert [dict(c.input) for m in state.memory for c in m.tool_uses] == [{}]


class _Halt(BaseException):
    """A BaseException that is not an Exception."""


def _raise_halt() -> str:
    raise _Halt("stop")


def _raise_kbd() -> str:
    raise KeyboardInterrupt


@pytest.mark.parametrize(("fn", "exc"), [(_raise_halt, _Halt), (_raise_kbd, KeyboardInterrupt)])
async def test_tool_raising_base_exception_propagates_and_leaves_state(fn: Any,
                                                                       exc: type) -> None:
    model = ScriptedModel([Reply(tool_calls=[Call(fn.__name__, {})]), "done"])
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    with pytest.raises(exc):
        await ReActAgent("a", model, tools=[fn]).call("go", state=state)
    assert state.to_json() == before


@pytest.mark.parametrize(("value", "fragment"), [
    ({1, 2}, "{1, 2}"), (b"\xff\x00", "xff"), (float("nan"), "null"),
    ({"self": "ref"}, '"self"'), (None, "null"),
])
async def test_tool_returning_non_json_values_becomes_text(value: Any, fragment: str) -> None:
    def weird() -> Any:
        return value

    model = ScriptedModel([Reply(tool_calls=[Call("weird", {})]), "done"])
    state = AgentState()
    await ReActAgent("a", model, tools=[weird]).call("go", state=state)
    result = model.requests[1].messages[-1].tool_results[0]
    assert not result.is_error and fragment in result.output
    assert AgentState.from_json(state.to_json()) == state


def _gen_tool() -> Iterator[int]:
    yield 1
    yield 2


async def _agen_tool() -> AsyncIterator[int]:
    yield 1


@pytest.mark.parametrize("fn", [_gen_tool, _agen_tool], ids=["generator", "async-generator"])
async def test_generator_tools_are_rejected_or_consumed(fn: Any) -> None:
    try:
        tool = Tool.from_function(fn)
    except ToolDefinitionError:
        return
    model = ScriptedModel([Reply(tool_calls=[Call(tool.name, {})]), "done"])
    await ReActAgent("a", model, tools=[tool]).call("go")
    assert "generator object" not in model.requests[1].messages[-1].tool_results[0].output


async def test_tool_result_with_lone_surrogate_does_not_crash_the_request() -> None:
    def filename() -> str:
        return "caf\udce9.txt"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("filename", {})]), FakeReply(text="done"))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        state = AgentState()
        try:
            reply = await ReActAgent("a", model, tools=[filename]).call("go", state=state)
        finally:
            await model.aclose()
    assert reply.text == "done"
    state.to_json()


@pytest.mark.parametrize(("make", "exc"), [
    (lambda: Tool.from_function(len), ToolDefinitionError),
    (lambda: Tool.from_function(print), ToolDefinitionError),
    (lambda: Tool.from_function(5), ToolDefinitionError),
    (lambda: Tool.from_function(_raise_kbd, name="my tool!"), ToolNameError),
    (lambda: Tool.from_function(_raise_kbd, name="订单"), ToolNameError),
    (lambda: Tool.from_function(_raise_kbd, name="a" * 65), ToolNameError),
    (lambda: ReActAgent("a", ScriptedModel([]), tools=_raise_kbd), ToolDefinitionError),
    (lambda: ReActAgent("a", ScriptedModel([]),
                        tools=[Tool.from_function(_raise_kbd, name=GR)]), ToolNameError),
], ids=["builtin-positional", "varargs", "not-callable", "space-name", "unicode-name",
        "65-chars", "bare-function", "reserved-name"])
def test_tool_definition_errors_are_typed(make: Any, exc: type) -> None:
    with pytest.raises(exc):
        make()


def test_derived_unicode_tool_name_is_sanitized() -> None:
    def 订单(a: int) -> int:
        return a

    name = Tool.from_function(订单).name
    assert name.startswith("tool_") and len(name) <= 64 and name.isascii()


# ============================================================================ concurrency


_BLOCK_STARTED = threading.Event()
_BLOCK_RELEASE = threading.Event()
_BLOCK_DONE = threading.Event()


def _block() -> str:
    _BLOCK_STARTED.set()
    _BLOCK_RELEASE.wait(60)  # released by the test once the call is cancelled
    _BLOCK_DONE.set()
    return "late"


async def test_cancel_mid_blocking_sync_tool_returns_promptly_and_keeps_state() -> None:
    """The cancel ends the call while the tool's thread is still blocked: the
    call does not wait for the thread (it is released only afterwards)."""
    model = ScriptedModel([Reply(tool_calls=[Call("_block", {})]), "done"])
    state = AgentState([Msg.user("old")])
    before = state.to_json()
    _BLOCK_STARTED.clear()
    _BLOCK_RELEASE.clear()
    _BLOCK_DONE.clear()
    task = asyncio.create_task(ReActAgent("a", model, tools=[_block]).call("go", state=state))
    try:
        assert await asyncio.to_thread(_BLOCK_STARTED.wait, 60)  # the tool is running
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _BLOCK_DONE.is_set()  # ended while the tool still blocks
        assert state.to_json() == before
    finally:
        _BLOCK_RELEASE.set()


async def test_c30_many_concurrent_calls_on_one_agent_do_not_mix() -> None:
    class Finding(BaseModel):
        topic: str
        summary: str

    class Count(BaseModel):
        n: int

    async def answer(request: Any) -> Reply:
        await asyncio.sleep(0.005)
        user = [m.text for m in request.messages if m.role == "user"][-1]
        spec = next(t for t in request.tools if t.name == GR).parameters
        if "n" in spec.get("properties", {}):
            return out({"n": len(user)}, chunk_size=2)
        return out({"topic": user, "summary": "s"}, chunk_size=2)

    from agentflow.testing import FunctionModel

    model = FunctionModel(answer)
    agent = ReActAgent("a", model)
    topics = [f"topic {i}" for i in range(40)]
    replies = await asyncio.gather(*[
        agent.call(t, Finding if i % 2 == 0 else Count, state=AgentState())
        for i, t in enumerate(topics)])
    for i, (reply, topic) in enumerate(zip(replies, topics, strict=True)):
        assert reply.output == (Finding(topic=topic, summary="s") if i % 2 == 0
                                else Count(n=len(topic)))
    assert all(len([m for m in r.messages if m.role == "user"]) == 1 for r in model.requests)

    shared = AgentState()
    await asyncio.gather(*[agent.call(t, Finding, state=shared) for t in topics[:6]])
    users = [m.text for m in shared.memory if m.role == "user"]
    assert sorted(users) == sorted(topics[:6]) and no_dangling_calls(shared.memory)


async def test_break_out_of_stream_then_reuse_state() -> None:
    model = ScriptedModel([Reply(text="abcdef", chunk_size=1), "second"])
    state = AgentState()
    agent = ReActAgent("a", model)
    async with contextlib.aclosing(agent.stream("hi", state=state)) as events:
        async for event in events:
            if event.type == "reasoning_chunk":
                break
    assert state.memory == []
    with anyio.fail_after(60):
        reply = await agent.call("again", state=state)
    assert reply.text == "second"
    assert [m.text for m in state.memory] == ["again", "second"]


# ============================================================================ AgentState JSON


def test_state_round_trip_with_unicode_and_big_memory() -> None:
    memory = [Msg.user("héllo 👩‍👩‍👧 \u0000 \u2028 中文"), Msg.assistant("x" * 1000),
              Msg("assistant", [ToolUseBlock("c1", "f", {"k": ["ü", None, 1.5]})]),
              Msg("tool", [ToolResultBlock("c1", "ok 😀", name="f")])]
    state = AgentState(memory * 2000, so_tool_active=True)
    assert AgentState.from_json(state.to_json()) == state
    assert AgentState.from_json(state.to_json().decode()) == state


@pytest.mark.parametrize("blob", [
    b"[]", b"null", b'"x"', b'{"memory": null}', b'{"memory": {"a": 1}}', b'{"memory": [1]}',
    b'{"memory": [{"content": []}]}', b'{"memory": [{"role": "user"}]}',
    b'{"memory": [{"role": "hacker", "content": []}]}',
    b'{"memory": [{"role": "user", "content": [], "metadata": [1, 2]}]}',
    b'{"memory": [], "so_tool_active": "false"}',
], ids=["list", "null", "str", "memory-null", "memory-dict", "msg-int", "no-role", "no-content",
        "bad-role", "metadata-list", "flag-str"])
def test_tampered_state_json_raises_a_value_error(blob: bytes) -> None:
    with pytest.raises(ValueError):
        AgentState.from_json(blob)


async def test_restored_state_with_dangling_tool_call_is_refused_or_repaired() -> None:
    blob = orjson.dumps({"memory": [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f",
                                           "input": {}}]}]})
    try:
        state = AgentState.from_json(blob)
    except ValueError:
        return
    model = ScriptedModel(["ok"])
    await ReActAgent("a", model).call("next", state=state)
    assert no_dangling_calls(list(model.requests[0].messages))


# ============================================================================ provider fakes


class RawOpenAIFake(OpenAIFake):
    """OpenAI fake that can send raw frames (``extra['frames']``) or a raw JSON body
    (``extra['json']``)."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if "frames" in reply.extra:
            return list(reply.extra["frames"])
        return super().render_events(reply, body)

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        if "json" in reply.extra:
            return reply.extra["json"]
        return super().render_json(reply, body)


class RawAnthropicFake(AnthropicFake):
    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return list(reply.extra["frames"])


class RawGeminiFake(GeminiFake):
    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return list(reply.extra["frames"])


def data(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + (obj if isinstance(obj, bytes) else orjson.dumps(obj)) + b"\n\n"


def chunk(delta: Any = None, finish: Any = None) -> bytes:
    return data({"id": "x", "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]})


DONE = b"data: [DONE]\n\n"


@pytest.fixture
async def openai_raw() -> AsyncIterator[RawOpenAIFake]:
    async with RawOpenAIFake() as fake:
        yield fake


async def _generate(fake: Any, frames: list[bytes] | None = None, json: Any = None,
                    stream: bool = True) -> Any:
    extra = {"frames": frames} if frames is not None else {"json": json}
    fake.add(FakeReply(extra=extra))
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST,
                            stream=stream)
    try:
        with anyio.fail_after(60):
            return await generate(model, [Msg.user("hi")])
    finally:
        await model.aclose()


@pytest.mark.parametrize(("frames", "exc"), [
    ([data(b"not json"), DONE], ProviderConnectionError),
    ([chunk({"content": "a"}), data(b"{broken"), DONE], ProviderConnectionError),
    ([data({"error": "boom"})], ServerError),
    ([b"event: error\ndata: overloaded\n\n"], ServerError),
], ids=["non-json-line", "broken-json-mid-stream", "error-string", "error-event"])
async def test_openai_broken_streams_raise_typed_errors(openai_raw: RawOpenAIFake,
                                                        frames: list[bytes], exc: type) -> None:
    with pytest.raises(exc):
        await _generate(openai_raw, frames)


async def test_an_openai_stream_with_no_event_is_retried_then_raised(
        openai_raw: RawOpenAIFake) -> None:
    openai_raw.default = FakeReply(extra={"frames": []})
    with pytest.raises(UnexpectedReplyError, match="ended with no event"):
        await _generate(openai_raw, [])
    assert len(openai_raw.requests) == FAST.max_retries + 1


async def test_openai_odd_but_valid_streams(openai_raw: RawOpenAIFake) -> None:
    split_escape = [
        chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                               "function": {"name": "f", "arguments": '{"a":"\\'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'u00e9 😀"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
        chunk({}, "tool_calls"), DONE]
    reply = await _generate(openai_raw, split_escape)
    assert [(c.name, dict(c.input)) for c in reply.message.tool_uses] == [("f", {"a": "é 😀"})]
    reply = await _generate(openai_raw, [chunk({"content": "hi"}), chunk({}, "weird"), DONE])
    assert reply.message.text == "hi" and reply.finish_reason == "other"
    crlf = [f.replace(b"\n", b"\r\n") for f in [chunk({"content": "x"}), chunk({}, "stop"), DONE]]
    reply = await _generate(openai_raw, crlf)
    assert reply.message.text == "x" and reply.finish_reason == "stop"


@pytest.mark.parametrize("frames", [
    [data({"choices": {"a": 1}}), DONE],
    [data({"choices": ["x"]}), DONE],
    [data({"choices": [{"delta": "hello"}]}), DONE],
    [chunk({"content": 5}), chunk({}, "stop"), DONE],
    [chunk({"tool_calls": {"index": 0}}), DONE],
    [chunk({"tool_calls": [{"index": 0, "id": "a", "function": "f"}]}), DONE],
    [chunk({"content": "x"}), data({"choices": [], "usage": {"prompt_tokens": "abc"}}), DONE],
    [chunk({"content": "x"}),
     data({"choices": [], "usage": {"prompt_tokens": 1, "prompt_tokens_details": "x"}}), DONE],
], ids=["choices-dict", "choices-str", "delta-str", "content-int", "tool-calls-dict",
        "function-str", "usage-str", "usage-details-str"])
async def test_openai_malformed_chunks_raise_provider_errors(openai_raw: RawOpenAIFake,
                                                             frames: list[bytes]) -> None:
    with pytest.raises(ProviderError):
        await _generate(openai_raw, frames)


@pytest.mark.parametrize("body", [[1, 2], None, "hello",
                                  {"choices": [{"message": "hi", "finish_reason": "stop"}]}],
                         ids=["list", "null", "str", "message-str"])
async def test_openai_whole_reply_of_wrong_shape_is_a_provider_error(
        openai_raw: RawOpenAIFake, body: Any) -> None:
    with pytest.raises(ProviderError):
        await _generate(openai_raw, json=body, stream=False)


@pytest.mark.parametrize(("frames", "body"), [([DONE], None), ([b": ping\n\n", DONE], None),
                                              (None, {})], ids=["done-only", "ping-done",
                                                                "empty-object"])
async def test_openai_reply_without_any_choice_is_not_a_success(
        openai_raw: RawOpenAIFake, frames: list[bytes] | None, body: Any) -> None:
    with pytest.raises(ProviderError):
        await _generate(openai_raw, frames, json=body, stream=frames is not None)


@pytest.mark.parametrize(("vendor", "frames"), [
    ("anthropic", [data(b"not json", "message_start")]),
    ("anthropic", [data({"type": "content_block_start",
                         "content_block": {"type": "text", "text": "x"}})]),
    ("anthropic", [data({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "text_delta"}})]),
    ("gemini", [data(b"not json")]),
    ("gemini", [data({"candidates": [{"content": {"parts": "abc"}, "finishReason": "STOP"}]})]),
], ids=["anthropic-non-json", "anthropic-no-index", "anthropic-no-text", "gemini-non-json",
        "gemini-parts-str"])
async def test_other_vendors_malformed_streams_raise_provider_errors(
        vendor: str, frames: list[bytes]) -> None:
    fake_cls = RawAnthropicFake if vendor == "anthropic" else RawGeminiFake
    async with fake_cls() as fake:
        fake.add(FakeReply(extra={"frames": frames}))
        model: Any = (AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                         settings=FAST) if vendor == "anthropic" else
                      GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                      settings=FAST))
        try:
            with pytest.raises(ProviderError), anyio.fail_after(60):
                await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()


async def test_stream_cut_mid_tool_call_keeps_state(openai_raw: RawOpenAIFake) -> None:
    def lookup(q: str) -> str:
        return "r"

    openai_raw.add(FakeReply(tool_calls=[FakeCall("lookup", {"q": "x"})]),
                   FakeReply(tool_calls=[FakeCall(GR, {"name": "A", "email": "a@b"})],
                             chunk_size=3, cut_after=4))
    model = OpenAIChatModel("gpt-4o-mini", base_url=openai_raw.url, api_key="k", settings=FAST)
    state = AgentState([Msg.user("earlier"), Msg.assistant("noted")])
    before = state.to_json()
    try:
        with pytest.raises(ProviderConnectionError):
            await ReActAgent("a", model, tools=[lookup], options=GenerateOptions(stream=True)
                             ).call("q", Contact, state=state)  # whole replies otherwise
    finally:
        await model.aclose()
    assert state.to_json() == before


# ============================================================================ strict schemas


class Addr(BaseModel):
    city: str
    zip: str | None = None


class Fruit(BaseModel):
    action: Literal["buy_fruit"]
    color: str


class Food(BaseModel):
    action: Literal["buy_food"]
    price: int


class Actions(BaseModel):
    steps: list[Annotated[Fruit | Food, Field(discriminator="action")]]


class Axis(BaseModel):
    label: str


class Chart(BaseModel):
    x: Axis
    y: Axis


class User(BaseModel):
    name: str
    age: int
    is_admin: bool = False
    nickname: str | None = None
    tags: list[str] = Field(default_factory=list)
    score: int = Field(default=3, ge=0, examples=[1])


@pytest.mark.parametrize(("tp", "sent", "expected"), [
    (User, {"name": "Ann", "age": 27, "is_admin": None, "nickname": None, "tags": None,
            "score": None}, User(name="Ann", age=27)),
    (Actions, {"steps": [{"action": "buy_food", "price": 3}]},
     Actions(steps=[Food(action="buy_food", price=3)])),
    (Chart, {"x": {"label": "a"}, "y": {"label": "b"}},
     Chart(x=Axis(label="a"), y=Axis(label="b"))),
    (list[Addr], {"result": [{"city": "x", "zip": None}]}, [Addr(city="x")]),
    (Fruit | Food, {"result": {"action": "buy_fruit", "color": "red"}},
     Fruit(action="buy_fruit", color="red")),
], ids=["defaults-null", "discriminated-list", "same-def-twice", "list-root", "union-root"])
@pytest.mark.parametrize("vendor", ["openai", "gemini"])
async def test_c13_c16_schemas_accepted_by_strict_fakes(vendor: str, tp: Any, sent: Any,
                                                        expected: Any) -> None:
    fake_cls: Any = OpenAIFake if vendor == "openai" else GeminiFake
    async with fake_cls() as fake:
        fake.add(FakeReply(text=orjson.dumps(sent).decode()))
        model: Any = (OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                      settings=FAST) if vendor == "openai" else
                      GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                      settings=FAST))
        try:
            reply = await ReActAgent("a", model).call("x", tp)
        finally:
            await model.aclose()
    assert reply.output == expected


async def test_c16_true_recursion_goes_to_gemini_as_json_schema() -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text='{"name":"r","children":[{"name":"c","children":[]}]}'))
        model = GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("x", Node)
        finally:
            await model.aclose()
        assert reply.output.children[0].name == "c"
        config = fake.bodies[0]["generationConfig"]
        assert "$defs" in config["responseJsonSchema"] and "responseSchema" not in config


async def test_c13_recursive_root_model_is_not_sent_as_an_invalid_strict_schema() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text='{"name":"r","children":[]}'))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("x", Node)
        finally:
            await model.aclose()
    assert reply.output == Node(name="r")


@pytest.mark.parametrize(("status", "message"), [
    (400, "This response_format type is unavailable now"),
    (422, "Failed to deserialize the JSON body into the target type: response_format: "
          "response_format.type `json_schema` is unavailable now at line 1 column 1193"),
], ids=["400", "422"])
async def test_c24_json_schema_refusal_variants_degrade_to_the_tool_path(status: int,
                                                                        message: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(openai_error(status, message),
                 FakeReply(tool_calls=[FakeCall(GR, {"name": "A", "email": "a@b"})]))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("x", Contact)
        finally:
            await model.aclose()
        assert reply.output == Contact(name="A", email="a@b")
        assert "response_format" not in fake.bodies[1]


async def test_c22_native_plus_tools_conflict_keeps_the_tools() -> None:
    def lookup(q: str) -> str:
        return "r"

    conflict = openai_error(400, "Function calling with a response mime type: "
                                 "'application/json' is unsupported")

    def vendor(body: Any) -> Any:  # Gemini's OpenAI endpoint: tools + JSON mime type -> 400
        tools = [t["function"]["name"] for t in body.get("tools", [])]
        if tools and body.get("response_format"):
            return conflict
        if GR in tools:
            return FakeReply(tool_calls=[FakeCall(GR, {"name": "A", "email": "a@b"})])
        return FakeReply(text='{"name": "A", "email": "a@b"}')

    async with OpenAIFake() as fake:
        fake.default = vendor
        model = OpenAIChatModel("gemini-2.0-flash", base_url=fake.url, api_key="k",
                                settings=FAST)
        agent = ReActAgent("a", model, tools=[lookup])
        try:
            for _ in range(2):
                reply = await agent.call("x", Contact, state=AgentState())
                assert reply.output == Contact(name="A", email="a@b")
        finally:
            await model.aclose()
        refused = [b for b in fake.bodies if b.get("tools") and b.get("response_format")]
        assert len(refused) <= 1  # switch once, then remember
        after = fake.bodies[1]
        assert "lookup" in [t["function"]["name"] for t in after.get("tools", [])]


# ============================================================================ CLI


CONTACT_JSON = '{"name": "Ada Lovelace", "email": "ada@example.org"}'


@pytest.fixture
def cli_fake() -> Iterator[OpenAIFake]:
    """An OpenAI fake on its own loop in a thread (the CLI runs asyncio.run itself)."""
    loop = asyncio.new_event_loop()
    fake = OpenAIFake()
    fake.default = FakeReply(text=CONTACT_JSON)
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(fake.__aenter__())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(60)
    yield fake
    asyncio.run_coroutine_threadsafe(fake.__aexit__(None, None, None), loop).result(60)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(60)
    loop.close()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "robust_contact.py").write_text(
        "from pydantic import BaseModel\n\n\nclass Contact(BaseModel):\n"
        "    name: str\n    email: str\n")
    (tmp_path / "a.txt").write_text("Ada Lovelace <ada@example.org>")
    (tmp_path / "b.txt").write_text("Charles Babbage <cb@example.org>")
    return tmp_path


def extract(fake: OpenAIFake, *args: str, schema: str = "robust_contact.py:Contact") -> int:
    # the fake answers Ada for every input: not what these tests are about
    return af_cli.main(["extract", "--schema", schema, "--model", "openai:gpt-4o-mini",
                        "--base-url", fake.url, "--api-key", "k", "--no-ground", *args])


def records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            out.append(orjson.loads(line))
    return out


def test_cli_usage_errors_exit_2(cli_fake: OpenAIFake, workdir: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert extract(cli_fake, "--input", "missing.txt") == 2
    assert "missing.txt" in capsys.readouterr().err
    assert extract(cli_fake, "--input", "a.txt", "--concurrency", "0") == 2
    assert extract(cli_fake, "--input", "a.txt", "--schema", "robust_contact.py:Nope",
                   schema="robust_contact.py:Nope") == 2
    assert cli_fake.requests == []
    # a bad JSONL line is not a set-up error: that line fails, the others are extracted
    (workdir / "bad.jsonl").write_text('{"text": "ok"}\nnot json\n')
    assert extract(cli_fake, "--input", "bad.jsonl") == 1
    assert "bad.jsonl:2" in capsys.readouterr().err and len(cli_fake.requests) == 1


def test_cli_limit_zero_and_garbage_in_out_file(cli_fake: OpenAIFake, workdir: Path) -> None:
    assert extract(cli_fake, "--input", "a.txt", "--limit", "0") == 0
    assert cli_fake.requests == []
    out = workdir / "out.jsonl"
    out.write_bytes(b'garbage\n[1]\n{"id": {"x": 1}}\n"str"\n\xff\xfe\n{"id": null}\n'
                    b'{"id": "a.txt", "ok": true}\n')
    assert extract(cli_fake, "--input", "a.txt", "b.txt", "--out", str(out)) == 0
    assert [r["id"] for r in records(out) if isinstance(r, dict) and r.get("output")] == ["b.txt"]


def test_cli_resume_after_torn_last_line(cli_fake: OpenAIFake, workdir: Path) -> None:
    out = workdir / "out.jsonl"
    out.write_text('{"id": "a.txt", "ok": tr')
    assert extract(cli_fake, "--input", "a.txt", "b.txt", "--out", str(out)) == 0
    assert sorted(r["id"] for r in records(out)) == ["a.txt", "b.txt"]


def test_cli_stdin_documents_are_not_skipped_as_done(cli_fake: OpenAIFake, workdir: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = workdir / "out.jsonl"
    for text in ("first document", "a different document"):
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        assert extract(cli_fake, "--input", "-", "--out", str(out)) == 0
    assert len(records(out)) == 2


def test_cli_resume_retries_failed_inputs(cli_fake: OpenAIFake, workdir: Path) -> None:
    out = workdir / "out.jsonl"
    out.write_text('{"id": "a.txt", "ok": false, "error": {"type": "RateLimitedError", '
                   '"message": "429"}}\n')
    assert extract(cli_fake, "--input", "a.txt", "--out", str(out)) == 0
    assert any(r.get("ok") for r in records(out))


def test_cli_negative_limit_is_a_usage_error(cli_fake: OpenAIFake, workdir: Path) -> None:
    assert extract(cli_fake, "--input", "a.txt", "--limit", "-1") == 2


@pytest.mark.parametrize("content", ["{not json", "[1, 2]",
                                     '{"type": "object", "properties": {"a": "string"}}'],
                         ids=["not-json", "list", "property-not-object"])
def test_cli_malformed_json_schema_is_a_usage_error(cli_fake: OpenAIFake, workdir: Path,
                                                    content: str) -> None:
    (workdir / "s.json").write_text(content)
    assert extract(cli_fake, "--input", "a.txt", schema="s.json") == 2


def test_cli_empty_document_is_not_a_success(cli_fake: OpenAIFake, workdir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "empty.txt").write_text("")
    extract(cli_fake, "--input", "empty.txt")
    printed = [orjson.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert cli_fake.requests == [] or not any(r["ok"] for r in printed)


def test_cli_corrupt_gzip_names_the_file(cli_fake: OpenAIFake, workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "broken.gz").write_bytes(b"not gzip at all")
    extract(cli_fake, "--input", "broken.gz", "a.txt")
    assert "broken.gz" in capsys.readouterr().err
