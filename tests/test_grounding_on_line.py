"""``Grounded(line=...)``: a grounded value held to the lines of the source a
regular expression matches, in verification (``agentflow.extraction.
locate``), in the grammar (``agentflow.output.grammar_values.line_values``)
and in JSON Schema outputs (``"x-grounded-line"``)."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from agentflow.errors import SchemaError
from agentflow.extraction.grounding import (
    GROUNDED_KEY,
    LINE_KEY,
    Grounded,
    check_grounding,
    grounded_values,
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
