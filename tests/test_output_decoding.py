"""The one tolerant decoder (agentflow.output.decoding), through the public
API: function tools and the output tool get the same treatment, on scripted
models and on every vendor's fake (rules 1 and 5 of issue 12)."""

from __future__ import annotations

import enum
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.events import Complete, ToolResult
from agentflow.model import ModelProfile
from agentflow.output.decoding import (
    RAW_ARGUMENTS,
    RejectedLiteral,
    decode_arguments,
    literal_value,
    normalize,
)
from agentflow.output.schema import OutputSpec
from agentflow.testing import Call, Reply, ScriptedModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.provider_scenarios import close_models, tracked
from tests.test_conformance import KITS, Kit

# ----------------------------------------------------------------------------- decoder


@pytest.mark.parametrize(("raw", "expected"), [
    ("{'city': 'Paris', 'days': 3, 'metric': True, 'note': None}",
     {"city": "Paris", "days": 3, "metric": True, "note": None}),
    ("{'tags': ('a', 'b'), 'n': -2.5}", {"tags": ["a", "b"], "n": -2.5}),
    (json.dumps(json.dumps({"a": [1, 2]})), {"a": [1, 2]}),
    (json.dumps(json.dumps(json.dumps({"a": {"b": 1}}))), {"a": {"b": 1}}),
    (json.dumps("{'a': False}"), {"a": False}),
    ("null", {}), ("  ", {}), (None, {}), ("None", {}),
    # C05 kind on tool arguments: one enclosing fence, a byte-order mark
    ('```json\n{"city": "Paris"}\n```', {"city": "Paris"}),
    ('```JSON\r\n{"city": "Paris"}\r\n```\n', {"city": "Paris"}),
    ('```{"city": "Paris"}```', {"city": "Paris"}),
    ('~~~\n{"note": "a ```b``` c"}\n~~~', {"note": "a ```b``` c"}),
    ('\ufeff{"city": "Paris"}', {"city": "Paris"}),
    ('{"note": "```json"}', {"note": "```json"}),
    # raw control characters inside strings (Gemini and local models writing long text)
    ('{"note": "line one\nline two\tend"}', {"note": "line one\nline two\tend"}),
    (json.dumps('{"note": "a\nb"}'), {"note": "a\nb"}),
    # special tokens or tags a server left around the one object
    ('{"city": "Paris"}<|im_end|>', {"city": "Paris"}),
    ('{"city": "Paris"}<|eot_id|>\n', {"city": "Paris"}),
    ('<tool_call>\n{"city": "Paris"}\n</tool_call>', {"city": "Paris"}),
    ('{"city": "<b>Paris</b>"}</function>', {"city": "<b>Paris</b>"}),
    ('{"city": "Paris"}<\uff5ctool\u2581call\u2581end\uff5c>', {"city": "Paris"}),
    ('{"note": "x\ny"}<|im_end|>', {"note": "x\ny"}),
])
def test_decode_arguments(raw: Any, expected: dict[str, Any]) -> None:
    assert decode_arguments(raw) == expected


@pytest.mark.parametrize("raw", [
    "{'tags': {'a', 'b'}}",          # a set never becomes a list
    "{'name': b'abc'}",              # bytes never become the text "b'abc'"
    "{'z': 1+2j}", "{'z': 3j}",      # complex is no number
    "{'f': __import__('os')}",       # nothing is evaluated
    "[1, 2]",                        # not an object
    json.dumps(json.dumps(json.dumps(json.dumps(json.dumps({"a": 1}))))),  # too deep
    'see ```json\n{"a": 1}\n```',  # prose around a fence is no argument text
    '{"a": 1} and more',             # text after the object is no markup
    'x{"a": 1}', '{"a": 1}<b>bold</b>', '{"a": 1}}', '{"a": 1',
    '{"a": NaN}', '{"a": 1}<|im_end|>{"b": 2}',
])
def test_undecodable_arguments_stay_raw(raw: str) -> None:
    assert decode_arguments(raw) == {RAW_ARGUMENTS: raw}


@pytest.mark.parametrize("text", ["{1, 2}", "b'x'", "2j", "[1, {'a'}]"])
def test_rejected_literals_name_the_kind(text: str) -> None:
    with pytest.raises(RejectedLiteral):
        literal_value(text)


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shape(BaseModel):
    name: str
    points: list[tuple[int, int]]
    meta: dict[str, int]


