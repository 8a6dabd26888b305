"""``Grounded(after=...)``: a grounded value held to come after the value of an
earlier sibling field, in the plan check (``grounding_plan``), in verification
(``agentflow.grounding.placing.check_grounding``), in the grammar
(``agentflow.output.grammar_order``), in JSON Schema outputs
(``"x-grounded-after"``) and against a vendor fake (the model is told)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any, Literal

import orjson
import pytest
from pydantic import BaseModel, Field, StringConstraints

from agentflow import ReActAgent
from agentflow.errors import SchemaError
from agentflow.events import Complete, OutputRetry
from agentflow.grounding import (
    Grounded,
    check_grounding,
    grounded_values,
    grounding_plan,
)
from agentflow.grounding.marker import AFTER_KEY
from agentflow.output import grammar_order
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.json_schema import json_schema_output
from agentflow.output.schema import OutputSpec
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

HEADER = r"; *urgency="
WORD = r"^[A-Za-z][A-Za-z0-9-]*$"
VERSION = r"^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$"
SEPARATORS = {"key_separator": ": ", "item_separator": ", "}
ENTRY = ("avahi (0.8-10+deb12u1) bookworm; urgency=medium\n\n"
         "  * Backport fix from 0.8-11 for sid.\n\n"
         " -- Jane Doe <jane@example.org>  Mon, 05 Feb 2024 18:02:11 +0000")


def on_header(after: str | None = None) -> Grounded:
    return Grounded(whole_tokens=True, line=HEADER, after=after)


class Header(BaseModel):
    package: Annotated[str, on_header()] = Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$")
    version: Annotated[str, on_header("package")] = Field(pattern=VERSION)
    distribution: Annotated[str, on_header("version")] = Field(pattern=WORD)


def local(tp: object) -> dict[str, Any]:
    return dict(OutputSpec.of(tp).schema_for("local").schema)


def listed(grammar: str | None) -> dict[str, list[str]]:
    """The listed values of each ``GROUNDED_n`` terminal of a grammar."""
    assert grammar is not None
    out = {}
    for row in grammar.splitlines():
        name, _, body = row.partition(": ")
        if name.startswith("GROUNDED_") and body.startswith('"\\"" ('):
            out[name] = [json.loads('"' + json.loads(v) + '"') for v in body[6:-6].split(" | ")]
    return out


def field_values(grammar: str | None, key: str) -> set[str]:
    """Every value the grammar offers for ``key`` (over all its branches): the
    listed terminal after the key, or the chain of rules of listed terminals
    (``GROUNDED_3 | n4``) a later field's values from a bound on are."""
    assert grammar is not None
    terms = listed(grammar)
    rules = dict(row.split(": ", 1) for row in grammar.splitlines() if row[:1] == "n")

    def reach(token: str) -> set[str]:
        if token.startswith("GROUNDED_"):
            return set(terms.get(token, []))
        alts = rules.get(token, "").split(" | ")
        if not all(a.startswith(("GROUNDED_", "n")) and " " not in a for a in alts):
            return set()  # a rule of fields, not a chain of values
        return set().union(*(reach(a) for a in alts))

    found: set[str] = set()
    for row in grammar.splitlines():
        head = json.dumps(json.dumps(key))
        if head in row:
            for part in row.split(" | "):
                if head in part:
                    after = [t for t in part.split(head, 1)[1].split()  # the value's name
                             if t.startswith("GROUNDED_") or t[1:].isdigit()]
                    found.update(reach(after[0]) if after else set())
    return found


# ----------------------------------------------------------------------------- declaring


def test_after_must_be_a_field_name() -> None:
    for bad in ("", "2x", "a.b", 3):
        with pytest.raises(SchemaError) as raised:
            Grounded(after=bad)  # type: ignore[arg-type]
        assert raised.value.path == "Grounded.after"


def test_the_plan_refuses_an_after_that_names_no_earlier_field() -> None:
    class Later(BaseModel):
        version: Annotated[str, Grounded(after="distribution")]
        distribution: str

    with pytest.raises(SchemaError) as raised:
        grounding_plan(Later)
    assert raised.value.path == "Later.version"
    assert "'distribution'" in str(raised.value) and "first field" in str(raised.value)

    class Unknown(BaseModel):
        package: str
        version: Annotated[str | None, Grounded(after="pkg")] = None

    with pytest.raises(SchemaError, match=r"\(those are: package\)"):
        grounding_plan(Unknown)
    assert grounding_plan(Header) is True


