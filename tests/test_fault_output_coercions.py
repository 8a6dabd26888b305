"""Engine fault: a validation retry spent on a value with one reading, and a
non-number taken for a number.

A model writes ``"HIGH"`` for the member ``"high"``, or ``"Paris"`` for a
``list[str]``: each has one reading only, yet the output was refused and a
retry (a request, its tokens and latency) spent to get it in the right form.
Both are now read as that value before validation (``output.decoding``):
a string that differs from exactly one string member in case or outer blanks
only is that member (two members that differ in case only leave it to
validation); a bare string for an array of strings is a one-item array when it
holds no list separator (``"red, green"`` could be one item or two: still a
retry). And ``NaN``, ``"nan"`` or ``Infinity`` for a number passed as ``ok``
(pydantic's floats allow them): a wrong value taken for a right one. It is now
a validation error naming the field (``NOT_A_FINITE_NUMBER``).

Served by the deterministic ``ScriptedModel``, on the tool path."""

from __future__ import annotations

import enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from agentflow import ReActAgent
from agentflow.output.schema import OutputSpec
from agentflow.testing import Call, Reply, ScriptedModel


class Level(enum.StrEnum):
    high = "high"
    low = "low"


class Ticket(BaseModel):
    priority: Literal["high", "medium", "low"]
    level: Level = Level.low
    tags: list[str] = []
    score: float = 0.0
    scores: list[float] = []
    note: float | None = None


class Shade(BaseModel):
    tone: Literal["Low", "low"]


GOOD: dict[str, Any] = {"priority": "high", "level": "high", "tags": ["a"], "score": 1.5}


async def outcome(first: dict[str, Any] | str, output: type[BaseModel] = Ticket,
                  second: dict[str, Any] | None = None) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel([Reply(tool_calls=[Call("generate_response", first)]),
                           Reply(tool_calls=[Call("generate_response", second or GOOD)])])
    reply = await ReActAgent("c", model).call("Triage this ticket.", output)
    return reply.output, model


def retry_text(model: ScriptedModel) -> str:
    return str(model.requests[1].messages[-1].content[0].output)  # type: ignore[union-attr]


@pytest.mark.parametrize(("written", "read"), [("HIGH", "high"), (" High ", "high"),
                                                ("Medium", "medium")])
async def test_a_case_only_mismatch_with_one_member_is_that_member(written: str,
                                                                   read: str) -> None:
    out, model = await outcome({"priority": written, "level": "HIGH"})
    assert out.priority == read and out.level is Level.high
    assert len(model.requests) == 1


async def test_members_that_differ_in_case_only_leave_it_to_validation() -> None:
    out, model = await outcome({"tone": "LOW"}, Shade, {"tone": "low"})
    assert out.tone == "low" and len(model.requests) == 2
    assert "tone" in retry_text(model)


async def test_a_word_that_is_no_member_is_still_refused() -> None:
    out, model = await outcome({"priority": "urgent"})
    assert out.priority == "high" and len(model.requests) == 2
    assert "priority" in retry_text(model)


async def test_a_bare_string_for_a_list_of_strings_is_one_item() -> None:
    out, model = await outcome({"priority": "low", "tags": "billing"})
    assert out.tags == ["billing"] and len(model.requests) == 1


@pytest.mark.parametrize("written", ["billing, refund", "billing; refund", "billing\nrefund",
                                     "", "  "])
async def test_a_string_that_may_hold_several_items_is_still_refused(written: str) -> None:
    out, model = await outcome({"priority": "low", "tags": written})
    assert out.tags == ["a"] and len(model.requests) == 2
    assert "tags" in retry_text(model)


@pytest.mark.parametrize(("field", "written"), [
    ("score", "NaN"), ("score", "nan"), ("score", "Infinity"), ("score", "-inf"),
    ("note", "NaN"), ("scores", ["1.5", "NaN"]), ("score", '{"priority": "low", "score": NaN}')],
    ids=["NaN-text", "nan-text", "Infinity", "-inf", "optional", "in-a-list", "bare-NaN"])
async def test_nan_or_infinity_is_no_number(field: str, written: Any) -> None:
    first: dict[str, Any] | str = (written if written.startswith("{") else {
        "priority": "low", field: written}) if isinstance(written, str) else {
        "priority": "low", field: written}
    out, model = await outcome(first)
    assert out.score == 1.5 and out.note is None and len(model.requests) == 2
    text = retry_text(model)
    assert field in text and "finite number" in text


def test_the_error_type_names_the_kind() -> None:
    spec = OutputSpec.of(Ticket)
    with pytest.raises(ValidationError) as info:
        spec.validate({"priority": "low", "score": "NaN"})
    # json_kinds.NOT_A_FINITE_NUMBER
    assert [e["type"] for e in info.value.errors()] == ["not_a_finite_number"]
    assert info.value.errors()[0]["loc"] == ("score",)


class Readings(BaseModel):
    levels: set[float] = set()
    frozen: frozenset[float] = frozenset()


@pytest.mark.parametrize(("field", "written"), [("levels", ["1.5", "nan"]), ("levels", [1e999]),
                                                ("frozen", ["-Infinity"])])
def test_nan_or_infinity_in_a_set_is_no_number(field: str, written: list[Any]) -> None:
    # a set is unordered: its items are checked as a whole, under the set's own path
    with pytest.raises(ValidationError) as info:
        OutputSpec.of(Readings).validate({field: written})
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [
        ("not_a_finite_number", (field,))]


class Filed(BaseModel):
    priority: Literal["high", "low"]
    tags: list[str] | None = None
    levels: list[Level] | None = None


async def test_a_bare_string_for_an_optional_list_of_strings_is_one_item() -> None:
    # ``list[str] | None`` is an anyOf: the same one reading as a plain ``list[str]``
    out, model = await outcome({"priority": "low", "tags": "billing", "levels": "HIGH"}, Filed,
                               {"priority": "low"})
    assert out.tags == ["billing"] and out.levels == [Level.high] and len(model.requests) == 1


async def test_a_string_that_may_hold_several_items_for_an_optional_list_is_refused() -> None:
    out, model = await outcome({"priority": "low", "tags": "billing, refund"}, Filed,
                               {"priority": "low", "tags": ["billing", "refund"]})
    assert out.tags == ["billing", "refund"] and len(model.requests) == 2


class Score(RootModel[float]):
    pass


class Scored(BaseModel):
    score: Score = Score(0.0)
    by_name: dict[str, Score] = {}


@pytest.mark.parametrize(("written", "loc"), [({"score": "nan"}, ("score",)),
                                              ({"by_name": {"a": "-inf"}}, ("by_name", "a"))])
def test_nan_as_text_for_a_root_model_number_is_no_number(written: dict[str, Any],
                                                          loc: tuple[str, ...]) -> None:
    # a RootModel[float] is a number too: its "nan" passed as ok (read as Score(nan))
    with pytest.raises(ValidationError) as info:
        OutputSpec.of(Scored).validate(written)
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [("not_a_finite_number", loc)]
