"""Real-world structured-output failures (tests/data/cases.json, a copy of
shared/cases) that concern the engine: each case's raw output is the input,
its expected behaviour the assertion. Provider-level cases live with the
provider tests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import anyio
import orjson
import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    ModelProfile,
    OutputRetry,
    OutputTruncatedError,
    ReActAgent,
    StructuredOutputError,
    Tool,
    ToolNameError,
)
from agentflow.messages import STRUCTURED_OUTPUT_REMINDER
from agentflow.output.parsing import parse_output
from agentflow.output.schema import OutputSpec
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from agentflow.tools import TOOL_NAME_PATTERN

CASES = {c["id"]: c for c in json.loads(Path(__file__).with_name("data").joinpath(
    "cases.json").read_text())}
GR = "generate_response"
SPECIFIC = ModelProfile()
AUTO_ONLY = ModelProfile(tool_choice_modes=frozenset({"auto"}))


def schema_of(case_id: str) -> dict[str, Any]:
    """The case's pydantic classes, built from its ``schema_python``."""
    source = CASES[case_id]["schema_python"]
    source = re.sub(r"^@function_tool.*$", "", source, flags=re.MULTILINE)
    namespace: dict[str, Any] = {"BaseModel": BaseModel, "Literal": Literal}
    exec(compile(source, case_id, "exec"), namespace)  # the case's own class definitions
    for value in namespace.values():
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel:
            value.model_rebuild(_types_namespace=namespace)
    return namespace


# --------------------------------------------------------------------------- C04


@pytest.mark.parametrize("native", ["json_object", "json_schema"])
async def test_c04_prose_on_the_native_path_falls_back_to_the_tool_strategy(
    native: Literal["json_object", "json_schema"],
) -> None:
    weather = schema_of("C04")["Weather"]
    prose = json.loads(CASES["C04"]["raw_output"])["output"]["choices"][0]["message"]["content"]
    answer = {"city": "Hangzhou", "temperature_c": 25, "condition": "sunny"}
    model = ScriptedModel([prose, Reply(tool_calls=[Call(GR, answer)])],
                          profile=ModelProfile(native_output=native))
    agent = ReActAgent("c04", model)
    events = [e async for e in agent.stream("Weather in Hangzhou?", weather)]
    assert events[-1].output == weather(**answer)  # type: ignore[union-attr]
    assert [e.reason for e in events if isinstance(e, OutputRetry)] == ["degradation"]
    assert model.requests[0].options.response_format is not None
    assert model.requests[1].options.response_format is None
    assert GR in model.requests[1].tool_names


# --------------------------------------------------------------------------- C01


@pytest.mark.parametrize("profile", [SPECIFIC, AUTO_ONLY], ids=["forced", "reminder"])
async def test_c01_prose_instead_of_output_tool_never_succeeds_silently(
    profile: ModelProfile,
) -> None:
    answer = schema_of("C01")["Answer"]
    prose = json.loads(CASES["C01"]["raw_output"].split("  (finish_reason")[0])["content"]

    def lookup(q: str) -> str:
        return "Movie A, Movie B"

    model = ScriptedModel([prose] * 4, profile=profile)
    agent = ReActAgent("c01", model, tools=[lookup])
    reply = await agent.call("List top movies", answer)
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert info.value.raw_text == prose and info.value.attempts == 4
    forced = [r.options.tool_choice for r in model.requests[1:]]
    if profile is SPECIFIC:
        assert all(c is not None and c.name == GR for c in forced)
    else:
        assert forced == [None, None, None]
        assert all(any(m.metadata.get(STRUCTURED_OUTPUT_REMINDER) for m in r.messages)
                   for r in model.requests[1:])


async def test_c01_forcing_recovers() -> None:
    answer = schema_of("C01")["Answer"]
    model = ScriptedModel(
        ["Top movies: 1. Movie A  2. Movie B",
         Reply(tool_calls=[Call(GR, {"title": "Top", "items": ["Movie A", "Movie B"]})])],
        profile=SPECIFIC,
    )
    reply = await ReActAgent("c01", model).call("List", answer)
    assert reply.output.items == ["Movie A", "Movie B"]


# --------------------------------------------------------------------------- C02


