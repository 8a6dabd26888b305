"""How a line-oriented value is written is no part of it (newcomer22 probe,
finding 7): a trailing ``#`` comment (``home: https://x.example  # project
page``, ``appVersion: 1.2.3  # pinned``), single quotes where an example
double-quotes (``appVersion: 'v5.3.1'`` beside ``"2.8.0"``), a YAML block
scalar's indicator (``description: >-`` over its lines)."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.value_clauses import block_indicator, comment_arguments, comment_start
from tests.locator_support import learned_rules, scored


class Chart(BaseModel):
    name: str | None = None
    home: str | None = None
    app_version: str | None = None
    description: str | None = None


CHARTS = [
    Example('apiVersion: v2\nname: webshop\nhome: https://shop.example\nappVersion: "2.8.0"\n'
            "description: A chart for the webshop\n",
            Chart(name="webshop", home="https://shop.example", app_version="2.8.0",
                  description="A chart for the webshop")),
    Example("apiVersion: v2\nname: gateway\nhome: https://gw.example.org\nappVersion: 1.19.2\n"
            "description: Forwards metrics\n",
            Chart(name="gateway", home="https://gw.example.org", app_version="1.19.2",
                  description="Forwards metrics")),
]


def test_where_an_inline_comment_begins() -> None:
    line = "home: https://x.example  # project page"
    assert line[:comment_start(line, 6, len(line))] == "home: https://x.example"
    for plain in ("name: C# tools", "color: #ff0000", "tag: x#1", "req: numpy ; extra == 'x'"):
        assert comment_start(plain, 5, len(plain)) == len(plain), plain
    assert comment_start("key:   # nothing", 5, 16) == 5  # a comment alone: no value
    line = "v: 1.2 # a"
    args = [(3, 6), (7, 8), (9, 10)]
    assert comment_arguments(line, args) == [(3, 6)]
    assert comment_arguments("# a b", [(0, 1), (2, 3), (4, 5)]) == [(0, 1), (2, 3), (4, 5)]
    assert block_indicator(">-") and block_indicator(" | ") and block_indicator(">2-")
    assert not block_indicator(">>") and not block_indicator("*") and not block_indicator("-")


def test_a_value_is_read_less_its_trailing_comment() -> None:
    rules = learned_rules(CHARTS, Chart)
    doc = ("apiVersion: v2\nname: ingest  # the chart\nhome: https://in.example  # project page\n"
           "appVersion: 5.3.1  # pinned by CI\ndescription: Ingests events\n")
    assert rules["home"].values(doc) == ["https://in.example"]
    assert rules["name"].values(doc) == ["ingest"]
    assert rules["app_version"].values(doc) == ["5.3.1"]  # (the line went on: no value)
    for name, value in (("home", "https://in.example"), ("app_version", "5.3.1")):
        assert scored(Chart.model_validate({name: value}), doc, rules, name) == HELD, name
    quoted = 'apiVersion: v2\nname: "a # b"\n'
    assert rules["name"].values(quoted) == ["a # b"]  # inside quotes: no comment


def test_a_comment_an_example_keeps_is_kept() -> None:
    kept = [*CHARTS, Example("name: tools  # internal\nhome: https://t.example\n",
                             Chart(name="tools  # internal", home="https://t.example"))]
    rules = learned_rules(kept, Chart)
    assert rules["name"].values("name: ingest  # the chart\n") == ["ingest  # the chart"]


def test_single_quotes_are_read_as_an_examples_double_quotes() -> None:
    rules = learned_rules(CHARTS, Chart)
    doc = "apiVersion: v2\nname: ingest\nappVersion: 'v5.3.1'\n"
    assert rules["app_version"].values(doc) == ["v5.3.1"]
    assert scored(Chart(app_version="v5.3.1"), doc, rules, "app_version") == HELD


def test_a_block_scalar_is_read_below_its_indicator() -> None:
    rules = learned_rules(CHARTS, Chart)
    for marker in (">-", "|", ">"):
        doc = (f"apiVersion: v2\nname: ingest\ndescription: {marker}\n  Ingests events from\n"
               "  the edge\ntype: application\n")
        (value,) = rules["description"].values(doc)
        assert " ".join(value.split()) == "Ingests events from the edge", marker
        # across lines, as no example's value runs: offered, not pinned
        assert scored(Chart(description=value), doc, rules, "description") < REVIEW_BELOW
