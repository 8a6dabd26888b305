"""GeminiChatModel against the fake Gemini API: wire shapes, native output
and its pre-3 limits (C22), the Gemini schema subset (C16), function calls,
thought signatures, errors and stream cuts."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from pydantic import AnyUrl, BaseModel, Field

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
from agentflow.events import OutputRetry, ThinkingChunk
from agentflow.messages import Msg
from agentflow.model import FinishChunk, GenerateOptions, ResponseFormat, TextDelta
from agentflow.output.schema import OutputSpec
from agentflow.providers._gemini_request import FOREIGN_SIGNATURE, response_config
from agentflow.providers.gemini import GeminiChatModel, map_error
from agentflow.reply import generate
from agentflow.state import AgentState
from agentflow.tools import Tool
from tests.fakes.base import FakeCall, FakeReply, collect, sse
from tests.fakes.gemini import MIME_WITH_TOOLS, GeminiFake, gemini_error
from tests.provider_scenarios import FAST, close_models, tracked

PRE3, GEMINI3, THINKING = "gemini-2.0-flash", "gemini-3-pro-preview", "gemini-2.5-flash"


class Contact(BaseModel):
    name: str
    email: str


class Axis(BaseModel):
    label: str


class Chart(BaseModel):
    """Not recursive: one sub-model used twice (C16)."""

    x_axis: Axis
    y_axis: Axis


class Node(BaseModel):
    """Truly recursive (C16)."""

    name: str
    children: list[Node] = []


CONTACT = {"name": "Ann", "email": "ann@example.org"}
CONTACT_JSON = orjson.dumps(CONTACT).decode()

STREAMED = GenerateOptions(stream=True)
"""Options of an agent whose call() streams (stream faults need a stream;
call() asks for whole replies otherwise)."""


def lookup(query: str) -> str:
    """Look a person up."""
    return f"{query}: ann@example.org"


def plot(chart: Chart) -> str:
    """Draw a chart."""
    return f"drew {chart.x_axis.label}/{chart.y_axis.label}"


def now() -> str:
    """The current time."""
    return "12:00"


@pytest.fixture
async def fake() -> AsyncIterator[GeminiFake]:
    async with GeminiFake() as server:
        yield server


@pytest.fixture(params=[True, False], ids=["stream", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    await close_models()


def model(fake: GeminiFake, name: str = PRE3, **kw: Any) -> GeminiChatModel:
    kw.setdefault("api_key", "test-key")
    built: GeminiChatModel = tracked(GeminiChatModel(name, base_url=fake.url, settings=FAST, **kw))
    return built


async def events(agent: ReActAgent, *args: Any, **kw: Any) -> list[Any]:
    return [e async for e in agent.stream(*args, **kw)]


def output_call(data: dict[str, Any] = CONTACT) -> FakeReply:
    return FakeReply(tool_calls=[FakeCall("generate_response", data)])


# ----------------------------------------------------------------------------- wire shape


async def test_text_reply_wire_shape(fake: GeminiFake, stream: bool) -> None:
    fake.add(FakeReply(text="Hello there.", usage=(21, 3)))
    agent = ReActAgent("g", model(fake, stream=stream), sys_prompt="Be brief.")
    done = (await events(agent, "hi"))[-1]
    assert done.message.text == "Hello there." and done.usage.input_tokens == 21
    request = fake.requests[0]
    assert request.headers["x-goog-api-key"] == "test-key"
    action = ":streamGenerateContent" if stream else ":generateContent"
    assert request.path == f"/v1beta/models/{PRE3}{action}"
    assert request.body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert request.body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


async def test_native_output_uses_response_schema(fake: GeminiFake, stream: bool) -> None:
    fake.add(FakeReply(text=CONTACT_JSON))
    reply = await ReActAgent("g", model(fake, stream=stream)).call("Extract", Contact)
    assert reply.output == Contact(**CONTACT)
    config = fake.bodies[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["type"] == "OBJECT"
    assert config["responseSchema"]["properties"]["name"] == {"type": "STRING"}


async def test_c22_pre3_with_tools_uses_output_tool(fake: GeminiFake) -> None:
    """C22: before Gemini 3 a response schema never travels with tools."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]), output_call())
    reply = await ReActAgent("g", model(fake), tools=[lookup]).call("Find Ann", Contact)
    assert reply.output == Contact(**CONTACT)
    for body in fake.bodies:
        assert "responseMimeType" not in body.get("generationConfig", {})
        assert GeminiFake.tool_names(body) == ["lookup", "generate_response"]