def test_the_plan_refuses_an_after_that_names_a_list_or_an_object() -> None:
    class Address(BaseModel):
        city: Annotated[str, Grounded()]

    class AfterList(BaseModel):
        tags: list[Annotated[str, Grounded()]]
        name: Annotated[str, Grounded(after="tags")]

    class AfterObject(BaseModel):
        address: Address
        phone: Annotated[str | None, Grounded(after="address")] = None

    for tp, path in ((AfterList, "AfterList.name"), (AfterObject, "AfterObject.phone")):
        with pytest.raises(SchemaError, match="holds a list or an object") as raised:
            grounding_plan(tp)
        assert raised.value.path == path

    class AfterChoice(BaseModel):
        level: Literal["low", "high"] | None = None
        note: Annotated[str, Grounded(after="level")]

    assert grounding_plan(AfterChoice) is True


def test_a_json_schema_output_is_held_to_the_same_after_rules() -> None:
    for after, why in (("zzz", "declared before"), ("b", "declared before"),
                       ("tags", "holds a list or an object")):
        Out = json_schema_output({
            "type": "object", "required": ["tags", "a", "b"],
            "properties": {"tags": {"type": "array", "items": {"type": "string"}},
                           "a": {"type": "string", "x-grounded": True},
                           "b": {"type": "string", "x-grounded": True, AFTER_KEY: after}}},
            name="Out")
        with pytest.raises(SchemaError, match=why) as raised:
            grounding_plan(Out)
        assert raised.value.path == "Out.b" and AFTER_KEY in str(raised.value)


def test_the_after_rule_reaches_the_local_dialect_only() -> None:
    assert local(Header)["properties"]["distribution"][AFTER_KEY] == "version"
    for dialect in ("plain", "openai_strict", "gemini"):
        vendor = json.dumps(OutputSpec.of(Header).schema_for(dialect).schema)
        assert AFTER_KEY not in vendor, dialect


@pytest.mark.parametrize("marker", [Grounded(after="version"), Grounded(longest=True)])
async def test_after_or_longest_as_the_default_marker_fails_before_any_request(
        marker: Grounded) -> None:
    from agentflow.testing import ScriptedModel

    model = ScriptedModel([])
    with pytest.raises(SchemaError) as raised:
        await ReActAgent("x", model).call(ENTRY, Header, ground=marker)
    assert raised.value.path == "ground" and "put it on the field's marker" in str(raised.value)
    assert model.requests == []


# ----------------------------------------------------------------------------- verification


def test_verification_refuses_a_value_that_comes_before_the_named_field() -> None:
    swapped = Header.model_construct(package="bookworm", version="0.8-10+deb12u1",
                                     distribution="avahi")
    check = check_grounding(grounded_values(swapped, Header), ENTRY)
    # the version is refused; the distribution then has no bound (its field has no span)
    assert check.misordered == [("version", "0.8-10+deb12u1", "package")]
    assert not check.ok
    assert ("- version: '0.8-10+deb12u1' is not after the value of 'package' in the document "
            "(this field is written after it)") in check.message()
    good = Header(package="avahi", version="0.8-10+deb12u1", distribution="bookworm")
    check = check_grounding(grounded_values(good, Header), ENTRY)
    assert check.ok and check.misordered == []
    for path, [(start, end)] in check.spans.items():
        assert ENTRY[start:end] == getattr(good, path)


def test_a_repeated_value_is_placed_after_the_named_field_and_the_field_before_it() -> None:
    class Pair(BaseModel):
        first: Annotated[str, Grounded(whole_tokens=True)]
        second: Annotated[str, Grounded(whole_tokens=True, after="first")]

    text = "b x a y b"
    check = check_grounding(grounded_values(Pair(first="a", second="b"), Pair), text)
    assert check.ok and check.spans == {"first": [(4, 5)], "second": [(8, 9)]}
    # the named field repeats: its span moves to an occurrence before the later value
    text = "a b a"
    check = check_grounding(grounded_values(Pair(first="a", second="b"), Pair), text)
    assert check.ok and check.spans == {"first": [(0, 1)], "second": [(2, 3)]}
    check = check_grounding(grounded_values(Pair(first="b", second="a"), Pair), "a b")
    assert check.misordered == [("second", "a", "first")]


