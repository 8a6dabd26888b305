"""Issue 32, kind 1: each vendor's accepted subset of JSON Schema.

Every schema below is transformed to each dialect and checked against that
vendor's documented rules, as its fake server enforces them (Gemini's
OpenAPI subset, a union node being ``anyOf`` alone; OpenAI strict mode), and
sent end to end on the native and tool paths without a 400. A 400 that
names the schema anyway (a validator stricter than documented) steps the
call down once: native -> tool -> prompt (Gemini, Anthropic)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.errors import SchemaError
from agentflow.events import OutputRetry
from agentflow.model import ModelProfile
from agentflow.output.dialects import transform_schema
from agentflow.output.strategies import degrade
from agentflow.providers._gemini_request import _schema_field
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.gemini import GeminiFake, _schema_refusal
from tests.fakes.openai import strict_schema_problem
from tests.provider_scenarios import FAST, close_models, tracked

GR = "generate_response"


class Part(BaseModel):
    sku: str
    qty: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Record(BaseModel):
    """Every union shape issue 32 names, and their neighbours."""

    ref: str | int | None = Field(None, description="a nullable union with a description")
    code: Annotated[str | int, Field(description="a described union")]
    tags: list[str | int] = Field(default_factory=list)
    part: Part | None = None
    parts: list[Part | None] = Field(default_factory=list)
    level: Literal[1, 2, 3] | None = None
    pet: Cat | Dog | None = Field(None, discriminator="kind")
    note: Annotated[str | None, Field(description="optional text")] = None


RECORD = {"ref": 7, "code": "A1", "tags": ["x", 2], "part": {"sku": "s", "qty": 1},
          "parts": [None, {"sku": "t", "qty": 2}], "level": 2,
          "pet": {"kind": "dog", "good": True}, "note": None}


def _upper(node: Any) -> Any:
    """Type names as the Gemini adapter sends them (``STRING``...)."""
    if isinstance(node, list):
        return [_upper(n) for n in node]
    if not isinstance(node, dict):
        return node
    return {k: (v.upper() if k == "type" and isinstance(v, str) else _upper(v))
            for k, v in node.items()}


def test_gemini_dialect_keeps_to_the_documented_subset() -> None:
    schema = transform_schema(Record.model_json_schema(), "gemini").schema
    for where, names in (("generation_config.response_schema", False),
                         ("tools[0].function_declarations[0].parameters", True)):
        refusal = _schema_refusal(_upper(schema), where, names=names)
        assert refusal is None, refusal.body if refusal else None

    def unions(node: Any) -> list[dict[str, Any]]:
        found = []
        if isinstance(node, dict):
            if "anyOf" in node:
                found.append(node)
            for v in node.values():
                found += unions(v)
        elif isinstance(node, list):
            for v in node:
                found += unions(v)
        return found

    assert unions(schema) and all(set(u) == {"anyOf"} for u in unions(schema))
    ref = schema["properties"]["ref"]["anyOf"]  # nullable and described, branch by branch
    assert all(b["nullable"] is True and b["description"].startswith("a nullable")
               for b in ref)


def test_openai_strict_dialect_keeps_to_strict_mode() -> None:
    converted = transform_schema(Record.model_json_schema(), "openai_strict")
    assert converted.strict and strict_schema_problem(converted.schema) is None


BOOLEAN_SUBSCHEMAS = {  # hand-written (MCP servers, user tools): JSON Schema 2020-12 4.3.2
    "type": "object",
    "properties": {
        "any": True, "never": False,
        "list": {"type": "array", "items": True},
        "empty": {"type": "array", "items": False},
        "either": {"anyOf": [False, {"type": "string"}, {"type": "null"}]},
        "ref": {"$ref": "#/$defs/Free"},
    },
    "$defs": {"Free": True},
    "required": ["any"],
}


@pytest.mark.parametrize("dialect", ["openai_strict", "gemini", "local"])
def test_boolean_subschemas_are_rewritten_not_crashed_on(dialect: str) -> None:
    schema = transform_schema(BOOLEAN_SUBSCHEMAS, dialect).schema
    text = orjson.dumps(schema).decode()
    assert "true" not in text.replace('"nullable":true', "").replace(
        '"additionalProperties":true', "")  # no boolean subschema left
    props = schema["properties"]
    assert "never" not in props and props["any"] == {}
    assert props["empty"]["maxItems"] == 0 and "items" not in props["empty"]
    if dialect == "gemini":  # "any value" is not in the OpenAPI subset: sent as JSON Schema
        assert _schema_field(schema, "responseSchema", "responseJsonSchema") == {
            "responseJsonSchema": schema}
    assert BOOLEAN_SUBSCHEMAS["properties"]["never"] is False  # the input is not modified


@pytest.mark.parametrize(("schema", "where"), [
    ({"type": "object", "properties": {"b": False}, "required": ["b"]}, "#/properties/b"),
    ({"type": "object", "properties": {"b": {"anyOf": [False]}}}, "#/properties/b/anyOf"),
    ({"type": "object", "allOf": [False]}, "#/allOf"),
    (True, ""),
])
def test_a_schema_no_value_fits_is_a_schema_error_naming_where(schema: Any, where: str) -> None:
    with pytest.raises(SchemaError) as caught:
        transform_schema(schema, "openai_strict")
    assert caught.value.path == where


@pytest.mark.parametrize("path", ["native", "tool"])
async def test_gemini_takes_the_record_without_a_400(path: str) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text=orjson.dumps(RECORD).decode()) if path == "native" else
                 FakeReply(tool_calls=[FakeCall(GR, RECORD)]))
        model = tracked(GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                        settings=FAST))
        try:
            reply = await ReActAgent("g", model).call("the record", Record, strategy=path)
        finally:
            await close_models()
    assert reply.output == Record.model_validate(RECORD) and len(fake.requests) == 1


async def test_gemini_400_naming_the_schema_steps_down_once_per_path() -> None:
    """A validator stricter than the documented subset (here: it refuses
    ``propertyOrdering``): the native request's 400 names the response
    schema -> the tool path; the tool's 400 names its parameters -> the
    prompt path, which sends no schema field and succeeds."""
    async with GeminiFake() as fake:
        fake.refused_keywords = frozenset({"propertyOrdering"})
        fake.default = FakeReply(text=orjson.dumps(RECORD).decode())
        model = tracked(GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                        settings=FAST))
        try:
            events = [e async for e in ReActAgent("g", model).stream("the record", Record)]
        finally:
            await close_models()
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert [r.reason for r in retries] == ["degradation", "degradation"]
    assert "tool strategy" in retries[0].message and "prompt strategy" in retries[1].message
    assert events[-1].output == Record.model_validate(RECORD)
    assert len(fake.requests) == 3
    assert "responseSchema" in fake.bodies[0]["generationConfig"]
    assert fake.bodies[1]["tools"] and "tools" not in fake.bodies[2]


async def test_anthropic_400_naming_the_tool_schema_steps_down_to_prompt() -> None:
    async with AnthropicFake(native_output=False) as fake:
        fake.add(anthropic_error(400, "invalid_request_error",
                                 "tools.0.custom.input_schema: JSON schema is invalid. It "
                                 "must match JSON Schema draft 2020-12"))
        fake.add(FakeReply(text=orjson.dumps(RECORD).decode()))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("the record", Record, strategy="tool")
        finally:
            await model.aclose()
    assert reply.output == Record.model_validate(RECORD) and len(fake.requests) == 2
    assert "tools" not in fake.bodies[1]


def test_degrade_table_for_a_refused_tool_schema() -> None:
    profile = ModelProfile()
    assert degrade("tool", "tool_schema", profile) == "prompt"
    assert degrade("native", "tool_schema", profile) is None  # not about the strategy
    assert degrade("prompt", "tool_schema", profile) is None  # once: nothing below


async def test_openai_function_schema_refused_without_strict_steps_down_to_prompt() -> None:
    """An OpenAI-compatible server refusing the output tool's schema even
    without ``strict`` ("Invalid schema for function ..."): the tool path
    steps down to the prompt path once."""
    from agentflow.providers.openai import OpenAIChatModel
    from tests.fakes.openai import OpenAIFake, openai_error

    refusal = openai_error(400, "Invalid schema for function 'generate_response': In "
                           "context=('properties', 'pet'), 'anyOf' is not supported.",
                           param="tools", code="invalid_function_parameters")
    async with OpenAIFake() as fake:
        fake.add(refusal, refusal, FakeReply(text=orjson.dumps(RECORD).decode()))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        try:
            reply = await ReActAgent("o", model).call("the record", Record, strategy="tool")
        finally:
            await model.aclose()
    assert reply.output == Record.model_validate(RECORD)
    assert len(fake.requests) == 3  # strict, then without strict, then the prompt path
    assert "tools" not in fake.bodies[2] and "response_format" not in fake.bodies[2]


@pytest.mark.parametrize("path", ["native", "tool"])
async def test_anthropic_takes_the_record_without_a_400(path: str) -> None:
    """Anthropic's output_config subset (objects closed, no min/max...,
    ``closed_schema``) and its tools' ``input_schema``, as its fake checks them."""
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text=orjson.dumps(RECORD).decode()) if path == "native" else
                 FakeReply(tool_calls=[FakeCall(GR, RECORD)]))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("the record", Record, strategy=path)
        finally:
            await model.aclose()
    assert reply.output == Record.model_validate(RECORD) and len(fake.requests) == 1
