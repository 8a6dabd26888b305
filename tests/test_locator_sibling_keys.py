"""A value read over continuation lines stops at a sibling key (newcomer18
probe, finding 8): ``- uses: x`` followed by ``  name: Check out`` or a
``  with:`` block read the key lines as the value's rest. Now a continuation
line that begins with a key at the value's own key's column ends the value,
unless an example's value runs over such a line; and where an example's
label also holds values that are not the field's (another ``- uses:``), a
value without the head every example's value begins with is not pinned."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.lines import continuation_to_key, key_column
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.value_heads import value_head
from agentflow.output.examples import check_examples


class Steps(BaseModel):
    checkout: str | None = Field(None, description="the checkout action")


EXAMPLES = [
    Example("jobs:\n  test:\n    steps:\n      - uses: actions/checkout@v4\n"
            "      - uses: actions/setup-python@v5\n        with:\n"
            "          python-version: 3.12\n",
            Steps(checkout="actions/checkout@v4")),
    Example("jobs:\n  build:\n    steps:\n      - uses: actions/checkout@v3\n"
            "      - name: Build\n        run: make\n",
            Steps(checkout="actions/checkout@v3")),
]


JOB = "jobs:\n  a:\n    steps:\n"


def _rule(examples: list[Example], model: type[BaseModel], name: str) -> Locator:
    return learn_locators(check_examples(examples, model), model)[name]


def _score(value: str | None, doc: str, rule: Locator) -> float:
    return field_confidence(Steps(checkout=value), doc, {}, {"checkout": rule})[0]["checkout"]


def test_continuation_stops_at_a_key_at_the_lines_own_key_column() -> None:
    lines = ["  - uses: x", "    with:", "      a: b"]
    assert key_column(lines[0]) == 4
    assert continuation_to_key(lines, 0) == []
    lines = ["  - run: make", "      --jobs 4", "    name: Build"]
    assert continuation_to_key(lines, 0) == ["      --jobs 4"]
    header = ["Subject: a long", " subject: folded", "From: x"]  # right of the key's column
    assert continuation_to_key(header, 0) == [" subject: folded"]


def test_a_value_stops_before_a_sibling_key_and_its_block() -> None:
    rule = _rule(EXAMPLES, Steps, "checkout")
    assert not rule.keyed
    named = JOB + "      - uses: actions/checkout@v4\n        name: Check out\n      - run: make\n"
    assert rule.values(named) == ["actions/checkout@v4"]
    assert _score("actions/checkout@v4", named, rule) == HELD
    block = JOB + "      - uses: actions/checkout@v4\n        with:\n          fetch-depth: 0\n"
    assert rule.values(block) == ["actions/checkout@v4"]
    assert _score("actions/checkout@v4", block, rule) == HELD


def test_a_value_without_the_examples_head_is_not_pinned() -> None:
    rule = _rule(EXAMPLES, Steps, "checkout")
    assert rule.head == "actions/checkout@"
    other = JOB + "      - uses: actions/stale@v9\n        with:\n          days: 60\n"
    assert rule.values(other) == ["actions/stale@v9"]
    assert _score("actions/stale@v9", other, rule) < REVIEW_BELOW
    pinned = JOB + "      - uses: actions/checkout@v2\n"
    assert _score("actions/checkout@v2", pinned, rule) == HELD


def test_a_head_needs_a_label_that_holds_other_values() -> None:
    assert value_head(["actions/checkout@v4", "actions/checkout@v3"],
                      ["actions/checkout@v4", "actions/checkout@v3"]) == ""
    assert value_head(["actions/checkout@v4"], ["actions/setup-python@v5"]) == ""
    assert value_head(["v1.2", "v1.3"], ["x"]) == ""  # no word in it
    assert value_head(["Nightly build", "Nightly test"], ["x"]) == ""  # no head in one token

    class Repo(BaseModel):
        repository: str | None = None

    once = [Example('repository = "https://github.com/a/b"\n', Repo(repository="https://github.com/a/b")),
            Example('repository = "https://github.com/c/d"\n', Repo(repository="https://github.com/c/d"))]
    assert _rule(once, Repo, "repository").head == ""


class Note(BaseModel):
    note: str | None = None


def test_a_value_the_examples_run_over_key_lines_keeps_them() -> None:
    examples = [Example("- note: first part\n  and: the rest\n- id: 1\n",
                        Note(note="first part\n  and: the rest")),
                Example("- note: one\n  more: two\n- id: 2\n", Note(note="one\n  more: two"))]
    rule = _rule(examples, Note, "note")
    assert rule.keyed
    assert rule.values("- note: a\n  b: c\n- id: 3\n") == ["a\n  b: c"]