def test_the_message_names_the_value_a_misordered_one_must_follow() -> None:
    class Totals(BaseModel):
        subtotal: Annotated[str, Grounded(whole_tokens=True)]
        tax: Annotated[str, Grounded(whole_tokens=True, after="subtotal")]

    # the subtotal is the wrong value here, not the tax: the model must be able to tell
    line = "Subtotal 10.00 Tax 2.00 Total 12.00"
    check = check_grounding(grounded_values(Totals(subtotal="12.00", tax="2.00"), Totals), line)
    assert check.misordered == [("tax", "2.00", "subtotal")]
    assert check.preceding == {"tax": "12.00"}
    assert ("copy it from the text that follows that value ('12.00'), or correct 'subtotal' if "
            "that value is the wrong one") in check.message()


def test_a_chain_keeps_every_span_before_the_next_when_a_middle_value_moves() -> None:
    class Chain(BaseModel):
        note: Annotated[str | None, Grounded(whole_tokens=True)] = None
        a: Annotated[str, Grounded(whole_tokens=True)]
        b: Annotated[str, Grounded(whole_tokens=True, after="a")]
        c: Annotated[str, Grounded(whole_tokens=True, after="b")]

    # the note pushes the cursor to 'r' at 6: a and b first land at 6 and 8, then c
    # (only 8 follows b) pulls b back to 6, which must pull a back to 0
    text = "r p q r r"
    value = Chain(note="q", a="r", b="r", c="r")
    check = check_grounding(grounded_values(value, Chain), text)
    assert check.ok
    spans = {path: span for path, [span] in check.spans.items()}
    assert spans["a"][1] <= spans["b"][0] and spans["b"][1] <= spans["c"][0]
    assert spans == {"note": (4, 5), "a": (0, 1), "b": (6, 7), "c": (8, 9)}


def test_a_null_named_field_sets_no_bound() -> None:
    class Maybe(BaseModel):
        first: Annotated[str | None, Grounded()] = None
        second: Annotated[str, Grounded(after="first")]

    check = check_grounding(grounded_values(Maybe(first=None, second="a"), Maybe), "a b")
    assert check.ok and check.spans == {"second": [(0, 1)]}


def test_list_items_in_nested_objects_follow_their_own_siblings() -> None:
    class Entry(BaseModel):
        version: Annotated[str, Grounded(whole_tokens=True)]
        distribution: Annotated[str, Grounded(whole_tokens=True, after="version")]

    class History(BaseModel):
        entries: list[Entry]

    text = "x (1.0) sid\ny (2.0) buster"
    value = History(entries=[Entry(version="1.0", distribution="sid"),
                             Entry(version="2.0", distribution="sid")])
    check = check_grounding(grounded_values(value, History), text)
    assert check.misordered == [("entries[1].distribution", "sid", "version")]


def test_a_json_schema_output_reads_the_after_rule() -> None:
    Out = json_schema_output({
        "type": "object", "required": ["a", "b"],
        "properties": {"a": {"type": "string", "x-grounded": True},
                       "b": {"type": "string", "x-grounded": True, AFTER_KEY: "a"}}}, name="Out")
    value = Out.model_validate({"a": "y", "b": "x"})
    check = check_grounding(grounded_values(value, Out), "x y")
    assert check.misordered == [("b", "x", "a")]


# ----------------------------------------------------------------------------- grammar


def test_the_grammar_offers_a_later_field_only_values_after_the_named_one() -> None:
    grammar = substring_grammar(local(Header), ENTRY, SEPARATORS)
    # bookworm and the version are packages by the pattern, but no version follows them
    assert field_values(grammar, "package") == {"avahi"}
    assert field_values(grammar, "version") == {"0.8-10+deb12u1"}
    assert field_values(grammar, "distribution") == {"bookworm"}