async def test_c02_output_tool_called_per_item_is_retried_as_one_call() -> None:
    scores = schema_of("C02")["Scores"]
    raw = CASES["C02"]["raw_output"].split("\n")[0].removeprefix("tool_calls=")
    calls = [Call(GR, c["function"]["arguments"], c["id"]) for c in json.loads(raw)]
    whole = {"scores": [{"name": "A", "score": 7}, {"name": "B", "score": 4}]}
    model = ScriptedModel([Reply(tool_calls=calls), Reply(tool_calls=[Call(GR, whole)])],
                          profile=SPECIFIC.with_(parallel_tool_calls_flag=True))
    reply = await ReActAgent("c02", model).call("score them", scores)
    assert [s.name for s in reply.output.scores] == ["A", "B"]
    answered = model.requests[1].messages[-1].tool_results
    assert {r.tool_use_id for r in answered} == {"call_1", "call_2"}
    assert all(r.is_error and "exactly once" in r.output for r in answered)
    assert model.requests[0].options.parallel_tool_calls is False


@pytest.mark.parametrize("sep", ["", "\n", " "], ids=["glued", "newline", "space"])
async def test_c02_outputs_glued_into_one_call_are_not_read_as_the_last(sep: str) -> None:
    # The same fault in one call: a server folds the per-item calls into one
    # arguments string. Taking the last object would silently drop item A.
    scores = schema_of("C02")["Scores"]
    raw = CASES["C02"]["raw_output"].split("\n")[0].removeprefix("tool_calls=")
    glued = sep.join(c["function"]["arguments"] for c in json.loads(raw))
    whole = {"scores": [{"name": "A", "score": 7}, {"name": "B", "score": 4}]}
    model = ScriptedModel([Reply(tool_calls=[Call(GR, glued, "call_1")], chunk_size=5),
                           Reply(tool_calls=[Call(GR, whole)])], profile=SPECIFIC)
    reply = await ReActAgent("c02", model).call("score them", scores)
    assert [s.name for s in reply.output.scores] == ["A", "B"]
    answered = model.requests[1].messages[-1].tool_results
    assert len(answered) == 2 and answered[0].tool_use_id == "call_1"
    assert all(r.is_error and "exactly once" in r.output for r in answered)


async def test_c02_glued_calls_of_a_business_tool_both_run() -> None:
    seen: list[str] = []

    def lookup(q: str) -> str:
        seen.append(q)
        return q.upper()

    model = ScriptedModel([Reply(tool_calls=[Call("lookup", '{"q": "a"}{"q": "b"}')]), "done"])
    reply = await ReActAgent("c02", model, tools=[lookup]).call("look both up")
    assert reply.text == "done" and sorted(seen) == ["a", "b"]
    results = model.requests[1].messages[-1].tool_results
    assert sorted(r.output for r in results) == ["A", "B"]


async def test_c02_empty_output_object_is_a_validation_error() -> None:
    scores = schema_of("C02")["Scores"]
    model = ScriptedModel([Reply(tool_calls=[Call(GR, {}, "toolu_1")]),
                           Reply(tool_calls=[Call(GR, {"scores": []})])], profile=SPECIFIC)
    reply = await ReActAgent("c02", model).call("score", scores)
    assert reply.output.scores == []
    error = model.requests[1].messages[-1].tool_results[0]
    assert error.is_error and "scores: Field required" in error.output


# --------------------------------------------------------------------------- C05


async def test_c05_fenced_json_parses_without_spending_a_retry() -> None:
    label = type("LabelOutput", (BaseModel,), {"__annotations__": {"label": str, "reason": str}})
    raw = CASES["C05"]["raw_output"]
    assert parse_output(raw, OutputSpec.of(label)).label == "billing"
    for profile in (SPECIFIC, ModelProfile(supports_tools=False)):
        model = ScriptedModel([raw], profile=profile)
        events = [e async for e in ReActAgent("c05", model).stream("label it", label)]
        assert events[-1].output.label == "billing"
        assert not [e for e in events if isinstance(e, OutputRetry)]
        assert len(model.requests) == 1


# --------------------------------------------------------------------------- C08


async def test_c08_truncated_output_raises_truncation_without_retry() -> None:
    class ImageRef(BaseModel):
        url: str
        source: str

    class SearchResult(BaseModel):
        query: str
        results: list[ImageRef]

    raw = json.loads(CASES["C08"]["raw_output"])["choices"][0]
    content = raw["message"]["content"]
    model = ScriptedModel([Reply(text=content, finish_reason="length", chunk_size=10)],
                          profile=ModelProfile(native_output="json_schema"))
    agent = ReActAgent("c08", model)
    events = []
    with pytest.raises(OutputTruncatedError) as info:  # the stream never ends without it
        async for event in agent.stream("search", SearchResult):
            events.append(event)
    assert events and not any(e.type == "complete" for e in events)
    assert info.value.raw_text == content and info.value.usage is not None
    assert len(model.requests) == 1  # the truncated text is never sent back for repair


