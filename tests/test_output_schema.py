"""Output types -> JSON Schema per dialect, and validation back to the user's type."""

from __future__ import annotations

import dataclasses
import enum
import sys
import typing
from datetime import date
from typing import Annotated, Any, Literal

import orjson
import pytest
from pydantic import BaseModel, Field, RootModel, ValidationError
from typing_extensions import TypedDict

from agentflow.errors import SchemaError
from agentflow.output.schema import OutputSpec


class Address(BaseModel):
    street: str
    city: str = Field(description="city name")


class Person(BaseModel):
    """A person."""

    name: str = Field(alias="fullName")
    age: int | None = None
    tags: list[str] = []
    home: Address
    extra: dict[str, int] = {}


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Axis(BaseModel):
    label: str


class Chart(BaseModel):
    x_axis: Axis
    y_axis: Axis


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2


class Paint(BaseModel):
    color: Color
    size: Literal[1, 2, 3]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def walk(node: Any) -> list[dict[str, Any]]:
    """Every dict node of a schema."""
    out = []
    if isinstance(node, dict):
        out.append(node)
        for v in node.values():
            out.extend(walk(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(walk(v))
    return out


def test_object_types_are_not_wrapped_and_others_are() -> None:
    for tp in (Person, Point, Movie):
        assert not OutputSpec.of(tp).wrapped
    for tp in (list[Person], Literal["a", "b"], Color, int, str, Person | Point, dict[str, int]):
        spec = OutputSpec.of(tp)
        assert spec.wrapped
        assert spec.plain_schema["required"] == ["result"]


def test_wrapped_values_unwrap_on_validate() -> None:
    assert OutputSpec.of(list[Axis]).validate({"result": [{"label": "x"}]}) == [Axis(label="x")]
    assert OutputSpec.of(int).validate({"result": "42"}) == 42
    assert OutputSpec.of(Literal["a", "b"]).validate({"result": "b"}) == "b"
    assert OutputSpec.of(Color).validate({"result": 2}) is Color.GREEN


class Numbers(RootModel[list[int]]):
    pass


class PersonRoot(RootModel[Person]):
    pass


class Counts(RootModel[dict[str, int]]):
    pass


def test_a_root_model_is_wrapped_unless_its_root_is_an_object_type() -> None:
    # every vendor wants an object at the root of tool arguments and strict response
    # formats: an array-rooted RootModel sent as it is costs a 400 per strategy step
    assert not OutputSpec.of(PersonRoot).wrapped
    for tp, data, expected in ((Numbers, {"result": [1, "2"]}, Numbers([1, 2])),
                               (Counts, {"result": {"a": 1}}, Counts({"a": 1}))):
        spec = OutputSpec.of(tp)
        assert spec.wrapped
        for dialect in ("plain", "openai_strict", "gemini"):
            assert spec.schema_for(dialect).schema["type"] == "object"
        assert spec.validate(data) == expected
        assert orjson.loads(spec.dump_json(expected)) == orjson.loads(
            orjson.dumps(expected.model_dump()))


@pytest.mark.parametrize(("value", "hint"), [
    (Node(name="Ada"), "pass the class, Node, not an instance"),  # was "unhashable"
    ({"type": "object"}, "json_schema_output"),
    ("Person", "not its name"),
    (lambda x: x, "function"),  # was taken: pydantic validated the output by calling it
    (42, "int"),
])
def test_a_value_that_is_not_a_type_is_a_schema_error_naming_the_fix(value: Any,
                                                                      hint: str) -> None:
    with pytest.raises(SchemaError, match="the output type must be a type") as info:
        OutputSpec.of(value)
    assert hint in str(info.value)


def test_type_forms_that_are_not_classes_are_still_output_types() -> None:
    user_id = typing.NewType("user_id", int)
    for tp in (list[Person], int | None, Literal["a"], Annotated[int, Field(ge=0)], user_id,
               typing.Union[str, int]):  # noqa: UP007 - the typing form, not the | one
        assert OutputSpec.of(tp).wrapped


def test_spec_is_cached_per_type_and_dialect() -> None:
    spec = OutputSpec.of(Person)
    assert OutputSpec.of(Person) is spec
    assert spec.schema_for("openai_strict") is spec.schema_for("openai_strict")


def test_response_format_is_one_object_per_dialect() -> None:
    spec = OutputSpec.of(Person)
    rf = spec.response_format("openai_strict")
    assert spec.response_format("openai_strict") is rf
    strict = spec.schema_for("openai_strict")
    assert (rf.type, rf.schema, rf.name, rf.strict) == ("json_schema", strict.schema, spec.name,
                                                        strict.strict)
    assert rf.description == spec.description
    assert spec.response_format("plain") is not rf
    assert spec.response_format("plain").schema == spec.plain_schema


def test_tool_spec_is_one_object_per_name_dialect_and_lead() -> None:
    spec = OutputSpec.of(Person)
    tool = spec.tool_spec("answer", "openai_strict", "Answer with this.")
    assert spec.tool_spec("answer", "openai_strict", "Answer with this.") is tool
    strict = spec.schema_for("openai_strict")
    assert (tool.name, tool.parameters, tool.strict) == ("answer", strict.schema, strict.strict)
    assert tool.description == "Answer with this. The answer is: A person."
    assert spec.tool_spec("answer", "plain", "Answer with this.") is not tool
    assert spec.tool_spec("answer", "plain", "Answer with this.").parameters == spec.plain_schema
    assert spec.tool_spec("other", "openai_strict", "Answer with this.").name == "other"
    assert OutputSpec.of(Address).tool_spec("a", "plain", "Lead.").description == "Lead."


def test_alias_and_description_survive_every_dialect() -> None:
    spec = OutputSpec.of(Person)
    for dialect in ("plain", "openai_strict", "gemini", "local"):
        text = str(spec.schema_for(dialect).schema)
        assert "fullName" in text
        assert "city name" in text
    assert spec.validate({"fullName": "Ann", "home": {"street": "a", "city": "b"}}).name == "Ann"


def test_openai_strict_closes_every_object_and_requires_every_property() -> None:
    # C13 / C14: additionalProperties false and every key required, optional ones nullable,
    # defaults stripped.
    class User(BaseModel):
        name: str
        age: int
        is_admin: bool = False
        nickname: str | None = None
        address: Address | None = None

    ds = OutputSpec.of(User).schema_for("openai_strict")
    assert ds.strict
    for node in walk(ds.schema):
        assert "default" not in node
        assert "title" not in node
        if node.get("type") == "object" or "properties" in node:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
    props = ds.schema["properties"]
    assert props["is_admin"]["type"] == ["boolean", "null"]
    assert {"type": "null"} in props["nickname"]["anyOf"]
    assert {"type": "null"} in props["address"]["anyOf"]
    # C14: null for a defaulted field maps back to the pydantic default
    user = OutputSpec.of(User).validate(
        {"name": "Ann", "age": 27, "is_admin": None, "nickname": None, "address": None}
    )
    assert user == User(name="Ann", age=27, is_admin=False, nickname=None)


def test_openai_strict_rewrites_discriminated_union() -> None:
    # C15: oneOf + discriminator -> anyOf; validation uses the original model.
    class FruitArgs(BaseModel):
        color: str

    class FoodArgs(BaseModel):
        price: int

    class BuyFruitStep(BaseModel):
        action: Literal["buy_fruit"]
        args: FruitArgs

    class BuyFoodStep(BaseModel):
        action: Literal["buy_food"]
        args: FoodArgs

    step = Annotated[BuyFruitStep | BuyFoodStep, Field(discriminator="action")]

    class Actions(BaseModel):
        steps: list[step]  # type: ignore[valid-type]

    spec = OutputSpec.of(Actions)
    ds = spec.schema_for("openai_strict")
    text = str(ds.schema)
    assert "oneOf" not in text and "discriminator" not in text
    assert "anyOf" in str(ds.schema["properties"]["steps"])
    assert ds.strict
    out = spec.validate({"steps": [{"action": "buy_food", "args": {"price": 3}}]})
    assert isinstance(out.steps[0], BuyFoodStep)
    # a union at the root is wrapped in an object
    root = OutputSpec.of(BuyFruitStep | BuyFoodStep)
    assert root.wrapped and root.schema_for("openai_strict").schema["type"] == "object"


def test_openai_strict_falls_back_to_non_strict_for_free_form_dicts() -> None:
    class Bag(BaseModel):
        counts: dict[str, int]

    ds = OutputSpec.of(Bag).schema_for("openai_strict")
    assert ds.strict is False


class Loose(BaseModel):
    anything: Any


class Bare(BaseModel):
    items: list = []  # type: ignore[type-arg]


class Pair(BaseModel):
    span: tuple[int, str]


@pytest.mark.parametrize("tp", [Loose, Bare, Pair], ids=["any", "bare-list", "tuple"])
def test_openai_strict_sends_what_it_cannot_express_non_strict_and_whole(tp: Any) -> None:
    # C13 kind: strict mode needs a type on every schema ("schema must have a 'type'
    # key") and has no tuples; stripping prefixItems or sending {} strict is a 400 or
    # another type. Such a schema goes non-strict, as written.
    spec = OutputSpec.of(tp)
    ds = spec.schema_for("openai_strict")
    assert ds.strict is False
    assert ds.schema == spec.schema_for("plain").schema


class Described(BaseModel):
    home: Address = Field(description="where they live")
    work: Address | None = Field(None, description="office")
    boss: Described | None = None
    mentor: Described = Field(None, description="a mentor")  # type: ignore[assignment]


def test_openai_strict_inlines_a_ref_that_has_sibling_keywords() -> None:
    # The openai SDK's strict schemas never hold a $ref with siblings (it inlines
    # them: "we can't use `$ref`s if there are also other properties defined"); the
    # field's description survives, a recursive one stops at its own ref.
    ds = OutputSpec.of(Described).schema_for("openai_strict")
    assert ds.strict
    for node in walk(ds.schema):
        if "$ref" in node:
            assert set(node) == {"$ref"}, node
    props = ds.schema["properties"]
    assert props["home"]["description"] == "where they live"
    assert props["home"]["properties"]["city"]["description"] == "city name"
    assert props["home"]["additionalProperties"] is False
    assert props["work"]["description"] == "office"
    assert props["mentor"]["description"] == "a mentor"
    assert props["mentor"]["properties"]["mentor"] == {"anyOf": [
        {"$ref": "#/$defs/Described"}, {"type": "null"}]}


def test_recursive_model_works_in_strict_plain_and_gemini() -> None:
    spec = OutputSpec.of(Node)
    assert spec.schema_for("openai_strict").strict
    assert "$defs" in spec.schema_for("plain").schema
    # Gemini: no inlining a tree; JSON Schema with $defs/$ref for its JSON Schema fields
    gemini = spec.schema_for("gemini").schema
    assert gemini["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert gemini["$defs"]["Node"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"}
    tree = spec.validate({"name": "a", "children": [{"name": "b", "children": []}]})
    assert tree.children[0].name == "b"


def test_gemini_recursion_is_never_required_but_entries_into_a_tree_are() -> None:
    # Gemini takes a recursive reference only where it is not required: the recursive
    # properties leave `required`; a field that only holds a tree keeps it.
    class Tree(BaseModel):
        label: str
        kids: list[Tree]
        parent: Tree | None

    class Garden(BaseModel):
        name: str
        tree: Tree
        spare: Tree | None

    schema = OutputSpec.of(Garden).schema_for("gemini").schema
    assert schema["required"] == ["name", "tree", "spare"]
    assert schema["$defs"]["Tree"]["required"] == ["label"]
    assert OutputSpec.of(Tree).schema_for("gemini").schema["required"] == ["label"]
    assert "x-grounded" not in str(schema)


def test_gemini_inlines_refs_and_same_def_twice_is_not_recursion() -> None:
    # C16: Chart uses Axis twice; it must work.
    schema = OutputSpec.of(Chart).schema_for("gemini").schema
    text = str(schema)
    assert "$ref" not in text and "$defs" not in text
    assert "additionalProperties" not in text and "title" not in text
    assert schema["properties"]["x_axis"]["properties"]["label"]["type"] == "string"


def test_gemini_nullable_and_integer_enums_as_strings_with_coercion_back() -> None:
    class Item(BaseModel):
        note: str | None = None

    note = OutputSpec.of(Item).schema_for("gemini").schema["properties"]["note"]
    assert note == {"type": "string", "nullable": True}
    spec = OutputSpec.of(Paint)
    schema = spec.schema_for("gemini").schema
    assert schema["properties"]["color"]["enum"] == ["1", "2"]
    assert schema["properties"]["color"]["type"] == "string"
    assert schema["properties"]["size"]["enum"] == ["1", "2", "3"]
    assert spec.validate({"color": "2", "size": "3"}) == Paint(color=Color.GREEN, size=3)


def test_local_dialect_bounds_strings_and_arrays() -> None:
    class Log(BaseModel):
        package: str
        changes: list[str]
        urgency: Literal["low", "high"]
        short: str = Field(max_length=10)

    schema = OutputSpec.of(Log).schema_for("local").schema
    props = schema["properties"]
    assert props["package"]["maxLength"] > 0
    assert props["changes"]["maxItems"] > 0 and props["changes"]["items"]["maxLength"] > 0
    assert "maxLength" not in props["urgency"]
    assert props["short"]["maxLength"] == 10
    assert schema["required"] == list(props)


def test_stringified_json_for_array_field_is_decoded_once() -> None:
    class Scores(BaseModel):
        scores: list[int]
        meta: Address

    spec = OutputSpec.of(Scores)
    out = spec.validate({"scores": "[1, 2]", "meta": '{"street": "s", "city": "c"}'})
    assert out.scores == [1, 2] and out.meta.city == "c"
    with pytest.raises(ValidationError):
        spec.validate({"scores": "not json", "meta": {"street": "s", "city": "c"}})


def test_lenient_coercion_and_clear_errors() -> None:
    # C27: "30" -> 30; "thirty" is a validation error naming the field
    class AddArgs(BaseModel):
        a: int
        b: int

    spec = OutputSpec.of(AddArgs)
    assert spec.validate({"a": "30", "b": "12"}) == AddArgs(a=30, b=12)
    error = spec.validation_error({"a": "thirty", "b": 1})
    assert error is not None and error.errors()[0]["loc"] == ("a",)


def test_unbuildable_type_raises_schema_error_naming_it() -> None:
    class Opaque:
        pass

    with pytest.raises(SchemaError) as info:
        OutputSpec.of(Opaque)
    assert "Opaque" in str(info.value)


def test_dump_json_is_the_users_type() -> None:
    spec = OutputSpec.of(list[Axis])
    assert spec.dump_json([Axis(label="x")]) == '[{"label":"x"}]'


class _Event(BaseModel):
    title: str
    when: date
    size: Literal[1, 2, 3] = 1
    tags: list[str] = Field(default_factory=list)
    note: str = "none"


@pytest.mark.parametrize(
    "text",
    [
        '{"title": "launch", "when": "2026-12-01", "size": 2, "tags": ["a"]}',  # exact
        '{"title": "launch", "when": "2026-12-01", "size": "2"}',  # stringified enum
        '{"title": "launch", "when": "2026-12-01", "note": null}',  # null for a default
        '{"title": "launch", "when": "2026-12-01", "tags": "[\\"a\\", \\"b\\"]"}',  # encoded list
        '{"title": 5, "when": "2026-12-01"}',  # lax-only coercion: refused as before
        '{"title": "launch"}',  # missing field
        "{}",  # empty: never an output
    ],
)
def test_exact_json_text_validates_as_the_decoded_value_does(text: str) -> None:
    """``validate(data, text)`` (strict on the exact text first) gives what the
    normalising lax path gives, or the same error."""
    spec = OutputSpec.of(_Event)
    data = orjson.loads(text)
    try:
        expected: Any = spec.validate(data)
    except ValidationError as exc:
        expected = [(e["type"], e["loc"]) for e in exc.errors()]
    try:
        got: Any = spec.validate(data, text)
    except ValidationError as exc:
        got = [(e["type"], e["loc"]) for e in exc.errors()]
    assert got == expected
    if text.startswith('{"title": "launch"') and "when" in text:
        assert isinstance(got, _Event) and got.when == date(2026, 12, 1)


def test_exact_json_text_of_a_wrapped_type_unwraps() -> None:
    spec = OutputSpec.of(list[int])
    assert spec.validate({"result": [1, 2]}, '{"result": [1, 2]}') == [1, 2]
    assert spec.validate({"result": ["1", 2]}, '{"result": ["1", 2]}') == [1, 2]


class _Reading(BaseModel):
    value: float | None = None
    label: str = ""


@pytest.mark.parametrize(
    "data",
    [
        {"title": "launch", "when": "2026-12-01", "size": 2, "tags": ["a"]},
        {"title": "launch", "when": "2026-12-01", "size": "2"},
        {"title": "launch", "when": "2026-12-01", "note": None},
        {"title": "launch", "when": "2026-12-01", "tags": '["a", "b"]'},
        {"title": "launch", "when": "2026-12-01", "tags": ("a", "b")},  # a tuple: tolerant path
        {"title": 5, "when": "2026-12-01"},
        {"title": "launch"},
        {},
    ],
)
def test_validate_object_gives_what_validate_gives(data: dict[str, Any]) -> None:
    """Tool-call arguments (a decoded object) validate as ``validate`` does them."""
    spec = OutputSpec.of(_Event)

    def outcome(check: Any) -> Any:
        try:
            return check(data)
        except ValidationError as exc:
            return [(e["type"], e["loc"]) for e in exc.errors()]

    assert outcome(spec.validate_object) == outcome(spec.validate)


def test_validate_object_keeps_values_json_text_cannot_carry() -> None:
    """NaN/Infinity (``json.loads`` and Python literals read them) would
    become ``null`` in JSON text: never validated from that text, and no
    number either (``json_kinds.NOT_A_FINITE_NUMBER``): refused, naming the field."""
    spec = OutputSpec.of(_Reading)
    for value in (float("nan"), float("inf")):
        with pytest.raises(ValidationError) as info:
            spec.validate_object({"value": value})
        assert [(e["type"], e["loc"]) for e in info.value.errors()] == [
            ("not_a_finite_number", ("value",))]
    assert spec.validate_object({"value": 1.5, "label": "x"}) == _Reading(value=1.5, label="x")


def test_validate_object_with_exact_types_takes_no_normalising_walk() -> None:
    """Arguments that already have the schema's exact types are validated
    strictly from their JSON text in one pass (the tool path's hot path);
    others are still normalised."""
    spec = OutputSpec.of(_Event)
    entered: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("decoding.py"):
            entered.append(frame.f_code.co_name)

    sys.setprofile(watch)
    try:
        exact = spec.validate_object({"title": "launch", "when": "2026-12-01", "size": 2})
        exact_calls = list(entered)
        loose = spec.validate_object({"title": "launch", "when": "2026-12-01", "size": "2"})
    finally:
        sys.setprofile(None)
    assert exact.size == 2 and loose.size == 2
    assert exact_calls == []
    assert "normalize" in entered


class _Range(BaseModel):
    low: int = 0
    high: int = 10


class _RangeDict(TypedDict, total=False):
    low: int
    high: int


@pytest.mark.parametrize("data", [
    {"_Range": {"low": 1, "high": 5}},        # wrapped in the type's name
    {"properties": {"low": 1, "high": 5}},    # echoed from the schema
    {"lo": 3, "hi": 5},                       # misspelt keys
])
@pytest.mark.parametrize("output", [_Range, _RangeDict])
def test_an_output_that_sets_no_field_is_no_output(output: Any, data: Any) -> None:
    """A type whose fields all have defaults took any object of unknown keys
    for a valid all-defaults answer: what the model said was lost silently."""
    with pytest.raises(ValidationError) as caught:
        OutputSpec.of(output).validate_object(data)
    assert caught.value.errors()[0]["type"] == "empty_output"
    assert "low, high" in str(caught.value) and "are not fields" in str(caught.value)


def test_an_output_that_sets_a_field_stays_valid() -> None:
    assert OutputSpec.of(_Range).validate_object({"low": 0}) == _Range(low=0)
    assert OutputSpec.of(_Range).validate_object({"low": 2, "note": "x"}) == _Range(low=2)
    assert OutputSpec.of(_RangeDict).validate_object({"high": 3}) == {"high": 3}


async def test_the_model_is_told_and_answers_again() -> None:
    from agentflow import ReActAgent
    from agentflow.testing import Call, Reply, ScriptedModel
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {"_Range": {"low": 1, "high": 5}})]),
        Reply(tool_calls=[Call("generate_response", {"low": 1, "high": 5})]),
    ])
    reply = await ReActAgent("a", model).call("1 to 5", _Range, strategy="tool")
    assert reply.output == _Range(low=1, high=5)
    answer = model.requests[1].messages[-1].tool_results[0]
    assert answer.is_error and "are not fields" in answer.output