def test_without_the_rule_the_grammar_offers_every_value_of_the_line() -> None:
    class Loose(BaseModel):
        package: Annotated[str, on_header()] = Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$")
        distribution: Annotated[str, on_header()] = Field(pattern=WORD)

    values = listed(substring_grammar(local(Loose), ENTRY, SEPARATORS))
    assert ["avahi", "0.8-10+deb12u1", "bookworm"] in values.values()
    assert ["avahi", "bookworm"] in values.values()


def test_fields_with_aliases_keep_their_order_in_the_grammar() -> None:
    class Aliased(BaseModel):
        first_word: Annotated[str, Grounded(line=r".")] = Field(alias="First", pattern=r"^\w+$")
        second: Annotated[str | None, Grounded(line=r".", after="first_word")] = Field(
            None, alias="Second", pattern=r"^\w+$")

    class Outer(BaseModel):
        pairs: list[Aliased]

    for tp in (Aliased, Outer):
        schema = json.dumps(local(tp))
        assert f'"{AFTER_KEY}": "First"' in schema, tp  # the key the grammar reads
    grammar = substring_grammar(local(Aliased), "aa bb", SEPARATORS)
    assert field_values(grammar, "Second") == {"bb"}  # after "aa" only; after "bb" nothing
    assert field_values(grammar, "First") == {"aa", "bb"}  # "bb" with a null Second
    check = check_grounding(grounded_values(
        Aliased.model_validate({"First": "bb", "Second": "aa"}), Aliased), "aa bb")
    assert check.misordered == [("second", "aa", "first_word")]  # paths: python names


def test_values_of_the_named_field_that_end_together_share_a_branch() -> None:
    class Pair(BaseModel):
        first: Annotated[str, Grounded(whole_tokens=True, line=r".")] = Field(pattern=r"^\w+")
        second: Annotated[str, Grounded(whole_tokens=True, line=r".", after="first")] = Field(
            pattern=r"^\w+$")

    grammar = substring_grammar(local(Pair), "aa bb cc", SEPARATORS)
    assert grammar is not None
    # "aa bb" and "bb" end together: one branch; "aa", "bb", "cc" ... one per end
    first_rows = [r for r in grammar.splitlines() if '"\\"first\\""' in r]
    assert len(first_rows) == 1 and first_rows[0].count(" | ") == 1  # ends at 2 and at 5
    assert field_values(grammar, "second") == {"bb", "cc"}


def test_a_nullable_named_field_keeps_null_and_leaves_the_later_one_free() -> None:
    class Maybe(BaseModel):
        first: Annotated[str | None, Grounded(line=r".")] = Field(None, pattern=r"^\w+$")
        second: Annotated[str, Grounded(line=r".", after="first")] = Field(pattern=r"^\w+$")

    grammar = substring_grammar(local(Maybe), "aa bb", SEPARATORS)
    assert grammar is not None and '"null"' in grammar
    assert field_values(grammar, "second") == {"aa", "bb"}  # after null: any, after aa: bb


def test_an_object_no_order_can_fill_is_impossible() -> None:
    text = "9.1 sid; urgency=low"  # a version, then a word: no package before the version
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(local(Header), text, SEPARATORS)
    assert "version" in raised.value.fields or "package" in raised.value.fields


