"""A number written after a key learns the rule a string there does, and is
pinned by value where written plainly (newcomer24 probe: ``max_line_length =
100`` was flagged in 10 of 10 INI documents, right or not)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, Field

from agentflow import Derived, Example
from agentflow.extraction.confidence import (
    DISAGREES,
    GROUNDED,
    HELD,
    REVIEW_BELOW,
    field_confidence,
)
from agentflow.grounding.locator_numbers import number_fields, number_text
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import Locator, learn_locators
from agentflow.output.examples import check_examples


class Lint(BaseModel):
    name: str | None = Field(None, description="the name key")
    max_line_length: int | None = Field(None, description="max-line-length in [flake8]")
    ratio: float | None = Field(None, description="the ratio key")
    strict: bool | None = Field(None, description="the strict key")
    count: Annotated[int | None, Derived()] = Field(None, description="how many keys")


EXAMPLES = [
    Example("[metadata]\nname = widgetlib\n\n[flake8]\nmax-line-length = 88\nratio = 0.75\n"
            "strict = 1\n",
            Lint(name="widgetlib", max_line_length=88, ratio=0.75, strict=True, count=3)),
    Example("[flake8]\nexclude = .git\nmax-line-length=120\nratio = 1.5\n\n[metadata]\n"
            "name = quux\n", Lint(name="quux", max_line_length=120, ratio=1.5, count=4)),
]


def _rules() -> dict[str, Locator]:
    return learn_locators(check_examples(EXAMPLES, Lint), Lint)


def _confidence(doc: str, **values: object) -> dict[str, float]:
    confidence, _ = field_confidence(Lint.model_validate(values), doc, {}, _rules())
    return confidence


def test_a_number_after_a_key_learns_a_rule_and_is_pinned_by_value() -> None:
    rules = _rules()
    assert number_fields(Lint) == ["max_line_length", "ratio"]  # no bool, no Derived()
    rule = rules["max_line_length"]
    assert rule.number and rule.labelled and rule.group == "[flake8]"
    doc = "[flake8]\n# max-line-length = 79\nmax-line-length = 100\n\n[pycodestyle]\n" \
          "max-line-length = 79\n"
    assert rule.values(doc) == ["100"]
    assert _confidence(doc, max_line_length=100)["max_line_length"] == HELD
    assert _confidence(doc, max_line_length=79)["max_line_length"] == DISAGREES
    assert _confidence("[flake8]\nmax-line-length : 110\n", max_line_length=110)[
        "max_line_length"] == HELD
    assert "strict" not in rules and "count" not in rules


def test_a_number_is_compared_by_value_only_where_written_plainly() -> None:
    doc = "[flake8]\nratio = 3.14159\nmax-line-length = 1,200\n"
    confidence = _confidence(doc, ratio=3.14159, max_line_length=1200)
    assert confidence["ratio"] == HELD
    # another convention: the rule cannot compare it, grounding alone scores it
    assert confidence["max_line_length"] == GROUNDED
    # a rounded float is not the number written
    assert _confidence(doc, ratio=3.14)["ratio"] < REVIEW_BELOW
    assert number_text(["88.0"], 88) == "88.0" and number_text(["88.5"], 88) == "88"
    assert number_text(["80%"], 80) is None and number_text(["x"], 1) is None
    assert number_text([], Decimal("1.50")) == "1.50"


def test_the_grammar_keeps_offering_a_number_field_any_number_it_writes() -> None:
    schema = {"type": "object", "properties": {
        "max_line_length": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
    doc = "[flake8]\nmax-line-length = 100\n"
    assert apply_locators(schema, _rules(), doc) == schema


def test_the_learned_lines_name_the_number_rule() -> None:
    checked = check_examples(EXAMPLES, Lint)
    lines = learned_lines(learn_locators(checked, Lint), checked, Lint)
    assert any(line.startswith("learned: max_line_length: ") for line in lines), lines
    assert any(line.startswith("no rule: strict (a boolean") for line in lines), lines


class Talk(BaseModel):
    seats: int | None = Field(None, description="how many seats")


def test_a_number_written_in_prose_gets_no_rule_and_says_why() -> None:
    examples = check_examples([Example("The hall has 120 seats.\n", Talk(seats=120)),
                               Example("Room B: 40 seats left\n", Talk(seats=40))], Talk)
    rules = learn_locators(examples, Talk)
    assert rules == {}
    assert learned_lines(rules, examples, Talk) == [
        "no rule: seats (a number the examples write after no key a rule held on: checked "
        "against the numbers the document writes)"]


class Offset(BaseModel):
    name: str | None = Field(None, description="the name key")
    offset: int | None = Field(None, description="the offset key")


def test_a_sign_written_before_a_number_is_the_numbers_not_the_keys() -> None:
    # the examples' values' sign once joined the rule's key (``offset = -``): the rule read
    # ``7`` of ``offset = -7``, and a model's 7 (the sign dropped) held
    examples = check_examples([
        Example("[a]\nname = p\noffset = -5\n", Offset(name="p", offset=-5)),
        Example("[a]\nname = q\noffset = -12\n", Offset(name="q", offset=-12))], Offset)
    rules = learn_locators(examples, Offset)
    doc = "[a]\noffset = -7\n"
    assert rules["offset"].values(doc) == ["-7"]
    for value, score in ((-7, HELD), (7, DISAGREES)):
        confidence, _ = field_confidence(Offset(offset=value), doc, {}, rules)
        assert confidence["offset"] == score, value
    confidence, _ = field_confidence(Offset(offset=7), "[a]\noffset = +7\n", {}, rules)
    assert confidence["offset"] == HELD


def test_a_whole_number_is_a_float_fields_value_where_the_examples_wrote_decimals() -> None:
    # the examples write ``0.75`` and ``1.5``: ``ratio = 2`` was read as another quantity
    # (a count beside amounts) and flagged, though compared by value it is the 2.0 written
    for doc, value in (("[flake8]\nratio = 2\n", 2.0), ("[flake8]\nratio = .5\n", 0.5)):
        assert _confidence(doc, ratio=value)["ratio"] == HELD, doc
    assert _confidence("[flake8]\nratio = 2\n", ratio=2.5)["ratio"] == DISAGREES


class Price(BaseModel):
    name: str | None = Field(None, description="the name key")
    price: float | None = Field(None, description="the price key")


def test_a_number_grouped_by_points_teaches_no_rule() -> None:
    # ``1.200`` for 1200 (a point grouping thousands) once taught a rule that read
    # ``3.100`` as 3.1: the right 3100 disagreed, a model's 3.1 held
    examples = check_examples([
        Example("[a]\nname = p\npreis = 1.200\n", Price(name="p", price=1200.0)),
        Example("[a]\nname = q\npreis = 2.500\n", Price(name="q", price=2500.0))], Price)
    rules = learn_locators(examples, Price)
    assert "price" not in rules
    doc = "[a]\npreis = 3.100\n"
    for value in (3100.0, 3.1):
        confidence, _ = field_confidence(Price(price=value), doc, {}, rules)
        assert confidence["price"] == GROUNDED, value
