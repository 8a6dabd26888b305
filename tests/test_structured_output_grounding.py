"""The grounding rule of the structured-output engine, against vendor fakes:
an invented grounded value is caught, sent back within ``output_retries``,
and the accepted output carries correct spans; a final failure is a typed
error carrying the output; degenerate output never passes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Annotated, Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.errors import DegenerateOutputError, GroundingError, SchemaError
from agentflow.events import Complete, OutputRetry
from agentflow.grounding import Grounded
from agentflow.model import ModelProfile
from agentflow.output.config import OutputConfig
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.testing import ScriptedModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.glm import GLMFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

G = Grounded()

DOC = ('Contact: Zoë "Z" Ünal <zoe@example.org>\n'
       "Office:\tRoom 4\\B, Zürich. Call Zoë after 5.")


class Contact(BaseModel):
    """A person's contact details."""

    name: Annotated[str, G]
    email: Annotated[str, G]
    office: Annotated[str | None, G] = None
    phone: Annotated[str | None, G] = None


GOOD = {"name": 'Zoë "Z" Ünal', "email": "zoe@example.org", "office": "Room 4\\B, Zürich",
        "phone": None}
INVENTED = {**GOOD, "phone": "+41 44 555 01 00"}


def assert_spans_point_at_values(spans: Any, output: Contact, source: str) -> None:
    assert set(spans) == {"name", "email", "office"}
    for path, [(start, end)] in spans.items():
        assert source[start:end] == getattr(output, path)


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    await close_models()


async def run(agent: ReActAgent, output: Any = Contact, **kw: Any) -> list[Any]:
    async with aclosing(agent.stream(DOC, output, **kw)) as stream:
        return [e async for e in stream]


def tool_results(body: Any) -> str:
    return orjson.dumps(body).decode()


# ----------------------------------------------------------------------------- vendors


async def check_invented_value_is_retried(fake: FakeServer, agent: ReActAgent,
                                          invented: FakeReply, good: FakeReply) -> None:
    fake.add(invented, good)
    events = await run(agent)
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.output == Contact(**GOOD)
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert len(retries) == 1 and "phone: '+41 44 555 01 00' is not found in the document" in (
        retries[0].message)
    assert len(fake.bodies) == 2
    assert "is not found in the document" in tool_results(fake.bodies[1])  # told the model
    assert_spans_point_at_values(complete.spans, complete.output, DOC)
    assert complete.message.spans == complete.spans


async def test_anthropic_tool_path_catches_an_invented_value() -> None:
    async with AnthropicFake() as fake:
        model = tracked(AnthropicChatModel("claude-3-5-haiku-latest", base_url=fake.url,
                                           api_key="k", settings=FAST))
        await check_invented_value_is_retried(
            fake, ReActAgent("x", model),
            FakeReply(tool_calls=[FakeCall("generate_response", INVENTED)]),
            FakeReply(tool_calls=[FakeCall("generate_response", GOOD)]))


async def test_openai_native_path_catches_an_invented_value() -> None:
    async with OpenAIFake() as fake:
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        await check_invented_value_is_retried(
            fake, ReActAgent("x", model),
            FakeReply(text=orjson.dumps(INVENTED).decode()),
            FakeReply(text=orjson.dumps(GOOD).decode()))
        assert fake.bodies[0]["response_format"]["type"] == "json_schema"
        assert "x-grounded" not in tool_results(fake.bodies[0])  # the vendor never sees marks


async def test_glm_tool_path_catches_an_invented_value() -> None:
    async with GLMFake(api_key="k") as fake:
        model = tracked(GLMChatModel("glm-4.6", base_url=fake.url, api_key="k", settings=FAST))
        await check_invented_value_is_retried(
            fake, ReActAgent("x", model),
            FakeReply(tool_calls=[FakeCall("generate_response", INVENTED)]),
            FakeReply(tool_calls=[FakeCall("generate_response", GOOD)]))


async def test_final_failure_is_a_grounding_error_carrying_output_and_unfound_fields() -> None:
    async with OpenAIFake() as fake:
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        agent = ReActAgent("x", model, output=OutputConfig(output_retries=1))
        fake.add(*[FakeReply(text=orjson.dumps(INVENTED).decode())] * 2)
        [result] = [r async for r in extract_many(agent, [("doc", DOC)], Contact)]
    assert not result.ok and result.spans == {}
    error = result.error
    assert isinstance(error, GroundingError)
    assert error.unfound == [("phone", "+41 44 555 01 00")]
    assert error.output == Contact(**INVENTED) and error.attempts == 2
    assert "phone" in str(error) and error.reason == "not_grounded"
    assert len(fake.bodies) == 2  # the same budget as validation retries: 1 + 1


# ----------------------------------------------------------------------------- engine rules


class Entry(BaseModel):
    version: str
    note: str