def test_normalize_never_decodes_a_string_field() -> None:
    schema = OutputSpec.of(Shape).plain_schema
    data = {"name": '["not", "a", "list"]', "points": "[[1, 2]]", "meta": "{'a': 1}"}
    assert normalize(data, schema) == {"name": '["not", "a", "list"]', "points": [[1, 2]],
                                       "meta": {"a": 1}}


# ----------------------------------------------------------------------------- function tools

seen: list[Any] = []


class Filter(BaseModel):
    field: str
    values: list[int]


def search(query: str, filters: list[Filter], limit: int = 5) -> str:
    """Search records.

    Args:
        query: free text.
        filters: conditions.
        limit: max hits.
    """
    seen.append((query, [f.model_dump() for f in filters], limit))
    return "3 hits"


def rate(level: Literal[1, 2, 3], ratio: Literal[0.5, 1.5], strict: Literal[True],
         mixed: Literal["a", 7, False], tier: Level) -> str:
    """Rate something."""
    seen.append((level, ratio, strict, mixed, tier))
    return "rated"


FILTERS = [{"field": "year", "values": [2020, 2021]}]


@pytest.mark.parametrize("arguments", [
    # Python-literal syntax for the whole arguments
    "{'query': 'x', 'filters': [{'field': 'year', 'values': [2020, 2021]}], 'limit': 5}",
    # a nested field encoded once, then twice
    {"query": "x", "filters": json.dumps(FILTERS)},
    {"query": "x", "filters": json.dumps(json.dumps(FILTERS))},
    # list items that hold encoded objects, Python-literal style
    {"query": "x", "filters": ["{'field': 'year', 'values': '[2020, 2021]'}"]},
    # the whole arguments encoded twice, then three times
    json.dumps(json.dumps({"query": "x", "filters": FILTERS})),
    json.dumps(json.dumps(json.dumps({"query": "x", "filters": FILTERS}))),
])
async def test_function_tool_arguments_are_decoded(arguments: Any) -> None:
    seen.clear()
    model = ScriptedModel([Reply(tool_calls=[Call("search", arguments)]), "done"])
    reply = await ReActAgent("t", model, tools=[search]).call("find")
    assert reply.text == "done"
    assert seen == [("x", FILTERS, 5)]


async def test_tool_arguments_with_raw_newlines_run_the_tool() -> None:
    # Gemini and local models write a long text value with raw newlines inside the
    # JSON string: the tool runs on the first attempt instead of "not valid JSON".
    seen.clear()
    arguments = '{"query": "line one\nline two", "filters": [], "limit": 5}<|im_end|>'
    model = ScriptedModel([Reply(tool_calls=[Call("search", arguments)]), "done"])
    reply = await ReActAgent("t", model, tools=[search]).call("find")
    assert reply.text == "done" and seen == [("line one\nline two", [], 5)]


SEARCH = {"query": "x", "filters": FILTERS, "limit": 5}


@pytest.mark.parametrize("arguments", [
    {"name": "search", "arguments": SEARCH},                   # Qwen through Ollama
    {"name": "search", "parameters": SEARCH},                  # Llama 3.x
    {"arguments": json.dumps(SEARCH)},                         # DeepSeek DSML through vLLM
    json.dumps({"name": "search", "arguments": json.dumps(SEARCH)}),
])
async def test_a_repeated_tool_call_envelope_is_unwrapped(arguments: Any) -> None:
    seen.clear()
    model = ScriptedModel([Reply(tool_calls=[Call("search", arguments)]), "done"])
    reply = await ReActAgent("t", model, tools=[search]).call("find")
    assert reply.text == "done" and seen == [("x", FILTERS, 5)]


class Person(BaseModel):
    name: str
    age: int


@pytest.mark.parametrize(("data", "expected"), [
    ({"name": "generate_response", "arguments": {"name": "Ann", "age": 3}},
     {"name": "Ann", "age": 3}),
    # a declared `name` with no envelope inside: kept as it is
    ({"name": "Ann", "arguments": {"age": 3}}, {"name": "Ann", "arguments": {"age": 3}}),
    # inner keys the schema does not declare: no envelope
    ({"arguments": {"zip": 1}}, {"arguments": {"zip": 1}}),
    ({"name": "Ann", "age": 3}, {"name": "Ann", "age": 3}),
])
def test_envelope_only_when_the_schema_cannot_mean_it(data: Any, expected: Any) -> None:
    assert normalize(data, OutputSpec.of(Person).plain_schema) == expected
    declared = {"type": "object", "properties": {"name": {"type": "string"},
                                                 "arguments": {"type": "object"}}}
    kept = {"name": "f", "arguments": {"name": "x"}}
    assert normalize(kept, declared) == kept  # a tool that declares both keys