def test_an_impossible_order_names_the_fields_with_no_value_not_the_whole_chain() -> None:
    class Entry(BaseModel):
        package: Annotated[str, on_header()] = Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$")
        version: Annotated[str, on_header("package")] = Field(pattern=VERSION)
        maintainer: Annotated[str, Grounded(line=r"^ -- ")] = Field(pattern=r"^[A-Z][a-z]+$")
        date: Annotated[str, Grounded(line=r"^ -- ", after="maintainer")] = Field(
            pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")

    cut = "avahi (0.8-10) bookworm; urgency=medium\n\n  * A change that goes on and on"
    with pytest.raises(NoGroundedValueError) as raised:  # cut before its trailer line
        substring_grammar(local(Entry), cut, SEPARATORS)
    assert raised.value.fields == ["maintainer", "date"]
    undated = cut + "\n\n -- Jane  "
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(local(Entry), undated, SEPARATORS)
    assert raised.value.fields == ["date"]
    assert substring_grammar(local(Entry), undated + "2024-02-05", SEPARATORS) is not None


def test_fields_whose_places_cannot_be_listed_are_left_to_verification() -> None:
    class Free(BaseModel):
        first: Annotated[str, Grounded()]
        second: Annotated[str, Grounded(after="first")]

    grammar = substring_grammar(local(Free), "a b", SEPARATORS)
    assert grammar is not None and "GROUNDED " in grammar.replace("GROUNDED:", "GROUNDED ")


def test_too_many_bounds_fall_back_to_the_plain_object(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar_order, "MAX_ORDER_RULES", 0)
    values = listed(substring_grammar(local(Header), ENTRY, SEPARATORS))
    assert ["avahi", "0.8-10+deb12u1", "bookworm"] in values.values()


def test_a_later_field_on_a_long_line_grows_the_grammar_linearly() -> None:
    class Two(BaseModel):
        a: Annotated[str, Grounded(whole_tokens=True, line=r"^L ")]
        b: Annotated[str, Grounded(whole_tokens=True, line=r"^L ", after="a")] = Field(
            pattern=r"^[a-z]{20,}$")

    def line(i: int) -> str:
        return "L " + "".join("abcdefgh"[(i >> 3 * k) & 7] for k in range(4)) + "x" * 146

    sizes = []
    for n in (50, 100, 200):
        text = "\n".join(line(i) for i in range(n))
        grammar = substring_grammar(local(Two), text, SEPARATORS)
        assert grammar is not None
        sizes.append(len(grammar))
        # each bound still offers exactly the values after it
        assert field_values(grammar, "b") == {line(i)[2:] for i in range(n)}
    # twice the lines, about twice the grammar (listing each bound's values: four times)
    assert sizes[2] < 2.5 * sizes[1] < 6.25 * sizes[0]


def test_an_ordered_object_over_its_size_budget_leaves_no_rule_or_value_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar_order, "MAX_ORDER_CHARS", 10)
    grammar = substring_grammar(local(Header), ENTRY, SEPARATORS)
    assert grammar is not None
    values = listed(grammar)
    assert ["avahi", "0.8-10+deb12u1", "bookworm"] in values.values()  # the plain object
    assert ["avahi"] not in values.values()  # no listing of the ordered attempt is kept
    used = " ".join(body for row in grammar.splitlines() if not row.startswith("GROUNDED_")
                    for body in [row.partition(": ")[2]])
    assert all(name in used for name in values)  # every listed terminal is used


HELD = ("Notes: urgency high was discussed.\n"
        "  * An item before the release line.\n"
        "Release 2.0 (low)\n"
        "  * Fix the build.\n"
        "    Thanks to Jane.\n"
        "  * Update the watch file.\n")
LATER_ITEMS = {"Fix the build.\n    Thanks to Jane.", "Update the watch file."}


class Held(BaseModel):
    release: Annotated[str, Grounded(whole_tokens=True, line=r"^Release")] = Field(
        pattern=r"^[0-9.]+$")
    urgency: Annotated[Literal["low", "medium", "high"],
                       Grounded(whole_tokens=True, after="release")]
    first: Annotated[str | None, Grounded(whole_items=True, after="release")] = None
    changes: list[Annotated[str, Grounded(whole_items=True, after="release")]]
    words: list[Annotated[str, StringConstraints(pattern=r"^[a-z]+$"),
                          Grounded(whole_tokens=True, line=r"^  ", after="release")]] = Field(
        max_length=2)


