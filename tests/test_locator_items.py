"""A list learned as every item of the document's list (issue 30): when each
worked example's list is exactly its text's outer list items, the locator
takes them all, in order, across group headings and blank lines; the
grammar of the embedded model then writes exactly those items (the first
``max_length`` ones), and confidence rates a list that holds them as held
and one that lost an item as disagreeing (vendor path, ``FunctionModel``)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.extraction.confidence import DISAGREES, HELD, LIST_CUT, field_confidence
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report
from agentflow.grounding import Grounded
from agentflow.grounding.items import item_spans, own_item_spans, own_items
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.output.examples import check_examples
from agentflow.output.grammar import substring_grammar
from agentflow.output.schema import OutputSpec
from agentflow.testing import FunctionModel, RecordedRequest

Item = Annotated[str, Grounded(whole_items=True)]


class Notes(BaseModel):
    title: str = Field(description="the first line")
    items: list[Item] = Field(description="the list items", max_length=3)


EXAMPLES = [
    Example("Release one\n\n  * Fix the parser.\n    Thanks to Ann.\n  * Drop a patch.\n",
            Notes(title="Release one", items=["Fix the parser.\n    Thanks to Ann.",
                                              "Drop a patch."])),
    Example("Release two\n\n  [ Bo ]\n  - Add a test.\n\n  [ Cy ]\n  - Bump the version.\n",
            Notes(title="Release two", items=["Add a test.", "Bump the version."])),
]

DOC = ("Release three\n\n  [ Dee ]\n  * New upstream release.\n    - Fixes a crash.\n"
       "  * Refresh patches.\n\n  [ Eve ]\n  * Update the watch file.\n"
       "  * Switch to debhelper 13.\n")
OWN = ["New upstream release.", "Fixes a crash.", "Refresh patches.",
       "Update the watch file.", "Switch to debhelper 13."]


def test_own_items_end_at_a_nested_item_and_cross_headings() -> None:
    assert own_items(DOC) == OWN
    assert own_items("no list here\n") == []
    outer, own = item_spans(DOC)[0], own_item_spans(DOC)[0]
    assert own[0] == outer[0] and DOC[own[1]:outer[1]] == "\n    - Fixes a crash."
    assert own_items("  * a\n    b\n\n    - c\n      d\n    e\n") == ["a\n    b", "c\n      d"]


def test_an_own_text_is_a_whole_item_and_its_nested_items_are_values_of_their_own() -> None:
    from agentflow.grounding.locate import occurrences

    assert occurrences("New upstream release.", DOC, whole_items=True)
    assert occurrences("New upstream release.\n    - Fixes a crash.", DOC, whole_items=True)
    assert not occurrences("New upstream", DOC, whole_items=True)


def test_the_items_rule_is_learned_only_when_every_example_takes_every_item() -> None:
    rule = learn_locators(check_examples(EXAMPLES, Notes), Notes)["items"]
    assert rule.items and rule.many and rule.values(DOC) == OWN
    assert "every list item" in rule.describe()
    # one example alone does not generalise
    assert "items" not in learn_locators(check_examples(EXAMPLES[:1], Notes), Notes)
    # an example that takes only some of its items teaches no such rule
    some = [EXAMPLES[0], Example("Release two\n  * Add a test.\n  * Bump it.\n",
                                 Notes(title="Release two", items=["Add a test."]))]
    assert "items" not in learn_locators(check_examples(some, Notes), Notes)


def test_the_grammar_writes_exactly_the_first_max_length_items() -> None:
    locators = learn_locators(check_examples(EXAMPLES, Notes), Notes)
    schema = mark_all_strings(OutputSpec.of(Notes).schema_for("local").schema, None)
    located = apply_locators(schema, locators, DOC)
    assert located["properties"]["items"]["x-grounded-values"] == OWN[:3]
    grammar = substring_grammar(located, DOC, {"key_separator": ": ", "item_separator": ", "})
    assert grammar is not None
    assert '"[" ' + ' ", " '.join(json.dumps(json.dumps(v)) for v in OWN[:3]) + ' "]"' in (
        grammar)


def test_confidence_holds_the_first_items_and_flags_a_lost_one() -> None:
    locators = learn_locators(check_examples(EXAMPLES, Notes), Notes)
    full = Notes.model_construct(title="Release three", items=OWN[:3])
    confidence, _ = field_confidence(full, DOC, {}, locators)
    assert confidence["items"] == HELD  # at max_length: the first three, in order
    lost = Notes.model_construct(title="Release three", items=[OWN[0], OWN[2]])
    confidence, _ = field_confidence(lost, DOC, {}, locators)
    assert confidence["items"] == DISAGREES


def answers(output: dict[str, Any]) -> FunctionModel:
    def answer(request: RecordedRequest) -> str:
        return json.dumps(output)

    return FunctionModel(answer)


async def test_a_record_that_lost_an_item_or_kept_only_the_first_max_length_needs_review() -> None:
    # the first max_length (3) of the document's 5 items: right as far as it goes, but
    # not the document's list (the record says how many it lists); an item lost: disagrees
    records = []
    for items, level in ((OWN[:3], LIST_CUT), (OWN[1:3], DISAGREES)):
        model = answers({"title": "Release three", "items": items})
        (result,) = [r async for r in extract_many(model, [DOC], Notes, examples=EXAMPLES)]
        assert result.ok and "items" in result.needs_review
        assert result.confidence["items"] == level
        assert result.cut_lists == ({"items": len(OWN)} if level == LIST_CUT else {})
        records.append(to_record(result))
    assert records[0]["cut_lists"] == {"items": 5} and "cut_lists" not in records[1]
    assert "the document lists 5 items; kept the first 3" in render_report(records[:1],
                                                                           {"0": DOC})

