"""Few-shot examples: checked against the output type and their own text at
set-up, shown to the model as user/assistant pairs before the call's input
(never stored in memory), counted in the long-document budget, and read from
a schema module's ``EXAMPLES`` by the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import orjson
import pytest
from pydantic import BaseModel, Field, RootModel, computed_field, model_validator

from agentflow import Example, InvalidExampleError, OutputConfig, ReActAgent
from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.extraction.pipeline import plan_extraction, prompt_overhead
from agentflow.grounding import Grounded
from agentflow.model import ModelProfile
from agentflow.output.examples import (
    check_examples,
    example_messages,
    examples_text,
    output_json,
)
from agentflow.state import AgentState
from agentflow.testing import FunctionModel, RecordedRequest
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

G = Grounded()


class Entry(BaseModel):
    """A release line."""

    package: Annotated[str, G]
    version: Annotated[str, G] = Field(alias="ver")
    urgency: Literal["low", "high"]
    changes: list[Annotated[str, G]]


TEXT = "zoë-tool (1.0-2) unstable; urgency=low\n  * Fix the «quote» parser.\n  * New upstream."
GOOD = Entry(package="zoë-tool", ver="1.0-2", urgency="low",
             changes=["Fix the «quote» parser.", "New upstream."])
NATIVE = ModelProfile(native_output="json_schema")


def answer(doc: str) -> str:
    """A model that copies the first word of the document as the package."""
    return json.dumps({"package": doc.split()[0], "ver": "2.0", "urgency": "high",
                       "changes": ["Other."]})


DOC = "acme (2.0) unstable; urgency=high\n  * Other."


# ----------------------------------------------------------------------------- checking


def test_check_accepts_an_instance_or_a_dict_and_validates_it() -> None:
    checked = check_examples(
        [Example(TEXT, GOOD), Example(TEXT, GOOD.model_dump(by_alias=True))], Entry)
    assert [c.value for c in checked] == [GOOD, GOOD]
    assert all(isinstance(c.value, Entry) for c in checked)


def test_an_output_that_does_not_validate_is_named_with_its_field() -> None:
    bad = {**GOOD.model_dump(by_alias=True), "urgency": "soon"}
    with pytest.raises(InvalidExampleError, match=r"examples\[1\]: .*Entry.*urgency"):
        check_examples([Example(TEXT, GOOD), Example(TEXT, bad)], Entry)


def test_an_unvalidated_instance_is_validated_again() -> None:
    built = Entry.model_construct(package="zoë-tool", version="1.0-2", urgency="soon",
                                  changes=[])
    with pytest.raises(InvalidExampleError, match="urgency"):
        check_examples([Example(TEXT, built)], Entry)


def test_a_key_the_schema_does_not_have_is_refused_not_dropped() -> None:
    typo = {**GOOD.model_dump(by_alias=True), "vresion": "1.0-2"}
    with pytest.raises(InvalidExampleError, match=r"examples\[0\]: .*vresion.*Extra inputs"):
        check_examples([Example(TEXT, typo)], Entry)


def test_an_unknown_key_at_depth_is_refused_too() -> None:
    class Person(BaseModel):
        name: str

    class Team(BaseModel):
        lead: Person

    with pytest.raises(InvalidExampleError, match=r"lead\.nmae"):
        check_examples([Example("Ada leads.", {"lead": {"name": "Ada", "nmae": "Ada"}})], Team)


def test_a_model_that_allows_extra_keys_keeps_them() -> None:
    class Loose(BaseModel, extra="allow"):
        title: str

    (checked,) = check_examples([Example("A note.", {"title": "A note", "tag": "x"})], Loose)
    assert checked.value.tag == "x"


def test_a_model_that_sets_extra_itself_is_validated_as_it_says_at_its_depth() -> None:
    """Only a model that leaves ``extra`` unset is strict in an example; an
    explicit ``extra="ignore"`` drops the key, ``"allow"`` keeps it, each at
    its own depth (a nested default model is still strict)."""
    class Tolerant(BaseModel, extra="ignore"):
        name: str

    class Strict(BaseModel):
        name: str

    class Team(BaseModel):
        lead: Tolerant
        members: list[Tolerant | None] = []
        deputy: Strict | None = None
        by_role: dict[str, Tolerant] = {}

    data = {"lead": {"name": "Ada", "note": "x"}, "members": [{"name": "Bob", "age": 3}],
            "by_role": {"chair": {"name": "Cy", "seat": 1}}}
    (checked,) = check_examples([Example("Ada Bob Cy", data)], Team)
    assert checked.value.lead == Tolerant(name="Ada")
    assert checked.value.by_role["chair"] == Tolerant(name="Cy")
    with pytest.raises(InvalidExampleError, match=r"deputy\.nmae: Extra inputs") as raised:
        check_examples([Example("Ada Cy", {"lead": {"name": "Ada"},
                                           "deputy": {"name": "Cy", "nmae": "Cy"}})], Team)
    assert "lead" not in str(raised.value)
    with pytest.raises(InvalidExampleError, match=r"examples\[0\]: .*tema: Extra inputs"):
        check_examples([Example("Ada", {"lead": {"name": "Ada"}, "tema": 1})], Team)

    class Inherits(Tolerant):  # a base class's explicit config counts
        pass

    (kept,) = check_examples([Example("Ada", {"name": "Ada", "x": 1})], Inherits)
    assert kept.value == Inherits(name="Ada")


def test_an_examples_numbers_and_dates_must_be_written_in_its_text() -> None:
    """Under a ground default an example is held to what documents are: a
    number or date its text does not write teaches the model to invent one."""
    import datetime as dt

    from agentflow import Derived

    class Release(BaseModel):
        name: str
        year: int
        day: dt.date | None = None
        pages: Annotated[int, Derived()] = 0  # computed: never checked

    text = "Cryptix 3 (released 5 March 2024), 1,200 downloads in 2024"
    ok = Example(text, {"name": "Cryptix", "year": 2024, "day": "2024-03-05", "pages": 7})
    assert check_examples([ok], Release, Grounded())[0].value.pages == 7
    invented = Example(text, {"name": "Cryptix", "year": 1999, "day": "2024-03-06"})
    with pytest.raises(InvalidExampleError) as raised:
        check_examples([ok, invented], Release, Grounded())
    message = str(raised.value)
    assert message.startswith("examples[1]: ")
    assert "year=1999 is not written in the example's text" in message
    assert "day=2024-03-06 is not written in the example's text" in message
    assert check_examples([invented], Release)  # no ground default: nothing to hold it to


def test_an_instance_is_read_by_its_fields_whatever_its_dump_looks_like() -> None:
    """Computed fields, a serialization alias unlike the validation alias, an
    excluded field and a root model: a valid instance is a valid example."""
    class Person(BaseModel):
        first: str
        last: str = Field(validation_alias="surname", serialization_alias="family")
        note: str = Field(exclude=True)

        @computed_field  # type: ignore[prop-decorator]
        @property
        def full(self) -> str:
            return f"{self.first} {self.last}"

    class Names(RootModel[list[str]]):
        pass

    ada = Person(first="Ada", surname="Lovelace", note="x")
    (checked,) = check_examples([Example("Ada Lovelace x", ada)], Person)
    assert checked.value == ada
    (names,) = check_examples([Example("Ada Bob", Names(["Ada", "Bob"]))], Names)
    assert names.value.root == ["Ada", "Bob"]


def test_an_instance_of_another_model_is_refused() -> None:
    class Other(BaseModel):
        package: str

    with pytest.raises(InvalidExampleError,
                       match=r"examples\[0\]: the output is a Other; expected a Entry"):
        check_examples([Example(TEXT, Other(package="zoë-tool"))], Entry)


def test_a_grounded_value_must_be_a_span_of_the_examples_own_text() -> None:
    invented = GOOD.model_copy(update={"changes": ["Fix the parser."]})
    with pytest.raises(InvalidExampleError,
                       match=r"examples\[0\]: .*changes\[0\]='Fix the parser.' is not in"):
        check_examples([Example(TEXT, invented)], Entry)


def test_a_ground_default_grounds_unmarked_strings_of_examples_too() -> None:
    class Note(BaseModel):
        title: str

    example = Example("A note about cats.", Note(title="dogs"))
    assert check_examples([example], Note)  # not grounded: anything goes
    with pytest.raises(InvalidExampleError, match="title='dogs'"):
        check_examples([example], Note, Grounded())


@pytest.mark.parametrize("examples, message", [
    (["just text"], r"examples\[0\] is a str; expected Example"),
    ([Example("  ", GOOD)], r"examples\[0\]: the text is empty"),
    (Example(TEXT, GOOD), "examples must be a list of Example"),
])
def test_misuse_is_a_typed_error(examples: Any, message: str) -> None:
    with pytest.raises(InvalidExampleError, match=message):
        check_examples(examples, Entry)


# ----------------------------------------------------------------------------- rendering


def test_rendered_as_user_and_assistant_pairs_in_the_json_form_of_an_answer() -> None:
    messages = example_messages(check_examples([Example(TEXT, GOOD)], Entry), Entry)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].text == TEXT
    assert messages[1].text == (
        '{"package": "zoë-tool", "ver": "1.0-2", "urgency": "low", '
        '"changes": ["Fix the «quote» parser.", "New upstream."]}')
    assert output_json(GOOD, Entry) == messages[1].text


# ----------------------------------------------------------------------------- the engine


async def test_examples_go_before_the_input_of_every_request_and_never_into_memory() -> None:
    seen: list[RecordedRequest] = []

    def reply(request: RecordedRequest) -> str:
        seen.append(request)
        return answer(request.messages[-1].text)

    agent = ReActAgent("x", FunctionModel(reply, profile=NATIVE), sys_prompt="Copy fields.")
    state = AgentState()
    out = await agent.call(DOC, Entry, state=state, examples=[Example(TEXT, GOOD)])
    assert out.output.package == "acme"
    [request] = seen
    roles = [(m.role, m.text) for m in request.messages]
    assert roles[0] == ("system", "Copy fields.")
    assert roles[1:] == [("user", TEXT), ("assistant", output_json(GOOD, Entry)), ("user", DOC)]
    assert all(TEXT not in m.text for m in state.memory)


async def test_a_bad_example_fails_the_call_before_any_request() -> None:
    model = FunctionModel(lambda r: answer(DOC), profile=NATIVE)
    agent = ReActAgent("x", model)
    invented = GOOD.model_copy(update={"package": "other"})
    with pytest.raises(InvalidExampleError, match="package='other'"):
        await agent.call(DOC, Entry, examples=[Example(TEXT, invented)])
    assert model.requests == []


async def test_output_config_examples_apply_and_a_call_overrides_them() -> None:
    model = FunctionModel(lambda r: answer(r.messages[-1].text), profile=NATIVE)
    agent = ReActAgent("x", model, output=OutputConfig(examples=(Example(TEXT, GOOD),)))
    await agent.call(DOC, Entry, state=AgentState())
    await agent.call(DOC, Entry, state=AgentState(), examples=[])
    assert [len(r.messages) for r in model.requests] == [3, 1]


async def test_the_tool_strategy_shows_the_same_pairs() -> None:
    from agentflow.testing import Call, Reply

    def reply(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", json.loads(answer(DOC)))])

    model = FunctionModel(reply, profile=ModelProfile(supports_tools=True))
    agent = ReActAgent("x", model)
    await agent.call(DOC, Entry, examples=[Example(TEXT, GOOD)])
    texts = [m.text for m in model.requests[0].messages]
    assert texts.index(TEXT) < texts.index(DOC)


async def test_extract_many_shows_examples_and_refuses_a_bad_one_up_front() -> None:
    model = FunctionModel(lambda r: answer(r.messages[-1].text), profile=NATIVE)
    results = [r async for r in extract_many(
        model, [DOC, DOC.replace("acme", "beta")], Entry, examples=[Example(TEXT, GOOD)])]
    assert [r.output.package for r in results] == ["acme", "beta"]
    assert all(r.messages[0].text == TEXT for r in model.requests)
    invented = GOOD.model_copy(update={"package": "other"})
    with pytest.raises(InvalidExampleError, match=r"examples\[0\]"):
        async for _ in extract_many(model, [DOC], Entry, examples=[Example(TEXT, invented)]):
            pass
    assert len(model.requests) == 2  # nothing more was asked


async def test_the_long_document_budget_counts_the_examples() -> None:
    agent = ReActAgent("x", FunctionModel(lambda r: "{}", profile=NATIVE))
    shown = examples_text(check_examples([Example(TEXT, GOOD)] * 3, Entry), Entry)
    assert await prompt_overhead(agent, Entry, shown) > await prompt_overhead(agent, Entry)


# ----------------------------------------------------------------------------- CLI


SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel
from agentflow import Example, Grounded

class Person(BaseModel):
    name: Annotated[str, Grounded()]

EXAMPLES = [Example("Name: Zed Q", Person(name={name!r}))]
'''


async def test_cli_reads_examples_from_the_schema_module(tmp_path: Path) -> None:
    (tmp_path / "schema.py").write_text(SCHEMA.format(name="Zed Q"))
    (tmp_path / "a.txt").write_text("Name: Ann Lee")
    bodies: list[Any] = []

    def reply(body: Any) -> FakeReply:
        bodies.append(body)
        return FakeReply(text=orjson.dumps({"name": "Ann Lee"}).decode())

    async with OpenAIFake() as fake:
        fake.default = reply
        status = await anyio.to_thread.run_sync(main, [
            "extract", "--schema", f"{tmp_path / 'schema.py'}:Person",
            "--input", str(tmp_path / "a.txt"), "--model", "openai:gpt-4o-mini",
            "--base-url", fake.url, "--api-key", "k", "--out", str(tmp_path / "o.jsonl")])
    assert status == 0
    contents = [(m["role"], m["content"]) for m in bodies[0]["messages"]]
    assert ("user", "Name: Zed Q") in contents
    assert ("assistant", '{"name": "Zed Q"}') in contents
    assert contents[-1] == ("user", "Name: Ann Lee")


def test_cli_refuses_a_bad_example_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schema.py").write_text(SCHEMA.format(name="Ann"))
    (tmp_path / "a.txt").write_text("Name: Ann Lee")
    status = main(["extract", "--schema", f"{tmp_path / 'schema.py'}:Person",
                   "--input", str(tmp_path / "a.txt"), "--model", "openai:gpt-4o-mini",
                   "--base-url", "http://127.0.0.1:9", "--api-key", "k"])
    assert status == 2
    assert "EXAMPLES: examples[0]: grounded values must be copied" in capsys.readouterr().err


async def test_a_run_checks_its_examples_in_its_plan_only() -> None:
    """The plan checks a run's examples and gives them checked to each call's
    set-up (``CheckedExamples``): the output type's own validators run on an
    example in the plan only (the set-up checked them again: two owners)."""
    seen: list[str] = []

    class Counted(BaseModel):
        package: Annotated[str, G]

        @model_validator(mode="after")
        def count(self) -> Counted:
            if self.package == "zoë-tool":  # the example's value, not a reply's
                seen.append(self.package)
            return self

    model = FunctionModel(lambda r: json.dumps({"package": r.messages[-1].text.split()[0]}),
                          profile=NATIVE)
    examples = [Example(TEXT, {"package": "zoë-tool"})]
    plan_extraction(ReActAgent("x", model), Counted, chunking=None, passes=1,
                    allow_partial=False, max_chars=None, on_progress=None, ground=None,
                    examples=examples)
    planned, seen[:] = len(seen), []
    assert planned
    results = [r async for r in extract_many(
        model, [DOC, DOC.replace("acme", "beta")], Counted, examples=examples)]
    assert [r.output.package for r in results] == ["acme", "beta"]
    assert len(seen) == planned
