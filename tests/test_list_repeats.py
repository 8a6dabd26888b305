"""A list that holds an item more times than the document writes it is not
the document's list: the field needs review at any count from two copies
(the newcomer's recalls: ``["NC4513", "NC4513"]``, a code line twice), the
record says which item, and the review page shows it; at three to five
copies the record is no longer refused as degenerate (a recipe's ``eggs``
3 times lost every other right field), a runaway list (6) still is."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.errors import DegenerateOutputError
from agentflow.extraction.confidence import GROUNDED, REVIEW_BELOW
from agentflow.extraction.list_repeats import (
    REPEATED,
    repeat_reason,
    repeated_items,
    with_repeats,
)
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report
from agentflow.grounding.degenerate import MIN_REPEATED_ITEMS
from agentflow.testing import FunctionModel, ScriptedModel


class Recall(BaseModel):
    product: str
    company: str
    lot_codes: list[str] = []


DOC = ("Northfield Creamery recalls Aged Cheddar, 8 oz\n"
       "Lot codes: NC4512, NC4513. Fix typo. Fix typo.\n")


async def _one(answer: dict[str, Any], doc: str = DOC, output: type[BaseModel] = Recall) -> Any:
    model = FunctionModel(lambda request: json.dumps(answer))
    (result,) = [r async for r in extract_many(model, [doc], output)]
    return result


def test_repeats_counted_against_what_the_document_writes() -> None:
    assert repeated_items(Recall(product="a", company="b", lot_codes=["NC4513", "NC4513"]),
                          DOC) == {"lot_codes": [{"item": "NC4513", "listed": 2, "written": 1}]}
    # the document writes it twice: two copies are its list
    assert repeated_items({"lot_codes": ["Fix typo.", "Fix typo."]}, DOC) == {}
    # whole tokens ("12" inside "NC4512" is no writing of it); whitespace folded
    assert repeated_items({"x": ["12", "12"], "y": ["a  b", "a b"]}, DOC + "a b 12") == {
        "x": [{"item": "12", "listed": 2, "written": 1}],
        "y": [{"item": "a  b", "listed": 2, "written": 1}]}
    assert repeated_items({"lot_codes": ["NC4512", "NC4513"], "product": "NC4512"}, DOC) == {}
    # letter case folded in the list as in the document: one item, written once
    assert repeated_items({"lot_codes": ["NC4513", "nc4513"]}, DOC) == {
        "lot_codes": [{"item": "NC4513", "listed": 2, "written": 1}]}
    assert repeated_items({"x": ["fix TYPO.", "Fix  typo."]}, DOC) == {}  # written twice
    assert with_repeats({"a": 0.99, "b": 0.5, "c": 0.8}, {"a": [], "b": []}) == {
        "a": REPEATED, "b": 0.5, "c": 0.8}
    assert repeat_reason([{"item": "NC4513", "listed": 2, "written": 1}]) == (
        "lists 'NC4513' 2 times; the document writes it once")
    assert repeat_reason("junk") == "" and repeat_reason([{"item": 1}]) == ""


async def test_two_copies_flag_the_list_and_keep_the_record() -> None:
    result = await _one({"product": "Aged Cheddar", "company": "Northfield Creamery",
                         "lot_codes": ["NC4513", "NC4513"]})
    assert result.ok and "lot_codes" in result.needs_review
    assert result.confidence["lot_codes"] == REPEATED < REVIEW_BELOW
    assert result.confidence["product"] == GROUNDED
    record = to_record(result)
    assert record["repeated_items"] == {
        "lot_codes": [{"item": "NC4513", "listed": 2, "written": 1}]}
    page = render_report([record], {"0": DOC})
    assert "lists &#x27;NC4513&#x27; 2 times; the document writes it once" in page or (
        "lists 'NC4513' 2 times; the document writes it once" in page)
    # the same list without the repeat: nothing to say
    clean = await _one({"product": "Aged Cheddar", "company": "Northfield Creamery",
                        "lot_codes": ["NC4512", "NC4513"]})
    assert clean.ok and clean.confidence["lot_codes"] == GROUNDED and clean.repeated_items == {}
    assert "repeated_items" not in to_record(clean)


class Recipe(BaseModel):
    title: str
    ingredients: list[str]


RECIPE = ("Lemon Ricotta Pancakes\n\nIngredients\n- 1 cup flour\n- 2 large eggs\n"
          "- zest of 1 lemon\n\nMethod\n1. Beat the ricotta, eggs and zest.\n")


async def test_three_copies_keep_every_other_field_and_flag_the_list() -> None:
    result = await _one({"title": "Lemon Ricotta Pancakes",
                         "ingredients": ["1 cup flour", "eggs", "eggs", "eggs"]},
                        RECIPE, Recipe)
    assert result.ok and result.output.title == "Lemon Ricotta Pancakes"
    assert result.confidence == {"title": GROUNDED, "ingredients": REPEATED}
    assert result.repeated_items == {
        "ingredients": [{"item": "eggs", "listed": 3, "written": 2}]}


async def test_a_runaway_list_is_still_degenerate() -> None:
    runaway = json.dumps({"title": "Lemon Ricotta Pancakes",
                          "ingredients": ["eggs"] * MIN_REPEATED_ITEMS})
    model = ScriptedModel([runaway] * 5)
    (result,) = [r async for r in extract_many(model, [RECIPE], Recipe)]
    assert not result.ok and isinstance(result.error, DegenerateOutputError)
    assert "repeated 6 times" in str(result.error)


def test_two_fields_on_one_span_say_so_on_the_review_page() -> None:
    from agentflow.extraction._report_fields import field_notes
    from agentflow.extraction.shared_spans import shared_with

    record = {"id": "p2", "ok": True,
              "output": {"product": "NC4512", "company": "Northfield Creamery",
                         "model_number": "NC4512", "lot_codes": ["NC4512"]},
              "confidence": {"product": 0.8, "company": 0.8, "model_number": 0.99,
                             "lot_codes": 0.8},
              "needs_review": ["product", "company", "lot_codes"],
              "spans": {"product": [[58, 64]], "company": [[0, 19]],
                        "model_number": [[58, 64]], "lot_codes[0]": [[58, 64]]}}
    assert shared_with(record) == {"product": ["product", "model_number"],
                                  "model_number": ["product", "model_number"]}
    notes = field_notes(record)
    assert "the same text at the same place as 'model_number'" in notes["product"].why
    assert "copied from the document" in notes["company"].why and "same place" not in (
        notes["company"].why)
    # the same text at another place is two readings, not one read twice
    other = {**record, "spans": {**record["spans"], "model_number": [[70, 76]]}}
    assert shared_with(other) == {} and shared_with({"output": None}) == {}