class Tag(BaseModel):
    """Only ``name`` is required: the envelope itself validates as a Tag."""

    name: str
    pinned: bool = False


@pytest.mark.parametrize("envelope", ["arguments", "parameters"])
async def test_an_envelope_that_would_validate_as_is_is_still_unwrapped(envelope: str) -> None:
    """{"name": "generate_response", "arguments": {...}} validated strictly as
    Tag(name="generate_response") (the extra key ignored): a wrong value
    accepted silently. Strict validation may only take what the lax path
    reads the same way."""
    data = {"name": "generate_response", envelope: {"name": "urgent", "pinned": True}}
    assert OutputSpec.of(Tag).validate_object(data) == Tag(name="urgent", pinned=True)
    model = ScriptedModel([Reply(tool_calls=[Call("generate_response", data)])])
    reply = await ReActAgent("t", model).call("tag it", Tag, strategy="tool")
    assert reply.output == Tag(name="urgent", pinned=True)
    plain = {"name": "generate_response", "pinned": True}  # no envelope: as it is
    assert OutputSpec.of(Tag).validate_object(plain) == Tag(**plain)


@pytest.mark.parametrize("data", [
    {"Person": {"name": "Ann", "age": 3}},             # the type's name (Claude, Gemini)
    {"generate_response": {"name": "Ann", "age": 3}},  # the tool's name
    {"properties": {"name": "Ann", "age": 3}},         # echoed from the schema (small models)
    {"input": '{"name": "Ann", "age": 3}'},            # a JSON string inside the wrapper
    {"_": {"name": "Ann", "age": 3}},                  # pydantic/pydantic-ai#81
    {"output": {"name": "Ann", "age": 3}},             # claude-agent-sdk-python#502
    [{"name": "Ann", "age": 3}],                       # a list of the one object
])
def test_the_whole_object_under_one_undeclared_key_is_unwrapped(data: Any) -> None:
    assert normalize(data, OutputSpec.of(Person).plain_schema) == {"name": "Ann", "age": 3}


@pytest.mark.parametrize("data", [
    {"Person": {"name": "Ann"}},                       # not every required field inside
    {"Person": {"name": "Ann", "age": 3, "zip": 1}},   # an undeclared key inside
    [{"name": "Ann", "age": 3}, {"name": "Bo", "age": 4}],  # several objects
    {"name": {"name": "Ann", "age": 3}},               # the key is a declared field
])
def test_no_unwrapping_where_the_wrapper_could_mean_something(data: Any) -> None:
    assert normalize(data, OutputSpec.of(Person).plain_schema) == data
    optional = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert normalize({"meta": {"a": 1}}, optional) == {"meta": {"a": 1}}  # nothing required


async def test_an_output_wrapped_in_its_type_name_needs_no_retry() -> None:
    model = ScriptedModel([Reply(tool_calls=[Call("generate_response", {
        "Person": {"name": "Ann", "age": 3}})])])
    reply = await ReActAgent("t", model).call("who", Person)
    assert reply.output == Person(name="Ann", age=3) and len(model.requests) == 1


async def test_a_string_field_keeps_json_text() -> None:
    seen.clear()
    query = '{"looks": ["like", "json"]}'
    model = ScriptedModel([Reply(tool_calls=[Call("search", {"query": query, "filters": []})]),
                           "done"])
    await ReActAgent("t", model, tools=[search]).call("find")
    assert seen == [(query, [], 5)]


@pytest.mark.parametrize(("arguments", "named"), [
    ("{'query': 'x', 'filters': [{'field': 'y', 'values': {1, 2}}]}", "set"),
    ("{'query': b'x', 'filters': []}", "bytes"),
    ("{'query': 'x', 'filters': [], 'limit': 1+1j}", "complex"),
])
async def test_function_tool_refuses_non_json_literals(arguments: str, named: str) -> None:
    seen.clear()
    model = ScriptedModel([Reply(tool_calls=[Call("search", arguments)]), "gave up"])
    events = [e async for e in ReActAgent("t", model, tools=[search]).stream("find")]
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and named in result.output
    assert seen == []  # the tool never ran with a coerced value


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"level": "2", "ratio": "1.5", "strict": "True", "mixed": "7", "tier": "2"},
     (2, 1.5, True, 7, Level.HIGH)),
    ({"level": "3", "ratio": "0.5", "strict": "true", "mixed": "false", "tier": "1"},
     (3, 0.5, True, False, Level.LOW)),
    ({"level": 1, "ratio": 1.5, "strict": True, "mixed": "a", "tier": 2},
     (1, 1.5, True, "a", Level.HIGH)),
])
async def test_stringified_literals_come_back_on_function_tools(
        arguments: Any, expected: tuple[Any, ...]) -> None:
    seen.clear()
    model = ScriptedModel([Reply(tool_calls=[Call("rate", arguments)]), "ok"],
                          profile=ModelProfile(schema_dialect="gemini"))
    await ReActAgent("t", model, tools=[rate]).call("rate it")
    assert seen == [expected]
    assert [type(v) for v in seen[0]] == [type(v) for v in expected]
    sent = model.requests[0].tools[0].parameters  # the same dialect as the output schema
    assert sent["properties"]["level"]["enum"] == ["1", "2", "3"]


