"""Numbered list items learn a locator as bulleted ones do (``1.`` ``2)``
``(a)`` ``i.``: ``agentflow.grounding.list_markers``), and a rule learned
from one-word examples of a ``Key: value`` line reads the rest of the line,
not one word (the newcomer's bug reports: ``Component: settings UI`` was
forced to ``settings`` at 0.99)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.list_markers import item_lines, marker_kind, marker_length
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from agentflow.testing import FunctionModel


class Bug(BaseModel):
    title: str
    component: str
    steps: list[str] = []


def _examples(marks: list[str]) -> list[Example]:
    """The bug examples with the steps written behind ``marks`` (one a step)."""
    a, b, c = marks
    return [
        Example(f"#1 Tooltip flickers over the toolbar\n\nComponent: toolbar\n\n"
                f"### Steps\n{a}Open any document\n{b}Hover over Bold\n\n### Expected\nIt stays.\n",
                Bug(title="Tooltip flickers over the toolbar", component="toolbar",
                    steps=["Open any document", "Hover over Bold"])),
        Example(f"#2 Sync stops after sleep\n\nComponent: sync-daemon\n\n"
                f"### Steps\n{a}Start a sync\n{b}Close the lid\n{c}Open the lid\n\n"
                f"### Expected\nIt resumes.\n",
                Bug(title="Sync stops after sleep", component="sync-daemon",
                    steps=["Start a sync", "Close the lid", "Open the lid"])),
    ]


@pytest.mark.parametrize("marks", [["- ", "- ", "- "], ["1. ", "2. ", "3. "],
                                   ["1) ", "2) ", "3) "], ["(a) ", "(b) ", "(c) "],
                                   ["i. ", "ii. ", "iii. "], ["a. ", "b. ", "c. "]])
def test_numbered_steps_learn_a_rule_as_bullets_do(marks: list[str]) -> None:
    examples = check_examples(_examples(marks), Bug)
    rule = learn_locators(examples, Bug)["steps"]
    a, b, c = marks
    doc = (f"#3 Crash on export\n\nComponent: export\n\n### Steps\n{a}New project\n"
           f"{b}Add a layer\n{c}Export\n\nSee also 4. below; v2. 1 item\n")
    assert rule.values(doc) == ["New project", "Add a layer", "Export"]
    # no label of their own: the heading their examples write them under is theirs
    # (``agentflow.grounding.list_heading``), where the markers' items are its lists
    assert rule.labelled == (rule.heading == "steps") and not rule.mentioned(doc)
    assert any(line.startswith("learned: steps:") for line in learned_lines(
        learn_locators(examples, Bug), examples, Bug))


def test_marker_kinds() -> None:
    assert marker_kind(["1. ", "2. ", "10. "]) == "1. "
    assert marker_kind(["(i) ", "(ii) "]) == "(i) "
    assert marker_kind(["c. ", "d. "]) == "a. "  # "c" alone could be roman; "d" is not
    assert marker_kind(["- ", "- "]) is None  # the same text: a plain line start
    assert marker_kind(["1. ", "b) "]) is None and marker_kind(["1. "]) is None
    assert marker_length("12. Do it", "1. ") == 4 and marker_length("12.Do it", "1. ") is None


def test_a_one_word_example_extent_reads_the_rest_of_the_line() -> None:
    # "toolbar" first occurs in the title, so the rule is learned from line arguments;
    # both examples' components are one word, the whole rest of their line
    examples = check_examples(_examples(["- ", "- ", "- "]), Bug)
    rule = learn_locators(examples, Bug)["component"]
    assert rule.arg is None and rule.anchored
    assert rule.values("Component: settings UI\n") == ["settings UI"]
    doc = "[Bug] Dark mode resets\n\nComponent: settings UI\n\nHow to reproduce:\n- quit\n"

    async def run(component: str) -> Any:
        model = FunctionModel(lambda request: json.dumps(
            {"title": "Dark mode resets", "component": component, "steps": ["quit"]}))
        (result,) = [r async for r in extract_many(model, [doc], Bug, examples=_examples(
            ["- ", "- ", "- "]))]
        return result

    import asyncio
    # the rule reads a label's line to its end, as every example's value runs: more
    # words of the kinds the examples' values hold (letters) are the line's value too,
    # pinned; a shorter reading disagrees with it
    assert asyncio.run(run("settings UI")).confidence["component"] == HELD
    assert asyncio.run(run("settings")).confidence["component"] < REVIEW_BELOW


class Page(BaseModel):
    name: str
    section: str


def test_an_argument_rule_says_it_takes_one_word() -> None:
    # the section is argument 2 of a .TH line (not the rest of it): one word, said so
    pages = [Example('.TH LS "1" "May 2023"\nls \\- list\n', Page(name="ls", section="1")),
             Example('.TH CP 1 "June 2023"\ncp \\- copy\n', Page(name="cp", section="1"))]
    checked = check_examples(pages, Page)
    rule = learn_locators(checked, Page)["section"]
    assert rule.arg == 1
    assert "(one word, or one quoted string)" in rule.describe()


def test_an_argument_last_on_every_example_line_reads_no_longer_line() -> None:
    # every example ends its .TH line at the section: whether the value stops at one
    # word there the examples cannot show, so a .TH line that goes on gives no value
    pages = [Example(".TH LS 1\nls \\- list\n", Page(name="ls", section="1")),
             Example(".TH CP 1\ncp \\- copy\n", Page(name="cp", section="1"))]
    checked = check_examples(pages, Page)
    rule = learn_locators(checked, Page)["section"]
    assert rule.arg == 1 and rule.last
    assert "the last on its line" in rule.describe()
    assert rule.values(".TH RM 8\n") == ["8"]
    assert rule.values('.TH RM 8 "May 2023"\n') == []
    # examples that go on after it show the value is one argument
    shown = [Example('.TH LS 1 "May 2023"\n', Page(name="ls", section="1")),
             Example('.TH CP 1 "June 2023"\n', Page(name="cp", section="1"))]
    assert not learn_locators(check_examples(shown, Page), Page)["section"].last


@pytest.mark.parametrize("marks", [["a. ", "b. ", "c. "], ["A. ", "B. ", "C. "],
                                   ["(a) ", "(b) ", "(c) "], ["i. ", "ii. ", "iii. "],
                                   ["I. ", "II. ", "III. "]])
def test_initials_are_no_lettered_items(marks: list[str]) -> None:
    """A letter or roman numeral with a dot is also a name's initial: a
    marker of those kinds is an item's only in a run in sequence from the
    first (``a.`` ``b.``), never ``J. Smith`` nor ``A. Jones`` alone."""
    rule = learn_locators(check_examples(_examples(marks), Bug), Bug)["steps"]
    assert rule.marker
    a, b, c = marks
    people = "J. Smith\nA. Jones, head chef\nI. Newton\nC. Darwin\n"
    doc = (f"#3 Crash on export\n\nComponent: export\n\n### Steps\n{a}New project\n"
           f"{b}Add a layer\n{c}Export\nReported by\n{people}\n### Expected\nA file.\n")
    assert rule.values(doc) == ["New project", "Add a layer", "Export"]
    assert rule.values(f"### Steps\n{people}") == []
    # a list broken off goes on only from its first item again
    assert rule.values(f"### Steps\n{a}One\n{c}Three\n{a}Again\n{b}Two\n") == ["Again", "Two"]


def test_item_lines_of_letter_and_roman_lists() -> None:
    assert item_lines(["J. Smith", "A. Jones, head chef"], "a. ") == frozenset()
    assert item_lines(["a. x", "  more", "b. y", "B. z", "J. Smith"], "a. ") == {0, 2}
    assert item_lines(["i. x", "ii. y", "iii. z", "iv. w", "I. Newton"], "i. ") == {0, 1, 2, 3}
    assert item_lines(["iiii. x", "i. y"], "i. ") == frozenset()
    assert item_lines(["3. x", "7. y"], "1. ") == {0, 1}  # digits are no initials