# --------------------------------------------------------------------------- C09


async def test_c09_empty_arguments_string() -> None:
    state = AgentState()
    report = schema_of("C09")["Report"]

    def get_time() -> str:
        return "12:00"

    raw = json.loads(CASES["C09"]["raw_output"])["tool_calls"][0]
    model = ScriptedModel(
        [
            Reply(tool_calls=[Call(raw["function"]["name"], raw["function"]["arguments"])]),
            Reply(tool_calls=[Call(GR, "")]),
            Reply(tool_calls=[Call(GR, {"summary": "it is noon"})]),
        ],
        profile=SPECIFIC,
    )
    agent = ReActAgent("c09", model, tools=[get_time])
    reply = await agent.call("time?", report, state=state)
    assert reply.output.summary == "it is noon"
    tool_result = model.requests[1].messages[-1].tool_results[0]
    assert tool_result.output == "12:00" and not tool_result.is_error
    stored_call = next(c for m in state.memory for c in m.tool_uses)
    assert stored_call.input == {}  # normalized: replays never carry ""
    error = model.requests[2].messages[-1].tool_results[0]
    assert error.is_error and "summary: Field required" in error.output


# --------------------------------------------------------------------------- C13/C14/C15


def test_c13_c14_c15_strict_schemas_are_sent_strict() -> None:
    class Test(BaseModel):
        name: str
        age: int

    for tp in (Test,):
        schema = OutputSpec.of(tp).schema_for("openai_strict").schema
        assert schema["additionalProperties"] is False
        assert schema["required"] == ["name", "age"]
    c14 = CASES["C14"]["json_schema"]
    assert c14["properties"]["is_admin"]["default"] is False  # what the case sent
    # (covered in depth by tests/test_output_schema.py)


# --------------------------------------------------------------------------- C19


def test_c19_tool_names() -> None:
    namespace = schema_of("C19")
    order = next(v for k, v in namespace.items() if isinstance(v, type) and k != "BaseModel"
                 and issubclass(v, BaseModel))
    spec = OutputSpec.of(order)
    assert TOOL_NAME_PATTERN.fullmatch(spec.name)  # derived names are sanitized
    assert spec.name != OutputSpec.of(type("其他摘要", (BaseModel,), {"__annotations__": {
        "x": int}})).name  # and stay distinct

    def f(a: str) -> str:
        return a

    with pytest.raises(ToolNameError, match="my tool!"):
        Tool.from_function(f, name="my tool!")
    with pytest.raises(ToolNameError):
        Tool.from_function(f, name="x" * 71)


# --------------------------------------------------------------------------- C27


async def test_c27_coercible_wrong_type() -> None:
    add_args = schema_of("C27")["AddArgs"]

    def add_two_numbers(a: int, b: int) -> int:
        return a + b

    raw = json.loads(CASES["C27"]["raw_output"])["message"]["tool_calls"][0]["function"]
    model = ScriptedModel(
        [Reply(tool_calls=[Call(raw["name"], raw["arguments"])]),
         Reply(tool_calls=[Call(GR, {"a": "thirty", "b": "12"})]),
         Reply(tool_calls=[Call(GR, {"a": "30", "b": 12})])],
        profile=SPECIFIC,
    )
    reply = await ReActAgent("c27", model, tools=[add_two_numbers]).call("30 plus 12?", add_args)
    assert model.requests[1].messages[-1].tool_results[0].output == "42"
    retry = model.requests[2].messages[-1].tool_results[0]
    assert retry.is_error and "a:" in retry.output
    assert reply.output == add_args(a=30, b=12)


# --------------------------------------------------------------------------- C29


async def test_c29_reminders_and_attempts_never_leak_into_memory() -> None:
    state = AgentState()
    summary = schema_of("C29")["OrderSummary"]
    model = ScriptedModel(
        ["Order 42 contains 3 items.",
         Reply(tool_calls=[Call(GR, {"order_id": 42, "item_count": 3})]),
         "Anything else?"],
        profile=AUTO_ONLY,
    )
    agent = ReActAgent("c29", model)
    await agent.call("Summarize order 42", summary, state=state)
    memory = state.memory
    non_reminder = [m for m in memory if not m.metadata.get(STRUCTURED_OUTPUT_REMINDER)]
    assert [(m.role, m.text) for m in non_reminder] == [
        ("user", "Summarize order 42"),
        ("assistant", '{"order_id":42,"item_count":3}'),
    ]
    await agent.call("thanks", state=state)
    nxt = model.requests[-1]
    assert nxt.options.tool_choice is None
    assert not [m for m in nxt.messages if "You have not called" in m.text]
    assert GR not in nxt.tool_names