# ----------------------------------------------------------------------------- output tool


class Rating(BaseModel):
    level: Literal[1, 2, 3]
    ratio: Literal[0.5, 1.5]
    strict: Literal[True]
    mixed: Literal["a", 7, False]
    tier: Level
    tags: list[str]


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"level": "2", "ratio": "0.5", "strict": "True", "mixed": "7", "tier": "2",
      "tags": "['x', 'y']"},
     Rating(level=2, ratio=0.5, strict=True, mixed=7, tier=Level.HIGH, tags=["x", "y"])),
    ({"level": "1", "ratio": "1.5", "strict": "true", "mixed": "False", "tier": "1",
      "tags": json.dumps(json.dumps(["z"]))},
     Rating(level=1, ratio=1.5, strict=True, mixed=False, tier=Level.LOW, tags=["z"])),
    ("{'level': 3, 'ratio': 0.5, 'strict': True, 'mixed': 'a', 'tier': 2, 'tags': []}",
     Rating(level=3, ratio=0.5, strict=True, mixed="a", tier=Level.HIGH, tags=[])),
])
async def test_output_tool_gets_the_same_decoder(arguments: Any, expected: Rating) -> None:
    model = ScriptedModel([Reply(tool_calls=[Call("generate_response", arguments)])],
                          profile=ModelProfile(schema_dialect="gemini"))
    reply = await ReActAgent("t", model).call("rate", Rating)
    assert reply.output == expected
    assert type(reply.output.mixed) is type(expected.mixed)


async def test_output_tool_refuses_a_set_and_asks_again() -> None:
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", "{'name': 'a', 'points': [], "
                                                    "'meta': {'k': 1}, 'extra': {1}}")]),
        Reply(tool_calls=[Call("generate_response",
                               {"name": "a", "points": [[1, 2]], "meta": {"k": 1}})]),
    ])
    events = [e async for e in ReActAgent("t", model).stream("draw", Shape)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Shape(name="a", points=[(1, 2)],
                                                                meta={"k": 1})
    assert done.validation_retries == 1
    assert "set" in model.requests[1].messages[-1].tool_results[0].output


# ----------------------------------------------------------------------------- every vendor


@pytest.fixture(params=KITS)
async def vendor(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Kit, FakeServer]]:
    kit: Kit = request.param
    async with kit.fake() as server:
        yield kit, server
    await close_models()


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("filters", [
    json.dumps(FILTERS),
    "[{'field': 'year', 'values': '[2020, 2021]'}]",
])
async def test_every_adapter_decodes_nested_fields(vendor: tuple[Kit, FakeServer],
                                                   stream: bool, filters: str) -> None:
    kit, fake = vendor
    seen.clear()
    fake.add(FakeReply(tool_calls=[FakeCall("search", {"query": "x", "filters": filters})]),
             FakeReply(text="done"))
    agent = ReActAgent("t", tracked(kit.build(fake, stream)), tools=[search])
    reply = await agent.call("find")
    assert reply.text == "done"
    assert seen == [("x", FILTERS, 5)]


OPENAI_STYLE = {"openai", "deepseek", "dashscope", "glm", "minimax"}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("arguments", [
    "{'query': 'x', 'filters': [{'field': 'year', 'values': (2020, 2021)}], 'limit': None}",
    json.dumps(json.dumps({"query": "x", "filters": FILTERS})),
])
async def test_string_argument_wires_decode_literals_and_double_encoding(
        vendor: tuple[Kit, FakeServer], stream: bool, arguments: str) -> None:
    kit, fake = vendor
    if kit.vendor not in OPENAI_STYLE:
        pytest.skip("arguments travel as an object on this wire")
    seen.clear()
    fake.add(FakeReply(tool_calls=[FakeCall("search", arguments)]), FakeReply(text="done"))
    agent = ReActAgent("t", tracked(kit.build(fake, stream)), tools=[search])
    assert (await agent.call("find")).text == "done"
    assert seen == [("x", FILTERS, 5)]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("level", "tier"), [("2", "1"), ("3", "2")])
