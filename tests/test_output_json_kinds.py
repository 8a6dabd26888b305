"""Lax validation keeps JSON kinds: a boolean is never a number, a number
never a boolean or a date (agentflow.output.json_kinds)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
from typing import Annotated, Any, Literal, NotRequired

import orjson
import pytest
from pydantic import (
    AfterValidator,
    AliasChoices,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from typing_extensions import TypedDict

from agentflow import OutputRetry, ReActAgent
from agentflow.model import ModelProfile
from agentflow.output.json_kinds import (
    BOOLEAN_IS_NO_NUMBER,
    KEYS_COLLAPSE,
    NUMBER_IS_NO_BOOLEAN,
    NUMBER_IS_NO_DATE,
    NUMBER_IS_NO_DURATION,
    kind_errors,
)
from agentflow.output.schema import OutputSpec
from agentflow.testing import Call, Reply, ScriptedModel


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Item(BaseModel):
    n: int


class Record(BaseModel):
    count: int = Field(0, alias="Count")
    ratio: float = 0.0
    flag: bool = False
    level: Level = Level.LOW
    code: Literal[1, 2] = 1
    yes: Literal[True] = True
    day: datetime.date = datetime.date(2000, 1, 1)
    at: datetime.datetime = datetime.datetime(2000, 1, 1)
    either: int | bool = 0
    number_or_text: int | str = 0
    maybe: float | None = None
    items: list[Item] = []
    ids: set[int] = set()
    raw: dict[str, Any] = {}


SPEC = OutputSpec.of(Record)


def _validate(data: dict[str, Any], exact: bool) -> Record:
    """Both ways a value is validated: from its JSON text (strict first), or decoded only."""
    result: Record = SPEC.validate(data, orjson.dumps(data) if exact else None)
    return result


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("data", "path", "kind"), [
    ({"Count": True}, ("Count",), BOOLEAN_IS_NO_NUMBER),
    ({"Count": False}, ("Count",), BOOLEAN_IS_NO_NUMBER),
    ({"ratio": True}, ("ratio",), BOOLEAN_IS_NO_NUMBER),
    ({"level": True}, ("level",), BOOLEAN_IS_NO_NUMBER),      # IntEnum: even strict JSON takes it
    ({"code": True}, ("code",), BOOLEAN_IS_NO_NUMBER),        # Literal[1, 2]: likewise
    ({"number_or_text": True}, ("number_or_text",), BOOLEAN_IS_NO_NUMBER),
    ({"maybe": False}, ("maybe",), BOOLEAN_IS_NO_NUMBER),
    ({"items": [{"n": 3}, {"n": True}]}, ("items", 1, "n"), BOOLEAN_IS_NO_NUMBER),
    ({"ids": [2, True]}, ("ids",), BOOLEAN_IS_NO_NUMBER),
    ({"flag": 1}, ("flag",), NUMBER_IS_NO_BOOLEAN),
    ({"flag": 0.0}, ("flag",), NUMBER_IS_NO_BOOLEAN),
    ({"yes": 1}, ("yes",), NUMBER_IS_NO_BOOLEAN),
    ({"day": 86400}, ("day",), NUMBER_IS_NO_DATE),
    ({"at": 1700000000}, ("at",), NUMBER_IS_NO_DATE),
])
def test_a_crossing_of_kinds_is_a_validation_error(
        data: dict[str, Any], path: tuple[Any, ...], kind: str, exact: bool) -> None:
    with pytest.raises(ValidationError) as info:
        _validate(data, exact)
    [error] = info.value.errors()
    assert (error["loc"], error["type"]) == (path, kind)
    assert "got the" in error["msg"]  # says what the model wrote


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("data", "field", "expected"), [
    ({"Count": "42"}, "count", 42),            # a model that quotes numbers
    ({"Count": " 7 "}, "count", 7),
    ({"Count": 42.0}, "count", 42),            # JSON has one number type
    ({"ratio": "4.5"}, "ratio", 4.5),
    ({"ratio": 3}, "ratio", 3.0),
    ({"flag": "true"}, "flag", True),          # a string that spells a boolean
    ({"flag": "no"}, "flag", False),
    ({"level": "2"}, "level", Level.HIGH),     # a dialect that sends enum values as text
    ({"code": "2"}, "code", 2),
    ({"day": "2024-01-31"}, "day", datetime.date(2024, 1, 31)),
    ({"either": True}, "either", True),        # the union's boolean branch takes it
    ({"either": 5}, "either", 5),
    ({"number_or_text": "42"}, "number_or_text", "42"),
    ({"maybe": None}, "maybe", None),
    ({"raw": {"x": True}}, "raw", {"x": True}),  # Any keeps what was written
])
def test_useful_lax_readings_are_kept(data: dict[str, Any], field: str, expected: Any,
                                      exact: bool) -> None:
    assert getattr(_validate(data, exact), field) == expected


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
def test_a_fraction_is_never_an_integer(exact: bool) -> None:
    with pytest.raises(ValidationError):
        _validate({"Count": 42.5}, exact)


def test_wrapped_outputs_are_checked_too() -> None:
    spec = OutputSpec.of(list[int])
    assert spec.validate({"result": [1, "2", 3.0]}) == [1, 2, 3]
    with pytest.raises(ValidationError) as info:
        spec.validate({"result": [1, True]})
    assert info.value.errors()[0]["loc"] == ("result", 1)


def test_kind_errors_lists_every_crossing_in_order() -> None:
    data = {"Count": True, "flag": 1, "ratio": 2}
    record = Record.model_construct(count=1, flag=True, ratio=2.0)
    assert [e["loc"] for e in kind_errors(data, record)] == [("Count",), ("flag",)]


class Person(BaseModel):
    name: str
    age: int


PROFILES = {
    "tool": ModelProfile(),
    "native": ModelProfile(native_output="json_schema", schema_dialect="openai_strict"),
    "prompt": ModelProfile(supports_tools=False),
}


def _answer(strategy: str, data: dict[str, Any]) -> Reply:
    if strategy == "tool":
        return Reply(tool_calls=[Call("generate_response", data)])
    return Reply(text=orjson.dumps(data).decode())


@pytest.mark.parametrize("strategy", list(PROFILES))
async def test_a_boolean_for_an_integer_is_asked_again_on_every_path(strategy: str) -> None:
    model = ScriptedModel([_answer(strategy, {"name": "Ann", "age": True}),
                           _answer(strategy, {"name": "Ann", "age": 31})],
                          profile=PROFILES[strategy])
    agent = ReActAgent("a", model)
    events = [e async for e in agent.stream("Who, how old?", Person, strategy=strategy)]
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert [r.reason for r in retries] == ["validation"]
    assert "age" in retries[0].message and "boolean" in retries[0].message
    final = events[-1]
    assert getattr(final, "output", None) == Person(name="Ann", age=31)
    assert len(model.requests) == 2


@pytest.mark.parametrize("kind", ["dataclass", "slots", "typeddict", "root"])
def test_every_object_type_is_checked(kind: str) -> None:
    from pydantic import RootModel
    from typing_extensions import TypedDict

    @dataclasses.dataclass
    class D:
        age: int

    @dataclasses.dataclass(slots=True)
    class S:
        age: int

    class T(TypedDict):
        age: int

    class R(RootModel[Person]):
        pass

    spec = OutputSpec.of({"dataclass": D, "slots": S, "typeddict": T, "root": R}[kind])
    data = {"age": True} if kind != "root" else {"name": "Ann", "age": True}
    with pytest.raises(ValidationError) as info:
        spec.validate(data)
    assert info.value.errors()[0]["type"] == BOOLEAN_IS_NO_NUMBER


class Aliased(BaseModel):
    choice: int = Field(0, validation_alias=AliasChoices("c", "Choice"))
    deep: int = Field(0, validation_alias=AliasPath("outer", 1, "n"))
    either: bool = Field(False, validation_alias=AliasChoices(AliasPath("e", 0), "E"))
    by_key: dict[int, bool] = {}
    by_day: dict[datetime.date, int] = {}
    wait: datetime.timedelta = datetime.timedelta(0)


ALIASED = OutputSpec.of(Aliased)


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("data", "path", "kind"), [
    ({"c": True}, ("c",), BOOLEAN_IS_NO_NUMBER),                    # each choice of an AliasChoices
    ({"Choice": False}, ("Choice",), BOOLEAN_IS_NO_NUMBER),
    ({"outer": [0, {"n": True}]}, ("outer", 1, "n"), BOOLEAN_IS_NO_NUMBER),  # an AliasPath
    ({"e": [1]}, ("e", 0), NUMBER_IS_NO_BOOLEAN),                    # a path among the choices
    ({"E": 0}, ("E",), NUMBER_IS_NO_BOOLEAN),
    ({"by_key": {"1": True, "2": 1}}, ("by_key", "2"), NUMBER_IS_NO_BOOLEAN),  # int keys
    ({"by_day": {"2024-01-31": True}}, ("by_day", "2024-01-31"), BOOLEAN_IS_NO_NUMBER),
    ({"wait": True}, ("wait",), NUMBER_IS_NO_DURATION),              # not one second
    ({"wait": 90}, ("wait",), NUMBER_IS_NO_DURATION),                # seconds? minutes?
    ({"wait": 1.5}, ("wait",), NUMBER_IS_NO_DURATION),
])
def test_every_key_and_item_is_checked(data: dict[str, Any], path: tuple[Any, ...], kind: str,
                                       exact: bool) -> None:
    with pytest.raises(ValidationError) as info:
        ALIASED.validate(data, orjson.dumps(data) if exact else None)
    [error] = info.value.errors()
    assert (error["loc"], error["type"]) == (path, kind)
    assert "got the" in error["msg"]


@pytest.mark.parametrize(("data", "field", "expected"), [
    ({"c": "3"}, "choice", 3),
    ({"outer": [True, {"n": 4}]}, "deep", 4),     # a boolean beside the path is no field's
    ({"e": ["yes"]}, "either", True),
    ({"by_key": {"1": True, "02": "false"}}, "by_key", {1: True, 2: False}),
    ({"by_day": {"2024-01-31": "3"}}, "by_day", {datetime.date(2024, 1, 31): 3}),
    ({"wait": "PT1H30M"}, "wait", datetime.timedelta(minutes=90)),
    ({"wait": "01:30:00"}, "wait", datetime.timedelta(minutes=90)),
])
def test_aliases_and_converted_keys_keep_the_useful_readings(
        data: dict[str, Any], field: str, expected: Any) -> None:
    assert getattr(ALIASED.validate(data), field) == expected


class ByAliasOnly(BaseModel):
    count: int = Field(0, alias="Count")


class ByName(BaseModel):
    model_config = ConfigDict(validate_by_name=True)
    count: int = Field(0, validation_alias=AliasChoices("n", "N"))


def test_a_key_validation_ignored_is_not_checked() -> None:
    # "count" is no key of ByAliasOnly (by alias only): ignored, the default kept
    assert kind_errors({"Count": 2, "count": True}, ByAliasOnly(Count=2)) == []
    assert kind_errors({"count": True}, ByAliasOnly()) == []
    # by name too: the name is one more key, after the aliases
    assert [e["loc"] for e in kind_errors({"count": True}, ByName(count=1))] == [("count",)]
    assert kind_errors({"n": 2, "count": True}, ByName(n=2)) == []


@dataclasses.dataclass
class AliasedData:
    age: Annotated[int, Field(alias="Age")]
    score: float = Field(0.0, validation_alias=AliasChoices("s", "Score"))


@pytest.mark.parametrize(("data", "path"), [({"Age": 3, "Score": True}, ("Score",)),
                                            ({"Age": True}, ("Age",))])
def test_dataclass_aliases_are_followed(data: dict[str, Any], path: tuple[str]) -> None:
    with pytest.raises(ValidationError) as info:
        OutputSpec.of(AliasedData).validate(data)
    assert [e["loc"] for e in info.value.errors()] == [path]


class Pet(TypedDict):
    age: Annotated[int, Field(alias="Age")]
    name: NotRequired[Annotated[str, Field(validation_alias=AliasChoices("n", "Name"))]]
    tame: bool


class Home(BaseModel):
    pets: list[Pet] | None = None
    owner: Pet | None = None


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("spec", "data", "path", "kind"), [
    (Pet, {"Age": True, "tame": True}, ("Age",), BOOLEAN_IS_NO_NUMBER),  # by its alias
    (Pet, {"Age": 3, "Name": "Rex", "tame": 1}, ("tame",), NUMBER_IS_NO_BOOLEAN),
    (Home, {"pets": [{"Age": 2, "tame": True}, {"Age": False, "tame": True}]},
     ("pets", 1, "Age"), BOOLEAN_IS_NO_NUMBER),  # nested, in a list, in an optional
    (Home, {"owner": {"Age": True, "tame": True}}, ("owner", "Age"), BOOLEAN_IS_NO_NUMBER),
])
def test_typeddict_aliases_are_followed(spec: Any, data: dict[str, Any], path: tuple[Any, ...],
                                        kind: str, exact: bool) -> None:
    with pytest.raises(ValidationError) as info:
        OutputSpec.of(spec).validate(data, orjson.dumps(data) if exact else None)
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [(path, kind)]


def test_typeddict_aliases_keep_the_useful_readings() -> None:
    assert OutputSpec.of(Pet).validate({"Age": "3", "n": "Rex", "tame": "yes"}) == {
        "age": 3, "name": "Rex", "tame": True}


class Scores(BaseModel):
    by_id: dict[int, str] = {}
    nested: dict[str, dict[int, int]] = {}
    lowered: dict[Annotated[str, StringConstraints(to_lower=True)], int] = {}


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("data", "path", "same"), [
    ({"by_id": {"1": "a", "01": "b"}}, ("by_id",), '"1" and "01"'),
    ({"by_id": {"2": "a", "1": "x", "+1": "y"}}, ("by_id",), '"1" and "+1"'),
    ({"nested": {"k": {"7": 1, "07": 2}}}, ("nested", "k"), '"7" and "07"'),
    ({"lowered": {"Ann": 1, "ann": 2}}, ("lowered",), '"Ann" and "ann"'),
])
def test_keys_that_become_one_key_are_a_typed_error(data: dict[str, Any],
                                                   path: tuple[Any, ...], same: str,
                                                   exact: bool) -> None:
    """pydantic reads ``{"1": "a", "01": "b"}`` as ``{1: "b"}``: a value
    lost without a word. The output is refused instead, naming the mapping and
    the keys, so the model is asked again."""
    spec = OutputSpec.of(Scores)
    with pytest.raises(ValidationError) as info:
        spec.validate(data, orjson.dumps(data) if exact else None)
    [error] = info.value.errors()
    assert (error["loc"], error["type"]) == (path, KEYS_COLLAPSE)
    assert same in error["msg"]
    assert spec.validate({"by_id": {"1": "a", "2": "b"}}).by_id == {1: "a", 2: "b"}


def _drop_none(prices: dict[Any, Any]) -> dict[Any, Any]:
    return {k: v for k, v in prices.items() if v is not None}


class Priced(BaseModel):
    prices: Annotated[dict[str, int | None], AfterValidator(_drop_none)] = {}
    by_id: dict[int, int | None] = {}

    @field_validator("by_id")
    @classmethod
    def _known(cls, by_id: dict[int, int | None]) -> dict[int, int | None]:
        return _drop_none(by_id)


@pytest.mark.parametrize("exact", [True, False], ids=["from_text", "decoded"])
@pytest.mark.parametrize(("data", "read"), [
    ({"prices": {"a": 1, "b": None}}, Priced(prices={"a": 1})),
    ({"prices": {"a": "1", "b": None}}, Priced(prices={"a": 1})),
    ({"by_id": {"1": 5, "2": None}}, Priced(by_id={1: 5})),
])
def test_a_validator_that_drops_entries_is_no_collapse(data: dict[str, Any], read: Priced,
                                                       exact: bool) -> None:
    """Fewer keys read than written is no proof two keys became one: a
    validator may drop entries (here the null ones)."""
    assert OutputSpec.of(Priced).validate(data, orjson.dumps(data) if exact else None) == read


def test_dropped_entries_do_not_hide_keys_that_became_one() -> None:
    with pytest.raises(ValidationError) as info:
        OutputSpec.of(Priced).validate({"by_id": {"1": 5, "01": 6, "2": None}})
    [error] = info.value.errors()
    assert (error["loc"], error["type"]) == (("by_id",), KEYS_COLLAPSE)
    assert '"1" and "01"' in error["msg"]


async def test_keys_that_become_one_key_are_asked_again() -> None:
    model = ScriptedModel([Reply(text='{"by_id": {"1": "a", "01": "b"}}'),
                           Reply(text='{"by_id": {"1": "a", "2": "b"}}')],
                          profile=PROFILES["prompt"])
    events = [e async for e in ReActAgent("a", model).stream("Scores?", Scores)]
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert [r.reason for r in retries] == ["validation"]
    assert "by_id" in retries[0].message and '"01"' in retries[0].message
    assert getattr(events[-1], "output", None) == Scores(by_id={1: "a", 2: "b"})


@dataclasses.dataclass
class Row:
    a: int
    b: dict[str, int]
    c: list[bool]


class Rows(BaseModel):
    rows: list[Row]


def test_a_dataclass_s_annotations_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each field of each item once read every annotation of its class
    again (``typing.get_type_hints``): now once a class."""
    spec = OutputSpec.of(Rows)
    data = {"rows": [{"a": i, "b": {"x": i}, "c": [True]} for i in range(40)]}
    spec.validate(data)
    reads = []
    hints = typing.get_type_hints

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[0])
        return hints(*args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", counted)
    assert len(spec.validate(data).rows) == 40
    assert reads.count(Row) <= 1