async def test_c29_rollback_on_exception_mid_call() -> None:
    state = AgentState()
    summary = schema_of("C29")["OrderSummary"]
    model = ScriptedModel(["prose", Reply(error=RuntimeError("boom"))], profile=AUTO_ONLY)
    agent = ReActAgent("c29", model)
    before = state.to_json()
    with pytest.raises(RuntimeError):
        await agent.call("Summarize", summary, state=state)
    assert state.to_json() == before


# --------------------------------------------------------------------------- C30


async def test_c30_concurrent_runs_do_not_share_state() -> None:
    finding = schema_of("C30")["Finding"]
    seen: dict[str, list[str]] = {}

    def answer(request: RecordedRequest) -> Reply:
        user = next(m.text for m in request.messages if m.role == "user")
        topic = user.removeprefix("Research topic ")
        seen.setdefault(topic, []).extend(m.text for m in request.messages)
        return Reply(tool_calls=[Call(GR, {"topic": topic, "summary": f"about {topic}"})],
                     delay=0.005)

    model = FunctionModel(answer, profile=SPECIFIC)
    agent = ReActAgent("c30", model)
    out: dict[str, Any] = {}

    async def one(topic: str) -> None:
        state = AgentState()
        out[topic] = (await agent.call(f"Research topic {topic}", finding, state=state)).output

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "A")
        tg.start_soon(one, "B")
    assert out["A"].topic == "A" and out["B"].topic == "B"
    assert not any("topic B" in t for t in seen["A"])
    assert not any("topic A" in t for t in seen["B"])
    assert not hasattr(agent, "state")  # the agent holds no conversation of its own
    assert orjson.loads(AgentState().to_json())["memory"] == []


async def test_c08_cut_output_call_relabelled_tool_calls_is_never_repaired_into_success() -> None:
    """Issue 32: C08's cut, on the tool path, with the finish reason a router
    rewrote (``tool_calls``): the closers are not invented; the model is asked again."""
    class ImageRef(BaseModel):
        url: str
        source: str

    class SearchResult(BaseModel):
        query: str
        results: list[ImageRef]

    content = json.loads(CASES["C08"]["raw_output"])["choices"][0]["message"]["content"]
    cut = content[: content.rindex("}") + 1]  # a whole first item, the list left open
    whole = {"query": "family photos", "results": [
        {"url": "https://example.com/1.jpg", "source": "Stock"},
        {"url": "https://example.com/2.jpg", "source": "Stock"}]}
    model = ScriptedModel([Reply(tool_calls=[Call(GR, cut)], finish_reason="tool_calls"),
                           Reply(tool_calls=[Call(GR, whole)])], profile=SPECIFIC)
    reply = await ReActAgent("c08t", model).call("search", SearchResult)
    assert reply.output == SearchResult.model_validate(whole)
    assert len(model.requests) == 2


# --------------------------------------------------------------------------- C16 (issue 32)


def test_c16_gemini_schemas_keep_to_the_subset_and_unions_stand_alone() -> None:
    """C16's models in the Gemini dialect: a $def used twice is inlined (no
    recursion), a tree keeps JSON Schema for the JSON-schema field, and (issue
    32) an optional union of several types is anyOf alone, its nullability in
    each branch: each passes the Gemini fake's subset check."""
    from agentflow.output.dialects import transform_schema
    from tests.fakes.gemini import _schema_refusal

    ns = schema_of("C16")
    chart_model: Any = ns["Chart"]

    class Reading(BaseModel):
        value: str | int | None = None
        chart: chart_model | None = None  # type: ignore[valid-type]

    chart = transform_schema(ns["Chart"].model_json_schema(), "gemini").schema
    assert "$defs" not in json.dumps(chart) and "$ref" not in json.dumps(chart)
    reading = transform_schema(Reading.model_json_schema(), "gemini").schema
    for schema in (chart, reading):
        assert _schema_refusal(schema, "generation_config.response_schema") is None
    branches = reading["properties"]["value"]["anyOf"]
    assert list(reading["properties"]["value"]) == ["anyOf"]
    assert all(b.get("nullable") is True for b in branches)
    tree = transform_schema(ns["Node"].model_json_schema(), "gemini").schema
    assert "$defs" in tree  # sent as JSON Schema (responseJsonSchema), not the subset