async def test_gemini_enums_come_back_on_both_paths(stream: bool, level: str, tier: str) -> None:
    from tests.fakes.gemini import GeminiFake

    seen.clear()
    rating = {"level": level, "ratio": "0.5", "strict": "true", "mixed": "7", "tier": tier,
              "tags": ["t"]}
    async with GeminiFake() as fake:
        kit = next(p.values[0] for p in KITS if p.id == "gemini")
        fake.add(FakeReply(tool_calls=[FakeCall("rate", {k: v for k, v in rating.items()
                                                         if k != "tags"})]),
                 FakeReply(tool_calls=[FakeCall("generate_response", rating)]))
        model = tracked(kit.build(fake, stream))
        reply = await ReActAgent("g", model, tools=[rate]).call("rate", Rating)
        declared = fake.bodies[0]["tools"][0]["functionDeclarations"]
        await close_models()
    assert seen == [(int(level), 0.5, True, 7, Level(int(tier)))]
    assert reply.output == Rating(level=int(level), ratio=0.5, strict=True, mixed=7,
                                  tier=Level(int(tier)), tags=["t"])
    params = next(d for d in declared if d["name"] == "rate")
    assert params["parameters"]["properties"]["level"]["enum"] == ["1", "2", "3"]


class Mixed(BaseModel):
    either: list[int] | dict[str, int]
    maybe: list[str] | None = None
    note: str | None = None


@pytest.mark.parametrize(("data", "expected"), [
    ({"either": "[1, 2]", "maybe": "None", "note": "None"},
     Mixed(either=[1, 2], maybe=None, note="None")),
    ({"either": "{'a': 1}", "maybe": "['x']", "note": "[1]"},
     Mixed(either={"a": 1}, maybe=["x"], note="[1]")),
])
def test_unions_of_containers_are_decoded_and_strings_never(data: dict[str, Any],
                                                           expected: Mixed) -> None:
    assert OutputSpec.of(Mixed).validate(data) == expected


BIG = 1234567890123456789012345  # beyond 64 bits


@pytest.mark.parametrize("text", [
    '{"n": 1234567890123456789012345}',
    '```json\n{"n": 1234567890123456789012345}\n```',   # the tolerant path
    '{"n": 1234567890123456789012345, "note": "caf\\u00e9"}',
])
def test_an_integer_beyond_64_bits_keeps_its_digits(text: str) -> None:
    """orjson reads such an integer as a float (``1.2345678901234568e+24``):
    its digits were lost, and an ``int`` field refused it
    (``int_parsing_size``), so a tool taking a 25-digit number could never be
    called. Fractions and quoted digits stay as they are."""
    assert decode_arguments(text)["n"] == BIG
    assert decode_arguments('{"x": -0.00012345678901234567891}')["x"] == -0.00012345678901234567
    assert decode_arguments('{"s": "1234567890123456789012345"}') == {
        "s": "1234567890123456789012345"}


async def test_a_tool_gets_an_integer_beyond_64_bits_exactly() -> None:
    def lookup(n: int) -> str:
        """Look an invoice up by its number."""
        return f"invoice {n}"

    model = ScriptedModel([Reply(tool_calls=[Call("lookup", f'{{"n": {BIG}}}')]), "done"])
    await ReActAgent("t", model, tools=[lookup]).call("find it")
    [result] = model.requests[1].messages[-1].tool_results
    assert (result.output, result.is_error) == (f"invoice {BIG}", False)


@pytest.mark.parametrize("raw", ['{"a": NaN}', '{"a": "x\ny", "b": Infinity}',
                                 '{"a": 12345678901234567890123, "b": -Infinity}'])
def test_json_constants_are_refused_by_one_rule(raw: str) -> None:
    """``NaN``/``Infinity`` are no JSON on every path of the decoder (orjson,
    the standard library's lax and long-integer readings), refused by one
    rule kept beside ``loads_exact`` (a copy of it lived in ``literals``, and
    ``decoding`` took both from there)."""
    from agentflow import _clean_text
    from agentflow.output import decoding, literals

    assert decode_arguments(raw) == {RAW_ARGUMENTS: raw}
    assert not hasattr(literals, "_no_constant") and "loads_exact" not in literals.__all__
    assert decoding.no_constant is _clean_text.no_constant