async def test_c22_refusal_at_run_time_degrades_to_tool(fake: GeminiFake) -> None:
    """A profile that wrongly combines native output and tools: the 400 steps
    the call down to the tool strategy once."""
    wrong = model(fake)
    wrong._profile = wrong.profile.with_(native_output_with_tools=True)
    fake.add(output_call())
    events_ = await events(ReActAgent("g", wrong, tools=[lookup]), "Find Ann", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    assert fake.bodies[0]["generationConfig"]["responseMimeType"] == "application/json"
    assert "generationConfig" not in fake.bodies[1]
    retry = next(e for e in events_ if isinstance(e, OutputRetry))
    assert retry.reason == "degradation" and MIME_WITH_TOOLS in retry.message


async def test_gemini3_combines_native_output_and_tools(fake: GeminiFake) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             FakeReply(text=CONTACT_JSON))
    reply = await ReActAgent("g", model(fake, GEMINI3), tools=[lookup]).call("Find", Contact)
    assert reply.output == Contact(**CONTACT)
    assert all(GeminiFake.has_native_output(b) for b in fake.bodies)


# ----------------------------------------------------------------------------- tools


async def test_tool_path_forces_with_any_and_allowed_names(fake: GeminiFake,
                                                           stream: bool) -> None:
    fake.add(FakeReply(text="Ann, ann@example.org"), output_call())
    agent = ReActAgent("g", model(fake, stream=stream), tools=[lookup])
    events_ = await events(agent, "Extract", Contact)
    assert events_[-1].output == Contact(**CONTACT)
    assert "toolConfig" not in fake.bodies[0]
    assert fake.bodies[1]["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["generate_response"]}}
    last = fake.bodies[1]["contents"][-1]  # never ends on a model turn
    assert last["role"] == "user" and "`generate_response`" in last["parts"][0]["text"]


async def test_parallel_calls_and_signatures_sent_back(fake: GeminiFake, stream: bool) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}),
                                   FakeCall("lookup", {"query": "Bob"})]),
             FakeReply(text=CONTACT_JSON))
    agent = ReActAgent("g", model(fake, GEMINI3, stream=stream), tools=[lookup])
    assert (await agent.call("Find", Contact)).output == Contact(**CONTACT)
    turn, answers = fake.bodies[1]["contents"][1:3]
    assert turn["role"] == "model" and answers["role"] == "user"
    first, second = (p["functionCall"] for p in turn["parts"])
    assert turn["parts"][0]["thoughtSignature"] in fake.signatures
    assert [p["functionResponse"] for p in answers["parts"]] == [
        {"name": "lookup", "id": first["id"], "response": {"result": "Ann: ann@example.org"}},
        {"name": "lookup", "id": second["id"], "response": {"result": "Bob: ann@example.org"}},
    ]


async def test_calls_gemini3_did_not_make_go_with_the_documented_bypass(
        fake: GeminiFake, stream: bool) -> None:
    # A conversation begun on another model (here Gemini 2.0, no signatures; another
    # vendor alike) and continued on Gemini 3: its old calls carry Google's dummy
    # signature instead of a 400 "Function call is missing a thought_signature".
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]), FakeReply(text="ok"),
             FakeReply(tool_calls=[FakeCall("lookup", {"query": "Bob"})]), FakeReply(text="done"))
    state = AgentState()
    await ReActAgent("g", model(fake, stream=stream), tools=[lookup]).call("Find", state=state)
    agent = ReActAgent("g", model(fake, GEMINI3, stream=stream), tools=[lookup])
    assert (await agent.call("And Bob?", state=state)).text == "done"
    old, new = (t for t in fake.bodies[3]["contents"] if t["role"] == "model"
                and any("functionCall" in p for p in t["parts"]))
    assert old["parts"][0]["thoughtSignature"] == FOREIGN_SIGNATURE
    assert new["parts"][0]["thoughtSignature"] in fake.signatures  # its own, untouched
    assert all("thoughtSignature" not in p for t in fake.bodies[1]["contents"]
               for p in t["parts"])  # never sent to a model that does not check them


