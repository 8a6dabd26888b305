"""``Grounded(line=...)``: a grounded value held to the lines of the source a
regular expression matches, in verification (``agentflow.extraction.
locate``), in the grammar (``agentflow.output.grammar_values.line_values``)
and in JSON Schema outputs (``"x-grounded-line"``); and grounded choices (a
marker on a ``Literal`` or ``str`` enum: the label must occur)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from agentflow.errors import SchemaError
from agentflow.grounding import (
    GROUNDED_KEY,
    LINE_KEY,
    Grounded,
    check_grounding,
    grounded_values,
    grounding_plan,
    locate,
)
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.json_schema import json_schema_output
from agentflow.output.schema import OutputSpec

ENTRY = ("vim (2:9.0.1378-1) unstable; urgency=medium\n\n"
         "  * Merge upstream patch 9.0.1499, \"quoted\" \\ text.\n"
         "    + Also 9.0.1500 for the unstable branch.\n"
         "  * New upstream patch 9.0.1378\n\n"
         " -- Zoë Maintainer <zoe@example.org>  Mon, 05 Feb 2024 18:02:11 +0000")
HEADER = r"urgency="
TRAILER = r"^ -- "
VERSION = r"^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$"
SEPARATORS = {"key_separator": ": ", "item_separator": ", "}


class Color(StrEnum):
    RED = "red"


class Header(BaseModel):
    version: Annotated[str, Grounded(whole_tokens=True, line=HEADER)] = Field(pattern=VERSION)
    distribution: Annotated[str, Grounded(whole_tokens=True, line=HEADER)] = Field(
        pattern=r"^[a-z]+$")
    maintainer: Annotated[str, Grounded(line=TRAILER)]


def _listed(grammar: str | None) -> dict[str, list[str]]:
    """The listed values of each ``GROUNDED_n`` terminal of a grammar."""
    assert grammar is not None
    out = {}
    for row in grammar.splitlines():
        name, _, body = row.partition(": ")
        if name.startswith("GROUNDED_") and body.startswith('"\\"" ('):
            out[name] = [json.loads('"' + json.loads(v) + '"')
                         for v in body[6:-6].split(" | ")]
    return out


def test_a_line_that_is_not_a_regular_expression_is_a_schema_error() -> None:
    with pytest.raises(SchemaError) as raised:
        Grounded(line="urgency=(")
    assert raised.value.path == "Grounded.line" and "'urgency=('" in str(raised.value)


def test_the_line_rule_reaches_the_local_dialect_only() -> None:
    local = dict(OutputSpec.of(Header).schema_for("local").schema)
    assert local["properties"]["version"][LINE_KEY] == HEADER
    assert local["properties"]["version"][GROUNDED_KEY] == "whole_tokens"
    for dialect in ("plain", "openai_strict", "gemini"):
        vendor = json.dumps(OutputSpec.of(Header).schema_for(dialect).schema)
        assert "x-grounded" not in vendor, dialect  # neither the mark nor the line rule


def test_verification_takes_the_occurrence_on_a_matching_line_and_refuses_others() -> None:
    good = Header(version="2:9.0.1378-1", distribution="unstable",
                  maintainer="Zoë Maintainer <zoe@example.org>")
    check = check_grounding(grounded_values(good, Header), ENTRY)
    assert check.ok
    # "unstable" also occurs in a change line, after the header: the header's is taken
    assert check.spans["distribution"] == [(ENTRY.index("unstable"),
                                            ENTRY.index("unstable") + len("unstable"))]
    bad = Header.model_construct(version="9.0.1499", distribution="unstable",
                                 maintainer="zoe@example.org")
    check = check_grounding(grounded_values(bad, Header), ENTRY)
    assert [p for p, _ in check.unfound] == ["version"]
    assert check.off_line == [("version", "9.0.1499", HEADER)]
    assert ("- version: '9.0.1499' is not on a line of the document that matches 'urgency=' "
            "(where this field is written); copy it from such a line") in check.message()
    # a value that runs over two lines is on no one line
    assert locate("9.0.1378\n\n -- Zoë", ENTRY, line=r".") is None
    assert locate("9.0.1378", ENTRY, line=r"New upstream") == (
        ENTRY.index("9.0.1378\n"), ENTRY.index("9.0.1378\n") + 8)


def test_the_grammar_lists_only_values_on_matching_lines() -> None:
    schema = dict(OutputSpec.of(Header).schema_for("local").schema)
    listed = _listed(substring_grammar(schema, ENTRY, SEPARATORS))
    assert sorted(map(tuple, listed.values())) == sorted([
        ("2:9.0.1378-1",),  # never 9.0.1499 / 9.0.1500 / 9.0.1378 of the change lines
        ("vim", "unstable"),  # whole tokens: "urgency=medium" is one, and not one word
        # any run of chunks on the trailer line (no pattern): the name and address among them
        tuple(listed[next(k for k, v in listed.items() if "Zoë Maintainer" in v)]),
    ])
    trailer = next(v for v in listed.values() if "Zoë Maintainer" in v)
    assert "Zoë Maintainer <zoe@example.org>" in trailer
    assert all("\n" not in v and "patch" not in v for v in trailer)


def test_a_required_field_whose_line_is_missing_fails_before_any_request() -> None:
    schema = dict(OutputSpec.of(Header).schema_for("local").schema)
    cut = ENTRY[: ENTRY.index(" -- ")]
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(schema, cut, SEPARATORS)
    assert raised.value.fields == ["maintainer"]


def test_whole_items_on_a_line_are_the_items_that_begin_there() -> None:
    class Patches(BaseModel):
        merged: list[Annotated[str, Grounded(whole_items=True, line=r"Merge")]]

    check = check_grounding(grounded_values(Patches(merged=[
        "New upstream patch 9.0.1378"]), Patches), ENTRY)
    assert check.off_line and not check.ok
    schema = dict(OutputSpec.of(Patches).schema_for("local").schema)
    grammar = substring_grammar(schema, ENTRY, SEPARATORS)
    assert grammar is not None
    assert "New upstream patch" not in grammar
    assert json.dumps(json.dumps("Merge upstream patch 9.0.1499, \"quoted\" \\ text.\n"
                                 "    + Also 9.0.1500 for the unstable branch."))[1:-1] in grammar


def test_a_json_schema_output_reads_the_line_rule() -> None:
    Out = json_schema_output({
        "type": "object", "required": ["version"],
        "properties": {"version": {"type": "string", GROUNDED_KEY: "whole_tokens",
                                   LINE_KEY: HEADER}}}, name="Out")
    value = Out.model_validate({"version": "9.0.1499"})
    check = check_grounding(grounded_values(value, Out), ENTRY)
    assert check.off_line == [("version", "9.0.1499", HEADER)]


class Urgent(BaseModel):
    urgency: Annotated[Literal["low", "medium", "high"], Grounded(line=HEADER)]
    color: Annotated[Color | None, Grounded()] = None
    kind: Literal["a", "b"] = "a"  # no marker: a plain choice


def test_a_marked_choice_must_occur_in_the_document_letter_case_ignored() -> None:
    assert grounding_plan(Urgent)
    check = check_grounding(grounded_values(Urgent(urgency="medium", color=Color.RED), Urgent),
                            ENTRY.replace("urgency=medium", "urgency=MEDIUM") + "\nRed.")
    assert check.ok and list(check.spans) == ["urgency", "color"]  # kind: not grounded
    check = check_grounding(grounded_values(Urgent(urgency="high"), Urgent), ENTRY)
    assert check.unfound == [("urgency", "high")]
    # "medium" on a change line only: not on the header line
    moved = ENTRY.replace("urgency=medium", "urgency=low") + "\n  * medium"
    assert check_grounding(grounded_values(Urgent(urgency="medium"), Urgent), moved).off_line


def test_the_grammar_offers_only_the_labels_the_document_says() -> None:
    schema = dict(OutputSpec.of(Urgent).schema_for("local").schema)
    grammar = substring_grammar(schema, ENTRY.replace("medium", "High"), SEPARATORS)
    assert grammar is not None
    rules = dict(x.split(": ", 1) for x in grammar.splitlines()[1:])
    assert '"\\"high\\""' in rules.values()  # the one label on the header line
    assert not any('"\\"low\\""' in body for body in rules.values())
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(schema, "no header here", SEPARATORS)
    assert raised.value.fields == ["urgency"]


def test_a_marker_on_a_choice_of_numbers_is_still_a_schema_error() -> None:
    class Bad(BaseModel):
        level: Annotated[Literal[1, 2], Grounded()]

    with pytest.raises(SchemaError, match=r"Bad\.level"):
        grounding_plan(Bad)


def test_a_line_rule_reads_crlf_lines_without_their_line_ending() -> None:
    """A document with Windows line endings (``\\r\\n``): the ``\\r`` is part of
    the line ending, not of the line, so a rule anchored with ``$`` holds in
    verification, in the grammar and for longest values as it does on ``\\n``."""
    class Anchored(BaseModel):
        distribution: Annotated[str, Grounded(whole_tokens=True, line=r"urgency=\w+$")] = Field(
            pattern=r"^[a-z]+$")
        maintainer: Annotated[str, Grounded(line=r"\+0000$", longest=True)] = Field(
            pattern=r"^[^\s<>-][^<>\r\n]* <[^<>\s]+>$")

    crlf = ENTRY.replace("\n", "\r\n")
    assert locate("medium", crlf, line=r"urgency=\w+$") == (crlf.index("medium"),
                                                           crlf.index("medium") + 6)
    value = Anchored(distribution="unstable", maintainer="Zoë Maintainer <zoe@example.org>")
    check = check_grounding(grounded_values(value, Anchored), crlf)
    assert check.ok, check.message()
    cut = Anchored(distribution="unstable", maintainer="Maintainer <zoe@example.org>")
    check = check_grounding(grounded_values(cut, Anchored), crlf)
    assert check.shortened == [("maintainer", "Maintainer <zoe@example.org>",
                                "Zoë Maintainer <zoe@example.org>")]
    values = _listed(substring_grammar(OutputSpec.of(Anchored).schema_for("local").schema,
                                       crlf, SEPARATORS))
    assert ["vim", "unstable"] in values.values()  # "urgency=medium" is one token
    assert ["Zoë Maintainer <zoe@example.org>"] in values.values()