def reachable(grammar: str | None, key: str) -> set[str]:
    """Every string value the grammar can write for ``key``: the listed
    terminals and inline JSON strings (a chain of whole items) reachable from
    the rule after the key, through every rule it names."""
    assert grammar is not None
    terms = listed(grammar)
    rules = dict(row.split(": ", 1) for row in grammar.splitlines()
                 if row[:1] == "n" or row.startswith("d"))
    literal = re.compile(r'"(?:[^"\\]|\\.)*"')
    found: set[str] = set()
    seen: set[str] = set()

    def visit(token: str) -> None:
        if token in seen:
            return
        seen.add(token)
        if token.startswith("GROUNDED_"):
            found.update(terms.get(token, []))
            return
        body = rules.get(token, "")
        for lit in literal.findall(body):
            text = json.loads(lit)
            if text.startswith('"') and text.endswith('"') and len(text) > 1:
                found.add(json.loads(text))
        for name in re.findall(r"\b(?:GROUNDED_\d+|n\d+(?:_\d+)*_?|d\d+)\b",
                               literal.sub(" ", body)):
            visit(name)

    head = json.dumps(json.dumps(key))
    for row in grammar.splitlines():
        for part in row.split(" | "):
            if head in part:  # the key, its separator, then the value
                tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[\w]+', part.split(head, 1)[1])
                if len(tokens) > 1 and not tokens[1].startswith('"'):
                    visit(tokens[1])
    return found


def test_choices_whole_items_and_list_items_follow_the_named_field_in_the_grammar() -> None:
    """``after`` on a grounded choice, a whole item and the items of lists:
    the grammar offers each only what begins after the named field's value
    ("high" and the first item come before the release line)."""
    grammar = substring_grammar(local(Held), HELD, SEPARATORS)
    assert reachable(grammar, "release") == {"2.0"}
    assert reachable(grammar, "urgency") == {"low"}  # "high" is before it
    assert reachable(grammar, "first") == LATER_ITEMS
    assert reachable(grammar, "changes") == LATER_ITEMS  # a chain in document order
    assert reachable(grammar, "words") == {"the", "build", "to", "watch", "file"}
    # verification holds the same values to the same rule
    good = Held(release="2.0", urgency="low", first="Update the watch file.",
                changes=sorted(LATER_ITEMS), words=["watch"])
    assert check_grounding(grounded_values(good, Held), HELD).ok
    early = Held(release="2.0", urgency="high", first="An item before the release line.",
                 changes=["An item before the release line."], words=["urgency"])
    check = check_grounding(grounded_values(early, Held), HELD)
    assert {p for p, _, _ in check.misordered} == {"urgency", "first", "changes[0]"}
    assert [p for p, _ in check.unfound] == ["urgency", "first", "changes[0]", "words[0]"]


def test_a_list_held_after_a_field_keeps_its_bounds_and_its_chain() -> None:
    class Bounded(BaseModel):
        release: Annotated[str, Grounded(whole_tokens=True, line=r"^Release")] = Field(
            pattern=r"^[0-9.]+$")
        changes: list[Annotated[str, Grounded(whole_items=True, after="release")]] = Field(
            min_length=1)

    grammar = substring_grammar(local(Bounded), HELD, SEPARATORS)
    assert grammar is not None and reachable(grammar, "changes") == LATER_ITEMS
    row = next(r for r in grammar.splitlines() if '"\\"changes\\""' in r)
    value = row.split('": " ', 1)[1].split()[0]
    body = dict(r.split(": ", 1) for r in grammar.splitlines() if ": " in r)[value]
    assert body.startswith('"[" ') and '"[" "]"' not in body  # minItems 1: never empty
    # no item after the bound and one required: no value at all
    with pytest.raises(NoGroundedValueError):
        substring_grammar(local(Bounded), "  * An item.\nRelease 2.0\n", SEPARATORS)


# ----------------------------------------------------------------------------- a vendor


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    await close_models()


async def test_a_vendor_model_is_told_when_a_value_comes_before_its_field() -> None:
    swapped = {"package": "bookworm", "version": "0.8-10+deb12u1", "distribution": "avahi"}
    good = {"package": "avahi", "version": "0.8-10+deb12u1", "distribution": "bookworm"}
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=orjson.dumps(swapped).decode()),
                 FakeReply(text=orjson.dumps(good).decode()))
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        async with aclosing(ReActAgent("x", model).stream(ENTRY, Header)) as stream:
            events = [e async for e in stream]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.output == Header(**good)
    [retry] = [e for e in events if isinstance(e, OutputRetry)]
    assert "is not after the value of 'package'" in retry.message
    assert "is not after the value of 'package'" in orjson.dumps(fake.bodies[1]).decode()
    assert AFTER_KEY not in orjson.dumps(fake.bodies[0]).decode()
