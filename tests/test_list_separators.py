"""A list's learned separator reads its class of forms, and an item that may
be an unsplit list is never pinned (newcomer24 probe, the only wrong-sure
fault: ``ignore = E261,E731,W503`` came back one item ``E261,E731,W503`` at
0.99 where the examples wrote ``ignore = E203, W503``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.list_separators import item_marks, loose, separator_form, unsplit
from agentflow.grounding.locators import Locator, learn_locators
from agentflow.grounding.quotes import read_items
from agentflow.output.examples import check_examples


class Lint(BaseModel):
    ignore: list[str] = Field(default_factory=list, description="the codes of the ignore key")
    authors: list[str] = Field(default_factory=list, description="the authors")


def _rule(first: str, second: str, field: str = "ignore") -> Locator:
    examples = [
        Example(f"[flake8]\n{first}\nmax-line-length = 88\n",
                Lint(ignore=["E203", "W503"], authors=["Jane Roe", "Li Wei"])),
        Example(f"[flake8]\nexclude = .git\n{second}\n",
                Lint(ignore=["E501"], authors=["Ann Lee"])),
    ]
    return learn_locators(check_examples(examples, Lint), Lint)[field]


def _confidence(rule: Locator, doc: str, items: list[str]) -> float:
    out = Lint(**{rule.field: items})
    confidence, _ = field_confidence(out, doc, {}, {rule.field: rule})
    return confidence[rule.field]


def test_a_separator_reads_the_same_mark_with_any_blanks() -> None:
    rule = _rule("ignore = E203, W503", "ignore = E501")
    assert rule.split == ", " and "items split by ',' with any blanks around it" in rule.describe()
    for line in ("ignore = E261,E731,W503", "ignore = E261 ,E731 ,  W503",
                 "ignore = E261,\tE731, W503"):
        doc = f"[flake8]\n{line}\nmax-line-length = 121\n"
        assert rule.values(doc) == ["E261", "E731", "W503"], line
        assert _confidence(rule, doc, ["E261", "E731", "W503"]) == HELD
    doc = "[flake8]\nignore = E261,E731,W503\n"  # the one item the rule once read is no value
    assert _confidence(rule, doc, ["E261,E731,W503"]) < REVIEW_BELOW


def test_each_mark_has_its_own_class_and_other_separators_keep_their_blanks() -> None:
    assert separator_form("; ").split("a;b ; c") == ["a", "b", "c"]
    assert separator_form(" | ").split("a|b  |c") == ["a", "b", "c"]
    assert separator_form(", ").split("a;b") == ["a;b"]  # another mark is another class
    assert separator_form(" - ").split("GPL-2.0 -  MIT") == ["GPL-2.0", "MIT"]
    assert separator_form(" and ").split("sandbox and\tcore") == ["sandbox", "core"]
    assert separator_form("/").split("a / b") == ["a ", " b"]  # as written, no blanks
    assert separator_form("\t").split("New York\tBoston") == ["New York", "Boston"]
    assert read_items('"io, net",fix', ", ", unquote=True) == ["io, net", "fix"]


def test_an_item_with_a_separator_no_example_item_holds_is_not_pinned() -> None:
    rule = _rule("ignore = E203, W503", "ignore = E501")
    assert rule.marks == ""
    for items in (["E203;W503"], ["E203|W503"], ["E203 W503"]):
        doc = f"[flake8]\nignore = {items[0]}\n"
        assert rule.values(doc) == items
        assert _confidence(rule, doc, items) < REVIEW_BELOW, items
    doc = "[flake8]\nignore = E203\n"
    assert _confidence(rule, doc, ["E203"]) == HELD


def test_a_list_written_one_item_a_line_read_on_one_line_is_not_pinned() -> None:
    rule = _rule("ignore = E203\n    W503", "ignore = E501")
    assert rule.continued and rule.split is None
    doc = "[flake8]\nignore = E203\n    E266\n"
    assert _confidence(rule, doc, ["E203", "E266"]) == HELD
    doc = "[flake8]\nignore = E203,E266\n"  # the rule cannot tell the separator
    assert rule.values(doc) == ["E203,E266"]
    assert _confidence(rule, doc, ["E203,E266"]) < REVIEW_BELOW


def test_a_mark_whose_parts_are_no_items_is_the_items_own_syntax() -> None:
    """``idna; extra == "web"`` (a requirement and its environment marker; here
    a code and a marker) under examples whose items are single tokens: cut at
    its ``;``, a part holds blanks no example's item holds, so the ``;`` is no
    separator and the item stays pinned; ``E203; W503`` still is not."""
    rule = _rule("ignore = E203\nignore = W503", "ignore = E501")
    assert rule.marks == ""
    assert not unsplit('idna; extra == "web"', "") and not unsplit("a | b c", "")
    assert unsplit("E203; W503", "") and unsplit("E203 W503", "")
    assert unsplit("a,b;c", "")
    doc = '[flake8]\nignore = E203\nignore = E731; python_version < "3.8"\n'
    items = ["E203", 'E731; python_version < "3.8"']
    assert rule.values(doc) == items
    assert _confidence(rule, doc, items) == HELD


def test_a_phrase_holds_its_own_punctuation() -> None:
    rule = _rule("ignore = E203, W503\nauthors = Jane Roe; Li Wei",
                 "ignore = E501\nauthors = Ann Lee", "authors")
    assert rule.split == "; " and " " in (rule.marks or "")
    doc = "[flake8]\nauthors = Acme, Inc.;Bo Li\n"
    assert rule.values(doc) == ["Acme, Inc.", "Bo Li"]
    assert _confidence(rule, doc, ["Acme, Inc.", "Bo Li"]) == HELD
    assert item_marks(["a b", "c,d"]) == ", " and not unsplit("x;y", " ")
    assert unsplit("x,y", "") and not unsplit("x,y", ",")


class Amounts(BaseModel):
    amounts: list[str] = Field(default_factory=list, description="the amounts key")


def test_a_mark_an_example_item_holds_is_the_items_own() -> None:
    # ``1,200, 3,400`` under ``, ``: read in any form, the examples' own items split and the
    # rule, held before, was no longer learned
    examples = check_examples([
        Example("[a]\namounts = 1,200, 3,400\n", Amounts(amounts=["1,200", "3,400"])),
        Example("[a]\nname = q\namounts = 5,000\n", Amounts(amounts=["5,000"]))], Amounts)
    rule = learn_locators(examples, Amounts)["amounts"]
    assert rule.split == ", " and "items split by ', '" in rule.describe()
    doc = "[a]\namounts = 7,100, 8,250\n"
    assert rule.values(doc) == ["7,100", "8,250"]
    confidence, _ = field_confidence(Amounts(amounts=["7,100", "8,250"]), doc, {},
                                     {"amounts": rule})
    assert confidence["amounts"] == HELD
    assert loose(", ", "") and not loose(", ", ",") and not loose(", ", None)
    assert loose(" - ", "-")  # a mark inside a word (``GPL-2.0``): blanks still read it