@pytest.mark.parametrize("given", [CONTACT_JSON, orjson.dumps(CONTACT_JSON).decode()],
                         ids=["json-text", "double-encoded"])
async def test_function_call_args_given_as_a_string_are_read(fake: GeminiFake, stream: bool,
                                                             given: str) -> None:
    """C10 kind on the Gemini wire: ``functionCall.args`` as a JSON string (as
    some Gemini-compatible gateways send it) failed the reply as malformed."""
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", given)]))
    agent = ReActAgent("g", model(fake, stream=stream))
    reply = await agent.call("Find Ann", Contact, strategy="tool")
    assert reply.output == Contact(**CONTACT) and len(fake.bodies) == 1


async def test_function_call_args_that_are_no_json_are_sent_back_as_invalid(
        fake: GeminiFake, stream: bool) -> None:
    """A string that is no JSON: the model is told and retries; the history
    replays the failed call with an object ``args``, as the API requires."""
    fake.add(FakeReply(tool_calls=[FakeCall("generate_response", "Ann <ann@example.org>")]),
             output_call())
    agent = ReActAgent("g", model(fake, stream=stream))
    events_ = await events(agent, "Find Ann", Contact, strategy="tool")
    assert events_[-1].output == Contact(**CONTACT)
    assert [e.reason for e in events_ if isinstance(e, OutputRetry)] == ["validation"]
    replayed = fake.bodies[1]["contents"][1]["parts"][0]["functionCall"]
    assert isinstance(replayed["args"], dict)
    answer = fake.bodies[1]["contents"][2]["parts"][0]["functionResponse"]
    assert "JSON" in str(answer["response"])


def test_batch_reply_function_call_args_given_as_a_string_are_argument_text() -> None:
    """The batch reader is the whole-reply reader: a string ``args`` is the
    call's argument text, not a malformed reply."""
    reply = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "generate_response", "args": CONTACT_JSON}}]},
        "finishReason": "STOP"}]}
    gemini = GeminiChatModel(PRE3, api_key="k")
    calls = [c for c in gemini.parse_batch_reply(reply) if not isinstance(c, FinishChunk)]
    assert len(calls) == 1 and calls[0].arguments == CONTACT_JSON  # type: ignore[union-attr]
    assert calls[0].arguments_obj is None  # type: ignore[union-attr]


async def test_pre3_calls_without_ids_get_synthesised_ids(fake: GeminiFake) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]), FakeReply(text="done"))
    state = AgentState()
    await ReActAgent("g", model(fake), tools=[lookup]).call("Find", state=state)
    call = state.memory[1].tool_uses[0]
    assert call.id and state.memory[2].tool_results[0].tool_use_id == call.id
    part = fake.bodies[1]["contents"][1]["parts"][0]
    assert "id" not in part["functionCall"]  # never invent an id towards the vendor


async def test_tool_without_parameters_omits_them(fake: GeminiFake) -> None:
    fake.add(FakeReply(text="noon"))
    await ReActAgent("g", model(fake), tools=[now]).call("time?")
    assert fake.bodies[0]["tools"][0]["functionDeclarations"][0] == {
        "name": "now", "description": "The current time."}


# ----------------------------------------------------------------------------- C16


async def test_c16_shared_submodel_is_not_recursion(fake: GeminiFake) -> None:
    chart = {"x_axis": {"label": "t"}, "y_axis": {"label": "v"}}
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "x"})]), output_call(chart))
    reply = await ReActAgent("g", model(fake), tools=[lookup]).call("Chart it", Chart)
    assert reply.output == Chart(**chart)
    declared = fake.bodies[0]["tools"][0]["functionDeclarations"][1]["parameters"]
    assert "$ref" not in str(declared) and "$defs" not in str(declared)