async def test_ground_default_per_call_grounds_every_free_text_string() -> None:
    model = ScriptedModel(['{"version": "1.0", "note": "Zürich"}',
                           '{"version": "Room 4", "note": "Zürich"}'])
    agent = ReActAgent("x", model)
    events = await run(agent, Entry, ground=True)
    complete = events[-1]
    assert complete.output == Entry(version="Room 4", note="Zürich")
    room, zurich = DOC.index("Room 4"), DOC.index("Zürich")
    assert complete.spans == {"version": [(room, room + 6)], "note": [(zurich, zurich + 6)]}
    assert len(model.requests) == 2
    # without the default nothing is checked
    model = ScriptedModel(['{"version": "1.0", "note": "x"}'])
    complete = (await run(ReActAgent("x", model), Entry))[-1]
    assert complete.output == Entry(version="1.0", note="x") and complete.spans == {}


async def test_json_schema_outputs_are_grounded_by_their_schema() -> None:
    """A ``json_schema_output`` type has no python fields: grounding walks its
    schema. ``ground=True`` grounds every free-text string (never an enum);
    ``"x-grounded"`` in the schema grounds a field without it; both give spans
    and refuse an invented value with a retry."""
    from agentflow.grounding import grounding_plan
    from agentflow.output.json_schema import json_schema_output

    schema = {"type": "object", "required": ["room", "city", "kind"], "properties": {
        "room": {"type": "string"}, "kind": {"type": "string", "enum": ["office", "home"]},
        "city": {"type": "string", "x-grounded": True},
        "people": {"type": "array", "items": {"$ref": "#/$defs/person"}}},
        "$defs": {"person": {"type": "object", "properties": {
            "name": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}}
    Place = json_schema_output(schema)
    assert grounding_plan(Place) is True
    assert grounding_plan(json_schema_output({"type": "object", "properties": {
        "a": {"type": "string"}}})) is False
    good = '{"room": "Room 4", "kind": "office", "city": "Zürich", "people": [{"name": "Zoë"}]}'
    model = ScriptedModel([good.replace("Zürich", "Zurich"), good])
    complete = (await run(ReActAgent("x", model), Place))[-1]  # only "city" is marked
    zurich = DOC.index("Zürich")
    assert complete.spans == {"city": [(zurich, zurich + 6)]} and len(model.requests) == 2
    model = ScriptedModel([good.replace("Zoë", "Zoey"), good])
    complete = (await run(ReActAgent("x", model), Place, ground=True))[-1]
    room, zoe = DOC.index("Room 4"), DOC.index("Zoë", zurich)  # the occurrence rule
    assert complete.spans == {"room": [(room, room + 6)], "city": [(zurich, zurich + 6)],
                              "people[0].name": [(zoe, zoe + 3)]}  # never the enum "kind"
    assert complete.output.model_dump()["people"] == [{"name": "Zoë"}]
    assert len(model.requests) == 2  # "Zoey" was refused and asked again


async def test_ground_default_per_agent_and_case_rules() -> None:
    model = ScriptedModel(['{"version": "ROOM 4", "note": "zürich"}'])
    agent = ReActAgent("x", model, output=OutputConfig(ground=Grounded(case_sensitive=False)))
    complete = (await run(agent, Entry))[-1]
    room, zurich = DOC.index("Room 4"), DOC.index("Zürich")
    assert complete.spans == {"version": [(room, room + 6)], "note": [(zurich, zurich + 6)]}


async def test_degenerate_output_is_retried_then_a_typed_error() -> None:
    loop = '{"version": "1.0.0.0.0.0.0.0.0.0", "note": "d/d/d/d/d/d/d/d/d/d/d"}'
    model = ScriptedModel([loop, loop, loop])
    agent = ReActAgent("x", model)
    # not in the document: grounding catches them first
    with pytest.raises(GroundingError):
        await run(agent, Entry, ground=Grounded())

    class Free(BaseModel):
        title: Annotated[str, G]
        summary: str

    looped = '{"title": "Zürich", "summary": "d/d/d/d/d/d/d/d/d/d/d/d"}'
    model = ScriptedModel([looped, looped, looped])
    with pytest.raises(DegenerateOutputError) as info:
        await run(ReActAgent("x", model), Free)
    error = info.value
    assert error.problems[0][0] == "summary" and "repetition loop" in error.problems[0][1]
    assert len(model.requests) == 3  # 1 + output_retries (2)
    assert any("repetition loop" in str(m.text) for m in model.requests[1].messages)


async def test_bad_marker_fails_before_any_request() -> None:
    class Bad(BaseModel):
        amount: Annotated[float, G]

    model = ScriptedModel([])
    with pytest.raises(SchemaError, match=r"Bad\.amount"):
        await ReActAgent("x", model).call(DOC, Bad)
    assert model.requests == []


async def test_grammar_profile_gets_the_source_and_marked_schema() -> None:
    profile = ModelProfile(supports_tools=False, native_output="json_schema",
                           schema_dialect="local", substring_grammar=True)
    model = ScriptedModel([orjson.dumps(GOOD).decode()], profile=profile)
    complete = (await run(ReActAgent("x", model), Contact))[-1]
    rf = model.requests[0].options.response_format
    assert rf is not None and rf.source == DOC
    assert rf.schema is not None and rf.schema["properties"]["name"]["x-grounded"] is True
    assert_spans_point_at_values(complete.spans, complete.output, DOC)
    # no grammar: no source sent
    model = ScriptedModel([orjson.dumps(GOOD).decode()],
                          profile=profile.with_(substring_grammar=False))
    await run(ReActAgent("x", model), Contact)
    rf = model.requests[0].options.response_format
    assert rf is not None and rf.source is None


# ----------------------------------------------------------------------------- CLI record


SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel
from agentflow.grounding import Grounded

class Person(BaseModel):
    name: Annotated[str, Grounded()]
    city: Annotated[str, Grounded()]

def prepare(text):
    return text[text.index("Name:"):]
'''


async def test_cli_records_spans_source_offset_and_counts_grounding_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    (tmp_path / "schema.py").write_text(SCHEMA)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("header line\nName: Ann Lee, City: Oslo")
    (docs / "b.txt").write_text("Name: Bob, City: Rome")

    def reply(body: Any) -> FakeReply:
        doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
        city = "Oslo" if "Ann" in doc else "Paris"  # invents Bob's city every time
        name = "Ann Lee" if "Ann" in doc else "Bob"
        return FakeReply(text=orjson.dumps({"name": name, "city": city}).decode())

    async with OpenAIFake() as fake:
        fake.default = reply
        out = tmp_path / "out.jsonl"
        status = await anyio.to_thread.run_sync(main, [
            "extract", "--schema", f"{tmp_path / 'schema.py'}:Person", "--input", str(docs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out)])
    assert status == 1
    a, b = sorted((orjson.loads(x) for x in out.read_bytes().splitlines()),
                  key=lambda r: str(r["id"]))
    assert a["ok"] and a["source_offset"] == len("header line\n")
    raw = (docs / "a.txt").read_text()
    for path, [(start, end)] in a["spans"].items():
        assert raw[a["source_offset"] + start:a["source_offset"] + end] == a["output"][path]
    assert not b["ok"] and b["error"]["type"] == "GroundingError"
    assert "city: 'Paris' is not found in the document" in b["error"]["reason"]
    assert "source_offset" not in b and "spans" not in b
    assert "1 ok, 1 failed (1 not grounded)" in capsys.readouterr().err


# ----------------------------------------------------------------------------- whole tokens


class Mail(BaseModel):
    """An e-mail address and the office."""

    email: Annotated[str, Grounded(whole_tokens=True)]
    office: Annotated[str, Grounded(whole_tokens=True)]


async def check_cut_token_is_retried(fake: FakeServer, agent: ReActAgent,
                                     cut: FakeReply, good: FakeReply) -> None:
    fake.add(cut, good)
    events = await run(agent, Mail)
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert complete.output == Mail(email="zoe@example.org", office="Room 4\\B")
    [retry] = [e for e in events if isinstance(e, OutputRetry)]
    assert "email: 'example.org' cuts through the token 'zoe@example.org'" in retry.message
    assert "office: 'Room 4\\\\' cuts through the token '4\\\\B'" in retry.message
    assert "cuts through the token" in tool_results(fake.bodies[1])  # told the model
    start = DOC.index("zoe@")
    assert complete.spans["email"] == [(start, start + len("zoe@example.org"))]
    assert DOC[slice(*complete.spans["office"][0])] == "Room 4\\B"


async def test_openai_refuses_and_retries_a_value_that_cuts_a_token() -> None:
    async with OpenAIFake() as fake:
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        await check_cut_token_is_retried(
            fake, ReActAgent("x", model),
            FakeReply(text=orjson.dumps({"email": "example.org", "office": "Room 4\\"}).decode()),
            FakeReply(text=orjson.dumps({"email": "zoe@example.org",
                                         "office": "Room 4\\B"}).decode()))
        assert "whole_tokens" not in tool_results(fake.bodies[0])  # never sent to a vendor


async def test_anthropic_refuses_and_retries_a_value_that_cuts_a_token() -> None:
    async with AnthropicFake() as fake:
        model = tracked(AnthropicChatModel("claude-3-5-haiku-latest", base_url=fake.url,
                                           api_key="k", settings=FAST))
        await check_cut_token_is_retried(
            fake, ReActAgent("x", model),
            FakeReply(tool_calls=[FakeCall("generate_response",
                                           {"email": "example.org", "office": "Room 4\\"})]),
            FakeReply(tool_calls=[FakeCall("generate_response",
                                           {"email": "zoe@example.org", "office": "Room 4\\B"})]))


async def test_a_cut_token_that_persists_fails_as_a_grounding_error() -> None:
    model = ScriptedModel(['{"email": "example.org", "office": "Room"}'] * 2)
    agent = ReActAgent("x", model, output=OutputConfig(output_retries=1))
    [result] = [r async for r in extract_many(agent, [("doc", DOC)], Mail)]
    assert not result.ok and isinstance(result.error, GroundingError)
    assert result.error.unfound == [("email", "example.org")]
    assert "cuts through the token 'zoe@example.org'" in str(result.error)
