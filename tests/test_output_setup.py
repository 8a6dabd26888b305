"""The set-up of an output call (``agentflow.middleware.output_setup``): made
once for the calls that ask the same, made again when a setting changes."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import UnsupportedFeatureError
from agentflow.grounding import Grounded
from agentflow.model import ModelProfile
from agentflow.output.examples import Example
from agentflow.testing import Call, Reply, ScriptedModel

NATIVE = ModelProfile(native_output="json_schema", schema_dialect="openai_strict")


class City(BaseModel):
    name: str


class Country(BaseModel):
    name: str


def lookup(city: str) -> str:
    """Look a city up."""
    return city


def _agent(replies: list[str | Reply], **kw: object) -> tuple[ReActAgent, ScriptedModel]:
    model = ScriptedModel(replies, profile=NATIVE)
    return ReActAgent("a", model, **kw), model  # type: ignore[arg-type]


async def test_calls_that_ask_the_same_share_one_set_up() -> None:
    agent, _ = _agent(['{"name": "Oslo"}'] * 3)
    engine = agent.structured_output
    first = await agent.call("Oslo", City)
    setup = engine._setup
    assert setup is not None and setup.output_type is City and setup.kind == "native"
    second = await agent.call("Oslo", City)
    assert engine._setup is setup  # taken, not made again
    assert first.output == second.output == City(name="Oslo")
    third = await agent.call("Oslo", City, ground=True)  # another ground=: a new set-up
    assert engine._setup is not setup and engine._setup is not None
    assert engine._setup.grounded and third.output == City(name="Oslo")


async def test_another_output_type_tools_or_strategy_make_a_new_set_up() -> None:
    agent, model = _agent(['{"name": "Oslo"}', '{"name": "Norway"}',
                           Reply(tool_calls=[Call("generate_response", {"name": "Oslo"})])])
    engine = agent.structured_output
    await agent.call("Oslo", City)
    city = engine._setup
    assert (await agent.call("Norway", Country)).output == Country(name="Norway")
    assert engine._setup is not city and engine._setup is not None
    assert engine._setup.output_type is Country
    country = engine._setup
    assert (await agent.call("Oslo", City, strategy="tool")).output == City(name="Oslo")
    assert engine._setup is not country and engine._setup is not None
    assert engine._setup.kind == "tool"
    assert "generate_response" in model.requests[-1].tool_names

    tooled, _ = _agent(['{"name": "Oslo"}'], tools=[lookup])
    await tooled.call("Oslo", City)
    assert tooled.structured_output._setup is not None
    assert tooled.structured_output._setup.has_tools


async def test_examples_in_a_list_are_read_at_each_call() -> None:
    agent, model = _agent(['{"name": "Oslo"}'] * 2)
    examples = [Example("Bergen is wet.", {"name": "Bergen"})]
    await agent.call("Oslo", City, examples=examples)
    examples[0] = Example("Rome is old.", {"name": "Rome"})  # edited between the calls
    await agent.call("Oslo", City, examples=examples)
    shown = [m.text for m in model.requests[-1].messages if m.role == "user"]
    assert "Rome is old." in shown and "Bergen is wet." not in shown


async def test_examples_in_a_tuple_are_shown_from_one_set_up() -> None:
    agent, model = _agent(['{"name": "Oslo"}'] * 2)
    examples = (Example("Bergen is wet.", {"name": "Bergen"}),)
    await agent.call("Oslo", City, examples=examples)
    setup = agent.structured_output._setup
    await agent.call("Oslo", City, examples=examples)
    assert agent.structured_output._setup is setup
    for request in model.requests:
        assert [m.text for m in request.messages if m.role == "user"] == [
            "Bergen is wet.", "Oslo"]


async def test_an_output_edited_in_place_changes_no_example_nor_set_up() -> None:
    """An example is a value taken when made: the dict given, or the one read
    back, edited in place, changes neither the example nor the set-up shown
    (the set-up was keyed by the examples' identity: the edit of the dict
    given was shown by no set-up and an example read back differed from it)."""
    agent, model = _agent(['{"name": "Oslo"}'] * 3)
    given = {"name": "Bergen"}
    example = Example("Bergen is wet.", given)
    examples = (example,)
    await agent.call("Oslo", City, examples=examples)
    setup = agent.structured_output._setup
    given["name"] = "Rome"
    example.output["name"] = "Rome"
    assert example.output == {"name": "Bergen"} and example == Example("Bergen is wet.", given | {
        "name": "Bergen"})
    await agent.call("Oslo", City, examples=examples)
    assert agent.structured_output._setup is setup
    await agent.call("Oslo", City, examples=[Example("Bergen is wet.", given)])  # Rome: new
    assert agent.structured_output._setup is not setup
    answers = [m.text for r in model.requests for m in r.messages if m.role == "assistant"]
    assert answers == ['{"name": "Bergen"}'] * 2 + ['{"name": "Rome"}']


async def test_equal_examples_in_a_new_list_share_the_set_up() -> None:
    agent, _ = _agent(['{"name": "Oslo"}'] * 2)
    await agent.call("Oslo", City, examples=[Example("Bergen is wet.", {"name": "Bergen"})])
    setup = agent.structured_output._setup
    await agent.call("Oslo", City, examples=[Example("Bergen is wet.", {"name": "Bergen"})])
    assert agent.structured_output._setup is setup


async def test_a_refusal_makes_the_next_set_up_with_the_step_down() -> None:
    refusal = UnsupportedFeatureError("no json_schema here", feature="native_output",
                                      status=400, vendor="scripted")
    agent, model = _agent([
        '{"name": "Oslo"}',
        Reply(error=refusal),
        Reply(tool_calls=[Call("generate_response", {"name": "Oslo"})]),
        Reply(tool_calls=[Call("generate_response", {"name": "Bergen"})]),
    ])
    engine = agent.structured_output
    await agent.call("Oslo", City)
    native = engine._setup
    assert native is not None and native.kind == "native"
    assert (await agent.call("Oslo", City)).output == City(name="Oslo")  # stepped down
    assert (await agent.call("Bergen", City)).output == City(name="Bergen")
    assert engine._setup is not native and engine._setup is not None
    assert engine._setup.kind == "tool"
    assert "generate_response" in model.requests[-1].tool_names


async def test_a_grounded_marker_default_is_one_object_per_set_up() -> None:
    agent, _ = _agent(['{"name": "Oslo"}'] * 2)
    marker = Grounded(case_sensitive=False)
    await agent.call("OSLO", City, ground=marker)
    setup = agent.structured_output._setup
    assert setup is not None and setup.ground is marker
    await agent.call("OSLO", City, ground=marker)
    assert agent.structured_output._setup is setup
