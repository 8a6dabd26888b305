"""Extraction that generalises (issue 30): grounding is the default of
extraction, values have clean edges, example values are never copied, and
locators are learned from the worked examples (vendor path with
``FunctionModel``; the grammar the embedded model gets is checked as text
here and decoded for real in tests/test_providers_local.py)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.errors import GroundingError
from agentflow.extraction.defaults import EXTRACTION_DEFAULT, extraction_marker
from agentflow.grounding import Grounded, check_grounding
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import Derived, mark_all_strings
from agentflow.grounding.values import grounded_values
from agentflow.output.examples import check_examples
from agentflow.output.grammar import substring_grammar
from agentflow.output.grammar_marks import _CLEAN_EDGES
from agentflow.output.schema import OutputSpec
from agentflow.testing import FunctionModel, RecordedRequest

SEPARATORS = {"key_separator": ": ", "item_separator": ", "}


class Dist(BaseModel):
    """A plain newcomer schema: no markers, no patterns."""

    name: str | None = Field(None, description="the distribution name")
    version: str | None = Field(None, description="the version")
    author: str | None = Field(None, description="the author's name and e-mail")
    requires: list[str] = Field(default_factory=list, description="requirements")


EXAMPLES = [
    Example("Metadata-Version: 2.1\nName: widgetkit\nVersion: 3.2.0\n"
            "Author: Jane Roe <jane@widgetkit.example>\nRequires-Dist: attrs>=22.1\n"
            "Requires-Dist: colorama\n",
            Dist(name="widgetkit", version="3.2.0", author="Jane Roe <jane@widgetkit.example>",
                 requires=["attrs>=22.1", "colorama"])),
    Example("Metadata-Version: 2.4\nName: tinyparse\nVersion: 0.4\nLicense: MIT\n",
            Dist(name="tinyparse", version="0.4")),
]

DOC = ("Metadata-Version: 2.1\nName: frobnicate\nVersion: 4.16.0\n"
       "Author: Ann Example <ann@example.net>\nRequires-Dist: requests>=2.0\n")


def answers(*outputs: dict[str, Any]) -> FunctionModel:
    """A model that answers each request with the next output (the last repeats)."""
    replies = [json.dumps(o) for o in outputs]
    seen: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> str:
        seen.append(request)
        return replies[min(len(seen), len(replies)) - 1]

    return FunctionModel(answer)


GOOD = {"name": "frobnicate", "version": "4.16.0", "author": "Ann Example <ann@example.net>",
        "requires": ["requests>=2.0"]}


async def run(model: FunctionModel, output: Any = Dist, **kw: Any) -> Any:
    (result,) = [r async for r in extract_many(model, [DOC], output, **kw)]
    return result


async def test_an_invented_value_is_sent_back_then_refused_by_default() -> None:
    invented = {**GOOD, "author": "Ann Example <ann@example.org>"}  # .org: not in the text
    model = answers(invented, GOOD)
    result = await run(model)
    assert result.ok and result.output.author == GOOD["author"] and result.attempts == 2
    result = await run(answers(invented))  # never fixed: a typed error, no ok record
    assert not result.ok and isinstance(result.error, GroundingError)
    assert "author" in str(result.error)


async def test_no_ground_and_derived_fields_opt_out() -> None:
    class Lowered(BaseModel):
        name: str
        email: Annotated[str, Derived()]  # normalised: not copied

    lowered = {"name": "frobnicate", "email": "ANN@EXAMPLE.NET"}
    result = await run(answers(lowered), Lowered)
    assert result.ok and set(result.spans) == {"name"}  # the derived field is not grounded
    invented = {**GOOD, "author": "Somebody Else"}
    result = await run(answers(invented), ground=False)
    assert result.ok and result.spans == {}


async def test_example_values_are_never_copied() -> None:
    copied = {**GOOD, "name": "widgetkit"}  # the first example's value, not in DOC
    result = await run(answers(copied), examples=EXAMPLES)
    # never in the record: the field dropped, flagged and named (``extraction.dropped``)
    assert result.ok and result.output.name is None and "name" in result.needs_review
    why = result.dropped["name"]
    assert "'widgetkit'" in why and "an example's value" in why
    invented = await run(answers({**GOOD, "name": "gadgetkit"}), examples=EXAMPLES)
    assert not invented.ok and isinstance(invented.error, GroundingError)


async def test_a_separator_or_a_label_at_an_edge_is_sent_back() -> None:
    for unclean in (": 4.16.0", "Version: 4.16.0", "4.16.0;"):
        model = answers({**GOOD, "version": unclean}, GOOD)
        result = await run(model)
        assert result.ok and result.output.version == "4.16.0" and result.attempts == 2, unclean
    cut = {**GOOD, "requires": ["2.0"]}  # an operand without its operator: cuts a token
    result = await run(answers(cut))
    assert not result.ok and "cuts through the token" in str(result.error)


def test_examples_relax_the_default_where_they_show_otherwise() -> None:
    assert extraction_marker(EXAMPLES, Dist) == EXTRACTION_DEFAULT
    sub = [Example("Author: Jane Roe-Smith", Dist(author="Roe"))]  # part of a token
    assert extraction_marker(sub, Dist) == Grounded(clean=True)
    labelled = [Example("Version: 3.2.0", Dist(version="Version: 3.2.0"))]
    assert extraction_marker(labelled, Dist) == Grounded(whole_tokens=True)


def test_the_clean_rule_reads_the_line() -> None:
    source = "Fixes:\n  * d/control: Bump the version: now 2\nVersion: 4.16.0\n"
    values = grounded_values(Dist(name="d/control: Bump the version: now 2", version="4.16.0"),
                             Dist, EXTRACTION_DEFAULT)
    assert check_grounding(values, source).ok  # no label: "d/control" is no label word
    values = grounded_values(Dist(version="Version: 4.16.0"), Dist, EXTRACTION_DEFAULT)
    check = check_grounding(values, source)
    assert [(p, v) for p, v, _ in check.unclean] == [("version", "Version: 4.16.0")]
    assert "label 'Version:'" in check.message()


def test_locators_are_learned_from_the_examples_and_checked_leave_one_out() -> None:
    locators = learn_locators(check_examples(EXAMPLES, Dist), Dist)
    assert {n: (r.left, r.anchored, r.right) for n, r in locators.items()} == {
        "name": ("Name: ", True, ""), "version": ("Version: ", True, ""),
        "author": ("Author: ", True, ""), "requires": ("Requires-Dist: ", True, "")}
    assert locators["version"].values(DOC) == ["4.16.0"]
    assert locators["requires"].values(DOC) == ["requests>=2.0"]
    # a label the other example does not write is not kept (leave-one-out)
    other = [EXAMPLES[0], Example("Name: tinyparse\nRelease: 0.4\n",
                                  Dist(name="tinyparse", version="0.4"))]
    assert "version" not in learn_locators(check_examples(other, Dist), Dist)
    # one list written on one line: its separator is learned
    listed = [Example("Depends: a (>= 1), b\nName: x", Dist(name="x", requires=["a (>= 1)", "b"])),
              Example("Name: y\nDepends: c", Dist(name="y", requires=["c"]))]
    rule = learn_locators(check_examples(listed, Dist), Dist)["requires"]
    assert rule.split == ", " and rule.values("Depends: libc6 (>= 2.34), zlib1g") == [
        "libc6 (>= 2.34)", "zlib1g"]


def test_a_context_common_to_two_examples_locates_values_without_a_label() -> None:
    class Head(BaseModel):
        version: str

    shown = [Example("barbaz (1.0-1) unstable; urgency=low", Head(version="1.0-1")),
             Example("quux (2:4.12-2) sid; urgency=high", Head(version="2:4.12-2"))]
    rule = learn_locators(check_examples(shown, Head), Head)["version"]
    assert (rule.left, rule.anchored, rule.right) == (" (", False, ") ")
    assert rule.values("acme (0.9~rc1) experimental; urgency=medium\n  * Fix (it).") == [
        "0.9~rc1"]
    # from one example only, a generalised context is not kept
    assert learn_locators(check_examples(shown[:1], Head), Head) == {}


def test_the_grammar_offers_only_the_located_values() -> None:
    locators = learn_locators(check_examples(EXAMPLES, Dist), Dist)
    schema = mark_all_strings(OutputSpec.of(Dist).schema_for("local").schema, EXTRACTION_DEFAULT)
    located = apply_locators(schema, locators, DOC + "Version: 5\n")
    grammar = substring_grammar(located, DOC + "Version: 5\n", SEPARATORS)
    assert grammar is not None
    assert '("4.16.0")' in grammar and '"5"' not in grammar  # the first located value
    assert '"[" "\\"requests>=2.0\\"" "]"' in grammar  # exactly the located items
    # a field its locator does not find in a document of the examples' layout (most of
    # their other keys written) can only be null
    bare = apply_locators(schema, locators, "Metadata-Version: 2.1\nName: x\nLicense: MIT\n")
    assert bare["properties"]["version"] == {"type": "null"} or all(
        b.get("type") == "null" for b in bare["properties"]["version"]["anyOf"])
    # in a document of another layout nothing says it is empty: its ordinary grounding
    prose = apply_locators(schema, locators, "Name: x\nThe version is 2.0 this year.\n")
    assert prose["properties"]["version"] == schema["properties"]["version"]


def test_the_grammar_holds_clean_edges() -> None:
    schema = mark_all_strings(OutputSpec.of(Dist).schema_for("local").schema, EXTRACTION_DEFAULT)
    grammar = substring_grammar(schema, DOC, SEPARATORS)
    assert grammar is not None and "& CLEAN_EDGES)" in grammar
    assert _CLEAN_EDGES in grammar.splitlines()


async def test_a_long_document_whose_needed_field_is_past_the_cut_is_read_whole() -> None:
    class Entry(BaseModel):
        title: str
        signed: str = Field(description="who signed, on the last line")

    text = "Title: Notes\n" + "".join(f"- item {i} of the body text\n" for i in range(40)) + (
        "Signed: Jane Roe")
    model = answers({"title": "Notes", "signed": "Jane Roe"})
    (result,) = [r async for r in extract_many(model, [text], Entry, max_chars=300)]
    assert result.ok and result.truncated is None  # read whole: nothing was left out
    assert text[slice(*result.spans["signed"][0])] == "Jane Roe"
    assert result.attempts == 4  # the cut text (sent back twice, then refused), then whole
    first, *_, last = [next(m.text for m in r.messages if m.role == "user")
                       for r in model.requests]
    assert len(first) <= 300 and last == text
    # a document whose cut part holds every value stays cut
    (result,) = [r async for r in extract_many(answers({"title": "Notes", "signed": "item 1"}),
                                               [text], Entry, max_chars=300)]
    assert result.ok and result.truncated is not None and result.attempts == 1


async def test_the_web_demo_grounds_its_fields_by_default() -> None:
    from agentflow import ReActAgent
    from agentflow.events import Complete
    from examples.web.app import INSTRUCTIONS, OUTPUT, Contact

    text = ("Hi, I'm Ada Lovelace from the Analytical Engine Company in London. Reach me at "
            "ada@example.org or +44 20 7946 0000.")
    right = {"name": "Ada Lovelace", "email": "ada@example.org",
             "company": "Analytical Engine Company", "phone": "+44 20 7946 0000",
             "city": "London"}
    model = answers({**right, "email": "ada@example.com"}, right)
    agent = ReActAgent("web-demo", model, sys_prompt=INSTRUCTIONS, output=OUTPUT)
    events = [e async for e in agent.stream(text, Contact)]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.output == Contact(**right)
    assert len(model.requests) == 2  # the invented address was sent back


def test_a_field_named_type_is_grounded_like_any_other() -> None:
    class Unit(BaseModel):
        type: str | None = None
        properties: list[str] = []

    schema = mark_all_strings(OutputSpec.of(Unit).schema_for("local").schema, EXTRACTION_DEFAULT)
    assert schema["properties"]["type"]["anyOf"][0]["x-grounded"] == "whole_tokens"
    assert schema["properties"]["properties"]["items"]["x-grounded"] == "whole_tokens"
    assert substring_grammar(schema, "Type=oneshot\n", SEPARATORS) is not None
