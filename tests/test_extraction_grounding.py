"""agentflow.grounding: markers, grounded values, span location
(Unicode, escapes, whitespace, case, repeated values), the occurrence rule."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel

from agentflow.errors import SchemaError
from agentflow.grounding import (
    GROUNDED_KEY,
    Grounded,
    check_grounding,
    grounded_values,
    grounding_plan,
    locate,
    mark_all_strings,
)
from agentflow.output.schema import OutputSpec

G = Grounded()


class Color(StrEnum):
    RED = "red"


class Line(BaseModel):
    text: Annotated[str, G]
    qty: int


class Doc(BaseModel):
    title: Annotated[str, G]
    tags: list[Annotated[str, G]]
    notes: Annotated[list[str], G]
    city: Annotated[str | None, Grounded(case_sensitive=False)] = None
    lines: list[Line] = []
    kind: Literal["a", "b"] = "a"
    color: Color = Color.RED
    free: str = "x"


# ----------------------------------------------------------------------------- markers


def test_markers_at_any_depth_give_python_field_paths_in_schema_order() -> None:
    doc = Doc(title="T", tags=["a", "b"], notes=["n"], city="Paris",
              lines=[Line(text="one", qty=1), Line(text="two", qty=2)])
    values = grounded_values(doc, Doc)
    assert [v.path for v in values] == [
        "title", "tags[0]", "tags[1]", "notes[0]", "city", "lines[0].text", "lines[1].text"]
    assert values[4].marker.case_sensitive is False and values[4].optional


def test_the_default_grounds_free_text_only_never_enums_literals_or_numbers() -> None:
    doc = Doc(title="T", tags=[], notes=[], free="f")
    paths = [v.path for v in grounded_values(doc, Doc, default=Grounded())]
    assert paths == ["title", "free"]  # not kind (Literal), color (enum), qty (int)


def test_dataclass_outputs_and_wrapped_types() -> None:
    @dataclasses.dataclass
    class Person:
        name: Annotated[str, G]
        age: int

    assert [v.path for v in grounded_values(Person("Ann", 3), Person)] == ["name"]
    items = grounded_values(["x", "y"], list[Annotated[str, G]])
    assert [v.path for v in items] == ["[0]", "[1]"]


def test_marker_on_a_non_string_field_is_a_schema_error_naming_the_field() -> None:
    class Bad(BaseModel):
        ok: Annotated[str, G]
        total: Annotated[int, G]

    with pytest.raises(SchemaError) as info:
        grounding_plan(Bad)
    assert info.value.path == "Bad.total" and "int" in str(info.value)

    class Inner(BaseModel):
        flags: Annotated[list[bool], G]

    class Outer(BaseModel):
        inner: list[Inner]

    with pytest.raises(SchemaError, match=r"Inner\.flags"):
        grounding_plan(Outer)

    class OnModel(BaseModel):
        line: Annotated[Line, G]

    with pytest.raises(SchemaError, match=r"OnModel\.line"):
        grounding_plan(OnModel)


def test_plan_reports_markers_and_survives_recursion() -> None:
    class Node(BaseModel):
        name: Annotated[str, G]
        children: list[Node] = []

    assert grounding_plan(Node) is True
    assert grounding_plan(Line) is True

    class Plain(BaseModel):
        a: str

    assert grounding_plan(Plain) is False


def test_schema_marks_reach_only_the_local_dialect() -> None:
    spec = OutputSpec.of(Doc)
    local = spec.schema_for("local").schema
    assert local["properties"]["title"][GROUNDED_KEY] is True
    assert local["properties"]["tags"]["items"][GROUNDED_KEY] is True
    assert local["properties"]["notes"]["items"][GROUNDED_KEY] is True
    for dialect in ("plain", "openai_strict", "gemini"):
        assert GROUNDED_KEY not in str(spec.schema_for(dialect).schema), dialect  # type: ignore[arg-type]
    assert GROUNDED_KEY not in str(spec.plain_schema)
    marked = mark_all_strings({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "enum": ["x"]}}})
    assert marked["properties"]["a"][GROUNDED_KEY] and GROUNDED_KEY not in marked["properties"]["b"]


# ----------------------------------------------------------------------------- location


def test_locate_exact_unicode_offsets_are_python_str_indices() -> None:
    source = "Zoë Ünal — naïve café 東京 <zoe@example.org>"
    span = locate("café 東京", source)
    assert span is not None and source[span[0]:span[1]] == "café 東京"
    assert locate("Cafe", source) is None


@pytest.mark.parametrize("value", ['say "hi"', "C:\\path\\x", "a\tb", "bell\x07", "é\u0301"])
def test_locate_escapes_and_control_characters(value: str) -> None:
    source = f"before {value} after"
    span = locate(value, source)
    assert span is not None and source[span[0]:span[1]] == value


@pytest.mark.parametrize(("source", "value", "shown"), [
    ("Name: Jose\u0301 Mu\u0308ller.", "José Müller", "Jose\u0301 Mu\u0308ller"),  # NFD text
    ("Name: José Müller.", "Jose\u0301 Mu\u0308ller", "José Müller"),              # NFD value
    ("the \ufb01nal o\ufb03ce", "final office", "\ufb01nal o\ufb03ce"),        # PDF ligatures
    ("ID: \uff21\uff22\uff11\uff12 ok", "AB12", "\uff21\uff22\uff11\uff12"),  # full width
    ("Zoe\u0308   U\u0308nal", "zoë ünal", "Zoe\u0308   U\u0308nal"),        # + whitespace, case
])
def test_one_text_in_another_unicode_form_is_found(source: str, value: str, shown: str) -> None:
    # What the model reads and what it writes back can be the same text in two
    # encodings (a PDF text layer's decomposed accents and ligatures, a model that
    # writes NFC): refusing it would send the model round in retries it cannot win.
    span = locate(value, source, case_sensitive=False)
    assert span is not None and source[span[0]:span[1]] == shown
    assert locate("Jose Muller", "Name: Jose\u0301 Mu\u0308ller.") is None  # accents matter


@pytest.mark.parametrize(("source", "value", "shown"), [
    ("Maintainer\u2019s note: don\u2019t ship", "don't ship", "don\u2019t ship"),
    ("It said \u201cship it\u201d today", '"ship it"', "\u201cship it\u201d"),
    ("covers 1990\u20132004 only", "1990-2004", "1990\u20132004"),
    ("Paris \u2014 the capital", "Paris - the capital", "Paris \u2014 the capital"),
    ("temp \u22125 \u00b0C", "-5 °C", "\u22125 \u00b0C"),                  # minus sign
    ("Dr.\u00a0Ann O\u2019Neil wrote", "Dr. Ann O'Neil", "Dr.\u00a0Ann O\u2019Neil"),
    ("wait\u2026 then go", "wait... then go", "wait\u2026 then go"),         # ellipsis
    ("the value was 'ok' - fine", "\u2018ok\u2019 \u2013 fine", "'ok' - fine"),  # reverse
    ("Jos\u00e9\u2019s caf\u00e9", "Jose\u0301's", "Jos\u00e9\u2019s"),  # + NFD value
])
def test_typographic_punctuation_matches_its_ascii_form(source: str, value: str,
                                                        shown: str) -> None:
    # A vendor model writes straight quotes and hyphens where the document has curly
    # quotes and dashes (or the reverse): the same text, found, with the span in the
    # source's own offsets and characters.
    span = locate(value, source)
    assert span is not None and source[span[0]:span[1]] == shown


def test_typographic_fold_never_folds_case_or_letters() -> None:
    source = "Don\u2019t \u2013 Paris"
    assert locate("don't", source) is None  # case still matters
    assert locate("don't", source, case_sensitive=False) == (0, 5)
    assert locate("Don`t", source) is None and locate("Don t", source) is None
    assert locate("Dont", source) is None and locate("Paris", source) == (8, 13)
    check = check_grounding(grounded_values(
        Doc(title="Don't - Paris", tags=[], notes=[]), Doc), source)
    assert check.ok and check.spans["title"] == [(0, 13)]


def test_whitespace_runs_are_normalised_but_never_invented() -> None:
    source = "Fix the\n    build   on arm64."
    span = locate("the build on", source)
    assert span is not None and source[span[0]:span[1]] == "the\n    build   on"
    assert locate("  the build on ", source) == span  # outer whitespace ignored
    assert locate("thebuild", source) is None
    assert locate("   ", source) is None and locate("", source) is None


def test_case_insensitive_only_when_asked() -> None:
    assert locate("PARIS", "in Paris today") is None
    span = locate("PARIS", "in Paris today", case_sensitive=False)
    assert span == (3, 8)


def test_occurrence_rule_follows_schema_order_and_repeated_values_take_successive_spans() -> None:
    source = "bar foo bar foo bar"
    doc = Doc(title="foo", tags=["bar", "bar", "bar", "bar"], notes=[])
    check = check_grounding(grounded_values(doc, Doc), source)
    assert check.ok
    assert check.spans["title"] == [(4, 7)]
    # after the title's span first, then the occurrences not yet taken, then reuse
    assert [check.spans[f"tags[{i}]"][0] for i in range(4)] == [(8, 11), (16, 19), (0, 3),
                                                               (0, 3)]


def test_overlapping_items_get_overlapping_spans() -> None:
    source = "New upstream release 2.0"
    doc = Doc(title="upstream release", tags=["New upstream", "release 2.0"], notes=[])
    check = check_grounding(grounded_values(doc, Doc), source)
    assert check.spans == {"title": [(4, 20)], "tags[0]": [(0, 12)], "tags[1]": [(13, 24)]}


def test_check_lists_unfound_and_empty_values_with_paths() -> None:
    doc = Doc(title="Invented", tags=["real"], notes=[""], city="   ")
    check = check_grounding(grounded_values(doc, Doc), "a real document")
    assert not check.ok
    assert check.unfound == [("title", "Invented")]
    assert check.empty == [("notes[0]", False), ("city", True)]
    message = check.message()
    assert "title: 'Invented' is not found in the document" in message
    assert "notes[0]: empty text" in message and "use null" in message
    assert check.spans == {"tags[0]": [(2, 6)]}


def test_the_message_offers_null_and_leaving_an_item_out_where_the_schema_allows() -> None:
    """What small models write for a field the document does not fill
    (``"null"``, ``"N/A"``, an empty item): the message says what the schema
    allows instead, null for a nullable field, dropping an item of a list;
    never for a required field."""
    class Card(BaseModel):
        name: Annotated[str, Grounded()]
        phone: Annotated[str | None, Grounded()] = None
        tags: list[Annotated[str, Grounded()]] = []

    check = check_grounding(grounded_values(
        Card(name="N/A", phone="null", tags=["", "real"]), Card), "a real card")
    assert check.nullable == ["phone"]
    lines = check.message().splitlines()
    assert lines[0] == ("- name: 'N/A' is not found in the document; copy the text exactly as "
                        "it is written there")
    assert lines[1].endswith("copy the text exactly as it is written there, or use null if "
                             "the document does not say")
    assert lines[2] == "- tags[0]: empty text; copy it from the document, or leave the item " \
                       "out of the list"


# ----------------------------------------------------------------------------- whole tokens

W = Grounded(whole_tokens=True)
ENTRY = ("libxrandr (2:1.5.2-1) unstable; urgency=medium\n\n"
         "  * d/salsa-ci.yml: Run the \"Zoë\\x\" tests.\n\n"
         " -- Jelmer Vernooĳ <jelmer@debian.org>  Tue, 02 Jan 2024 10:20:30 +0100")


class Header(BaseModel):
    package: Annotated[str, W]
    version: Annotated[str, W]
    distribution: Annotated[str, W]
    maintainer: Annotated[str, W]
    changes: list[Annotated[str, W]]


def check_header(**fields: object) -> object:
    good: dict[str, object] = {
        "package": "libxrandr", "version": "2:1.5.2-1", "distribution": "unstable",
        "maintainer": "Jelmer Vernooĳ <jelmer@debian.org>",
        "changes": ['d/salsa-ci.yml: Run the "Zoë\\x" tests.']}
    value = Header(**{**good, **fields})  # type: ignore[arg-type]
    return check_grounding(grounded_values(value, Header), ENTRY)


def test_whole_token_values_are_found_with_their_spans() -> None:
    check = check_header()
    assert check.ok and not check.cut
    assert ENTRY[slice(*check.spans["version"][0])] == "2:1.5.2-1"
    assert ENTRY[slice(*check.spans["package"][0])] == "libxrandr"  # the document's start
    assert ENTRY[slice(*check.spans["changes[0]"][0])] == 'd/salsa-ci.yml: Run the "Zoë\\x" tests.'
    # a value ending before a delimiter or a sentence end is whole
    assert check_header(distribution="unstable;", changes=["Run the"]).ok
    assert check_header(changes=['"Zoë\\x"', "tests", "Zoë\\x", "d/salsa-ci.yml"]).ok
    # the document's last token
    assert locate("+0100", ENTRY, whole_tokens=True) == (len(ENTRY) - 5, len(ENTRY))


@pytest.mark.parametrize(("field", "value", "token"), [
    ("version", "1.5.2-1", "2:1.5.2-1"),  # the epoch dropped
    ("distribution", "debian", "jelmer@debian.org"),
    ("maintainer", "Jelmer Vernooĳ <jelmer", "jelmer@debian.org"),
    ("package", "libx", "libxrandr"),  # at the document's start
    ("distribution", "0100", "+0100"),  # at its end
    ("distribution", "salsa", "d/salsa-ci.yml"),
    ("distribution", "oë\\", 'Zoë\\x'),  # non-ASCII and a backslash inside the token
])
def test_a_value_cutting_a_token_is_refused_naming_the_token(field: str, value: str,
                                                              token: str) -> None:
    check = check_header(**{field: value})
    assert not check.ok
    assert check.unfound == [(field, value)] and check.cut == [(field, value, token)]
    assert f"{value!r} cuts through the token {token!r}" in check.message()
    assert locate(value, ENTRY, whole_tokens=True) is None
    assert locate(value, ENTRY) is not None  # found as a substring without the rule


def test_a_whole_occurrence_is_chosen_over_an_earlier_cut_one() -> None:
    source = "2:1.5 then 1.5 alone"
    assert locate("1.5", source) == (2, 5)
    assert locate("1.5", source, whole_tokens=True) == (11, 14)


def test_whole_tokens_keep_whitespace_normalisation_and_case_rules() -> None:
    source = "Jelmer\n   Vernooĳ <JELMER@debian.org>"
    assert locate("Jelmer Vernooĳ", source, whole_tokens=True) == (0, 17)
    assert locate("Jelmer Vern", source, whole_tokens=True) is None
    loose = Grounded(case_sensitive=False, whole_tokens=True)
    assert locate("jelmer@DEBIAN.org", source, case_sensitive=False, whole_tokens=True) == (
        19, 36)

    class M(BaseModel):
        mail: Annotated[str, loose]

    assert check_grounding(grounded_values(M(mail="jelmer@DEBIAN.ORG"), M), source).ok
    cut = check_grounding(grounded_values(M(mail="debian"), M), source)
    assert cut.cut == [("mail", "debian", "JELMER@debian.org")]


def test_the_marker_s_schema_mark_and_the_default_s() -> None:
    schema = dict(OutputSpec.of(Header).schema_for("local").schema)
    assert schema["properties"]["version"][GROUNDED_KEY] == "whole_tokens"
    assert schema["properties"]["changes"]["items"][GROUNDED_KEY] == "whole_tokens"

    class Mixed(BaseModel):
        a: Annotated[str, G]
        b: str

    plain = dict(OutputSpec.of(Mixed).schema_for("local").schema)
    marked = mark_all_strings(plain, W)  # the default marks only what is not marked
    assert marked["properties"]["a"][GROUNDED_KEY] is True
    assert marked["properties"]["b"][GROUNDED_KEY] == "whole_tokens"
    assert mark_all_strings(plain)["properties"]["b"][GROUNDED_KEY] is True


def test_the_ground_true_default_allows_part_of_a_token() -> None:
    """``ground=True`` is ``Grounded()``: sub-token values pass (a domain out of
    an e-mail address); ``Grounded(whole_tokens=True)`` as the default refuses."""

    class Free(BaseModel):
        domain: str

    value = Free(domain="debian.org")
    assert check_grounding(grounded_values(value, Free, Grounded()), ENTRY).ok
    strict = check_grounding(grounded_values(value, Free, W), ENTRY)
    assert strict.cut == [("domain", "debian.org", "jelmer@debian.org")]