TREE = {"name": "root", "children": [{"name": "a", "children": [{"name": "a1"}]},
                                     {"name": "b"}]}


async def test_c16_recursive_output_goes_as_json_schema_on_the_tool_path(
        fake: GeminiFake) -> None:
    # A tree cannot be inlined into the OpenAPI subset: the output tool's parameters go
    # in parametersJsonSchema with $defs/$ref (the subset's "Unknown name $defs" 400
    # never happens) and the reply is validated as the tree.
    fake.add(output_call(TREE))
    reply = await ReActAgent("g", model(fake), tools=[lookup]).call("Tree", Node)
    assert reply.output == Node(**TREE)
    declared = fake.bodies[0]["tools"][0]["functionDeclarations"][1]
    assert declared["name"] == "generate_response" and "parameters" not in declared
    assert declared["parametersJsonSchema"]["$defs"]["Node"]["properties"]["children"][
        "items"] == {"$ref": "#/$defs/Node"}


async def test_c16_recursive_output_goes_as_json_schema_natively(
        fake: GeminiFake, stream: bool) -> None:
    fake.add(FakeReply(text=orjson.dumps(TREE).decode()))
    reply = await ReActAgent("g", model(fake, stream=stream)).call("Tree", Node)
    assert reply.output == Node(**TREE)
    config = fake.bodies[0]["generationConfig"]
    assert "responseSchema" not in config
    assert config["responseJsonSchema"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"}


async def test_c16_tool_arguments_get_the_gemini_dialect(fake: GeminiFake) -> None:
    """Function tools get the output schema's dialect transform: shared
    sub-models are inlined, so the declaration fits the OpenAPI subset."""
    fake.add(FakeReply(tool_calls=[FakeCall("plot", {"chart": {"x_axis": {"label": "t"},
                                                               "y_axis": {"label": "v"}}})]),
             FakeReply(text="drawn"))
    reply = await ReActAgent("g", model(fake), tools=[plot]).call("Plot")
    assert reply.text == "drawn"
    declaration = fake.bodies[0]["tools"][0]["functionDeclarations"][0]
    assert "parametersJsonSchema" not in declaration
    assert "$ref" not in str(declaration) and "$defs" not in str(declaration)
    assert "drew t/v" in GeminiFake.request_text(fake.bodies[1])


class Booking(BaseModel):
    page: AnyUrl = Field(description="the booking page")
    ref: uuid.UUID
    day: datetime.date
    made_at: datetime.datetime
    nights: int


BOOKING = {"page": "https://example.org/b/1", "ref": "12345678-1234-5678-1234-567812345678",
           "day": "2026-03-01", "made_at": "2026-01-02T10:00:00Z", "nights": 2}


@pytest.mark.parametrize("path", ["native", "tool"])
async def test_string_formats_the_subset_refuses_are_said_in_words(fake: GeminiFake,
                                                                   path: str) -> None:
    """Gemini's Schema takes only 'enum'/'date-time' string formats (400 "format:
    only 'enum' and 'date-time' are supported for STRING type"): a URL, UUID or
    date field failed every request, native and tool path alike."""
    reply_ = (FakeReply(text=orjson.dumps(BOOKING).decode()) if path == "native" else
              FakeReply(tool_calls=[FakeCall("generate_response", BOOKING)]))
    fake.add(reply_)
    reply = await ReActAgent("g", model(fake)).call("Book", Booking, strategy=path)
    assert reply.output == Booking(**BOOKING) and len(fake.bodies) == 1
    body = fake.bodies[0]
    schema = (body["generationConfig"]["responseSchema"] if path == "native" else
              body["tools"][0]["functionDeclarations"][0]["parameters"])
    props = schema["properties"]
    assert props["page"]["description"] == "the booking page (format: uri)"
    assert "format" not in props["ref"] and "format: date" in props["day"]["description"]
    assert props["made_at"]["format"] == "date-time"


@pytest.mark.parametrize("path", ["native", "tool"])
async def test_a_field_of_several_types_becomes_any_of(fake: GeminiFake, path: str) -> None:
    """A hand-written JSON Schema's ``"type": ["string", "number"]`` (``--schema
    x.json``): Gemini's Schema.type takes one type ("Proto field is not repeating,
    cannot start list"), so such a field is an anyOf of one branch per type."""
    from agentflow.output.json_schema import json_schema_output

    Reading = json_schema_output({"type": "object", "properties": {
        "value": {"type": ["string", "number"], "description": "the reading"},
        "unit": {"type": ["string", "null"]}}, "required": ["value"]}, name="Reading")
    data = {"value": 12.5, "unit": None}
    fake.add(FakeReply(text=orjson.dumps(data).decode()) if path == "native" else
             FakeReply(tool_calls=[FakeCall("generate_response", data)]))
    reply = await ReActAgent("g", model(fake)).call("Read", Reading, strategy=path)
    assert reply.output.model_dump() == data and len(fake.bodies) == 1
    body = fake.bodies[0]
    schema = (body["generationConfig"]["responseSchema"] if path == "native" else
              body["tools"][0]["functionDeclarations"][0]["parameters"])
    assert schema["properties"]["value"] == {"anyOf": [  # anyOf alone (issue 32)
        {"type": "STRING", "description": "the reading"},
        {"type": "NUMBER", "description": "the reading"}]}


def grow(tree: Node) -> str:
    """Grow a tree."""
    return f"grew {tree.name}"


async def test_c16_recursive_tool_arguments_use_json_schema(fake: GeminiFake) -> None:
    """A tool the dialect cannot express (true recursion) keeps its JSON Schema."""
    fake.add(FakeReply(tool_calls=[FakeCall("grow", {"tree": {"name": "root"}})]),
             FakeReply(text="grown"))
    reply = await ReActAgent("g", model(fake), tools=[grow]).call("Grow")
    assert reply.text == "grown"
    declaration = fake.bodies[0]["tools"][0]["functionDeclarations"][0]
    assert "parameters" not in declaration and "$defs" in declaration["parametersJsonSchema"]
    assert "grew root" in GeminiFake.request_text(fake.bodies[1])


class Reading(BaseModel):
    """Fields the OpenAPI subset cannot say as written."""

    at: tuple[int, str]
    raw: Any = None
    counts: dict[str, int] = {}


def record(reading: Reading) -> str:
    """Record a reading."""
    return f"recorded {reading.at[1]}"


async def test_c16_subset_refusals_never_reach_the_wire(fake: GeminiFake) -> None:
    """C16 kind, beyond $ref: a tuple (no ``prefixItems``; an ARRAY needs
    ``items``), a typeless ``Any`` and a free-form ``dict`` (an OBJECT needs
    properties) are refused by the subset at any depth. The tuple's item types
    survive as ``items``; what the subset cannot say goes as JSON Schema."""
    data = {"at": [3, "m"], "raw": {"v": 1}, "counts": {"a": 1}}
    fake.add(FakeReply(tool_calls=[FakeCall("record", {"reading": data})]),
             FakeReply(text=orjson.dumps(data).decode()))
    reply = await ReActAgent("g", model(fake, "gemini-3-flash"), tools=[record]).call(
        "Read", Reading)
    assert reply.output == Reading(at=(3, "m"), raw={"v": 1}, counts={"a": 1})
    assert len(fake.bodies) == 2  # nothing refused, nothing retried
    assert "recorded m" in GeminiFake.request_text(fake.bodies[1])
    config = fake.bodies[0]["generationConfig"]
    sent = config.get("responseSchema") or config["responseJsonSchema"]
    at = sent["properties"]["at"]
    assert at["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert (at["minItems"], at["maxItems"]) == (2, 2)


def test_c16_tuple_alone_stays_in_the_subset() -> None:
    class Span(BaseModel):
        at: tuple[int, int]

    sent = response_config(ResponseFormat(
        "json_schema", OutputSpec.of(Span).schema_for("gemini").schema))
    assert sent["responseSchema"]["properties"]["at"]["items"] == {"type": "INTEGER"}


async def test_c19_a_derived_name_gemini_would_refuse_is_sanitized(fake: GeminiFake) -> None:
    def check(code: str) -> str:
        """Check a one-time code."""
        return f"{code} ok"

    check.__name__ = "2fa_check"  # a name from elsewhere (a registry, a server)
    fake.add(FakeReply(tool_calls=[FakeCall(Tool.from_function(check).name, {"code": "7"})]),
             FakeReply(text="checked"))
    reply = await ReActAgent("g", model(fake), tools=[check]).call("Check 7")
    assert reply.text == "checked"
    assert "7 ok" in GeminiFake.request_text(fake.bodies[1])


class Person(BaseModel):
    full_name: str = Field(alias="full-name")


async def test_c16_property_names_the_subset_refuses_go_as_json_schema(
        fake: GeminiFake) -> None:
    """Function parameter names must match [A-Za-z_][A-Za-z0-9_]*: an alias such as
    ``full-name`` (or a JSON Schema key such as ``first name``) goes in
    ``parametersJsonSchema``, on the tool path's output tool too."""
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             output_call({"full-name": "Ann Lee"}))
    reply = await ReActAgent("g", model(fake), tools=[lookup]).call("Who?", Person)
    assert reply.output == Person(**{"full-name": "Ann Lee"})
    declared = {d["name"]: d for d in fake.bodies[0]["tools"][0]["functionDeclarations"]}
    assert "parameters" in declared["lookup"]
    assert "full-name" in declared["generate_response"]["parametersJsonSchema"]["properties"]


# ----------------------------------------------------------------------------- thinking
# ----------------------------------------------------------------------------- thinking


async def test_thoughts_stream_as_thinking_chunks(fake: GeminiFake) -> None:
    fake.add(FakeReply(thinking="Considering the greeting.", text="Hi"))
    agent = ReActAgent("g", model(fake, THINKING, include_thoughts=True, thinking_budget=512))
    events_ = await events(agent, "hi")
    assert "".join(e.text for e in events_ if isinstance(e, ThinkingChunk)) == (
        "Considering the greeting.")
    assert fake.bodies[0]["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 512, "includeThoughts": True}


async def test_thinking_off_sends_zero_budget(fake: GeminiFake) -> None:
    fake.add(FakeReply(text="Hi"))
    agent = ReActAgent("g", model(fake, THINKING), options=GenerateOptions(thinking=False))
    await agent.call("hi")
    assert fake.bodies[0]["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}


# ----------------------------------------------------------------------------- errors


async def test_invalid_key_is_authentication_error(fake: GeminiFake) -> None:
    with pytest.raises(AuthenticationError):
        await ReActAgent("g", model(fake, api_key="bad-key")).call("hi")
    assert len(fake.requests) == 1


async def test_429_retry_info_is_honoured(fake: GeminiFake) -> None:
    fake.add(GeminiFake.rate_limited(0), gemini_error(503, "The model is overloaded."),
             FakeReply(text="ok"))
    assert (await ReActAgent("g", model(fake)).call("hi")).text == "ok"
    assert len(fake.requests) == 3


def test_map_error_table() -> None:
    limited = map_error(429, {}, orjson.dumps(GeminiFake.rate_limited(37).body))
    assert isinstance(limited, RateLimitedError) and limited.retry_after == 37
    assert limited.code == "RESOURCE_EXHAUSTED"
    wrapped = gemini_error(400, MIME_WITH_TOOLS, wrap_list=True).body
    native = map_error(400, {}, orjson.dumps(wrapped))
    assert isinstance(native, UnsupportedFeatureError) and native.feature == "native_output"
    assert isinstance(map_error(503, {}, orjson.dumps(gemini_error(503, "busy").body)),
                      OverloadedError)


async def test_blocked_prompt_finishes_with_content_filter(fake: GeminiFake,
                                                          stream: bool) -> None:
    fake.add(FakeReply(extra={"block_reason": "SAFETY"}))
    response = await generate(model(fake, stream=stream), [Msg.user("something bad")])
    assert response.finish_reason == "content_filter" and response.message.text == ""


async def test_mid_stream_error_is_typed(fake: GeminiFake) -> None:
    fake.add(FakeReply(text="partial text here", chunk_size=4, extra={
        "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"},
        "error_after": 2}))
    with pytest.raises(OverloadedError):
        await ReActAgent("g", model(fake), options=STREAMED).call("hi")


async def test_stream_cut_leaves_state_unchanged(fake: GeminiFake) -> None:
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    fake.add(FakeReply(text=CONTACT_JSON, chunk_size=5, cut_after=3))
    with pytest.raises(ProviderConnectionError) as info:
        await ReActAgent("g", model(fake), options=STREAMED).call("Extract", Contact, state=state)
    assert info.value.partial and state.to_json() == snapshot


async def test_c08_max_tokens_is_truncation(fake: GeminiFake, stream: bool) -> None:
    cut = '{"name": "Ann", "email": "ann@'
    fake.add(FakeReply(text=cut, finish_reason="MAX_TOKENS"))
    reply = await ReActAgent("g", model(fake, stream=stream)).call("Extract", Contact)
    with pytest.raises(OutputTruncatedError) as info:
        _ = reply.output
    assert info.value.raw_text == cut and len(fake.requests) == 1


# ----------------------------------------------------------------------------- malformed replies


class RawGeminiFake(GeminiFake):
    """Streams ``extra["frames"]`` and answers ``extra["json"]`` as they are."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return list(reply.extra["frames"])

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["json"]


async def raw_reply(stream: bool, **extra: Any) -> list[Any]:
    async with RawGeminiFake() as server:
        server.add(FakeReply(extra=extra))
        return await collect(model(server, stream=stream).stream(
            [Msg.user("hi")], [], GenerateOptions()))


def candidate(parts: Any, finish: Any = "STOP") -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}]}


@pytest.mark.parametrize("frames", [
    [sse(b"not json")], [sse([1])], [sse(candidate("abc"))], [sse({"candidates": {"a": 1}})],
    [sse(candidate([{"text": 5}]))], [sse(candidate([{"text": "x"}], 7))],
    [sse(candidate([{"functionCall": {"args": {}}}]))],
    [sse({**candidate([{"text": "x"}]), "usageMetadata": {"promptTokenCount": "x"}})],
], ids=["non-json", "list-of-int", "parts-str", "candidates-dict", "text-int", "finish-int",
        "call-without-name", "usage-str"])
async def test_malformed_stream_is_a_partial_connection_error(frames: list[bytes]) -> None:
    with pytest.raises(ProviderConnectionError) as info:
        await raw_reply(True, frames=frames)
    assert info.value.partial and info.value.vendor == "gemini"


@pytest.mark.parametrize("body", [{}, [], None, "hi", {"candidates": []}, candidate("abc")],
                         ids=["empty", "empty-list", "null", "str", "no-candidate", "parts-str"])
async def test_malformed_or_empty_whole_reply_is_a_server_error(body: Any) -> None:
    with pytest.raises(ServerError, match="reply from gemini"):
        await raw_reply(False, json=body)


async def test_whole_reply_without_finish_reason_is_still_an_answer() -> None:
    chunks = await raw_reply(False, json={"candidates": [{"content": {"parts": [{"text": "hi"}]}}]})
    assert chunks == [TextDelta("hi"), FinishChunk("stop", "")]


def test_refused_response_schema_is_unsupported_native_output() -> None:
    import orjson

    from agentflow.errors import UnsupportedFeatureError
    from agentflow.providers.gemini import map_error

    body = orjson.dumps({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
                        "Invalid JSON payload received. Unknown name \"const\" at "
                        "'generation_config.response_schema.properties[0].value': Cannot find "
                        "field."}})
    error = map_error(400, {}, body)
    assert isinstance(error, UnsupportedFeatureError) and error.feature == "native_output"
