"""``Grounded(longest=True)``: a grounded value that is never a proper part of
a longer span its field's rules and pattern also allow, in the plan check,
in verification (``agentflow.grounding.locate``), in the grammar, in JSON
Schema outputs (``"x-grounded-longest"``) and against a vendor fake."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any

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
from agentflow.grounding.longest import longer_span, maximal
from agentflow.grounding.marker import LONGEST_KEY
from agentflow.output.grammar import substring_grammar
from agentflow.output.json_schema import json_schema_output
from agentflow.output.schema import OutputSpec
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

TRAILER = r"^ -- "
NAME = r"^[^\s<>-][^<>\n]* <[^<>\s]+>$"
SEPARATORS = {"key_separator": ": ", "item_separator": ", "}
ENTRY = ("binutils (2.40-2) unstable; urgency=medium\n\n"
         "  * Thanks to Klose <doko@debian.org> for the review.\n\n"
         " -- Matthias Klose <doko@debian.org>  Mon, 05 Feb 2024 18:02:11 +0000")
WHOLE = "Matthias Klose <doko@debian.org>"


class Signed(BaseModel):
    maintainer: Annotated[str, Grounded(whole_tokens=True, line=TRAILER, longest=True)] = Field(
        pattern=NAME)


def local(tp: object) -> dict[str, Any]:
    return dict(OutputSpec.of(tp).schema_for("local").schema)


def listed(grammar: str | None) -> list[list[str]]:
    assert grammar is not None
    out = []
    for row in grammar.splitlines():
        name, _, body = row.partition(": ")
        if name.startswith("GROUNDED_") and body.startswith('"\\"" ('):
            out.append([json.loads('"' + json.loads(v) + '"') for v in body[6:-6].split(" | ")])
    return out


# ----------------------------------------------------------------------------- declaring


def test_longest_needs_a_pattern_on_the_field() -> None:
    class Bare(BaseModel):
        name: Annotated[str, Grounded(longest=True)]

    with pytest.raises(SchemaError) as raised:
        grounding_plan(Bare)
    assert raised.value.path == "Bare.name" and "needs a pattern" in str(raised.value)

    class Items(BaseModel):  # a pattern on the items, by StringConstraints
        names: list[Annotated[str, StringConstraints(pattern=NAME), Grounded(longest=True)]]

    assert grounding_plan(Signed) is True and grounding_plan(Items) is True


def test_longest_needs_a_pattern_anchored_at_both_ends_that_python_reads() -> None:
    for pattern, why in ((r"\d+", "anchored at both ends"), (r"^\d+", "anchored at both ends"),
                         (r"\d+$", "anchored at both ends"), (r"x*", "anchored at both ends"),
                         (r"^\d+\$", "anchored at both ends"), (r"^\p{L}+$", "re module")):
        class Loose(BaseModel):
            amount: Annotated[str, Grounded(longest=True)] = Field(pattern=pattern)

        with pytest.raises(SchemaError, match=why) as raised:
            grounding_plan(Loose)
        assert raised.value.path == "Loose.amount"

    class Whole(BaseModel):
        amount: Annotated[str, Grounded(longest=True)] = Field(pattern=r"^\d+(\.\d+)?$")

    assert grounding_plan(Whole) is True


def test_a_marker_on_a_list_takes_its_items_pattern() -> None:
    Name = Annotated[str, StringConstraints(pattern=r"^[A-Z]\w+( [A-Z]\w+)*$")]

    class Names(BaseModel):
        names: Annotated[list[Name], Grounded(longest=True)]

    assert grounding_plan(Names) is True
    check = check_grounding(grounded_values(Names(names=["Lovelace"]), Names), "Ada Lovelace")
    assert check.shortened == [("names[0]", "Lovelace", "Ada Lovelace")]


def test_a_json_schema_output_is_held_to_the_same_longest_rules() -> None:
    for prop, why in (({"type": "string", "x-grounded": True, LONGEST_KEY: True},
                       "needs a pattern"),
                      ({"type": "string", "x-grounded": True, LONGEST_KEY: True,
                        "pattern": "[0-9]+"}, "anchored at both ends")):
        Out = json_schema_output({"type": "object", "required": ["a"], "properties": {"a": prop}},
                                 name="Out")
        with pytest.raises(SchemaError, match=why) as raised:
            grounding_plan(Out)
        assert raised.value.path == "Out.a" and LONGEST_KEY in str(raised.value)


def test_the_longest_rule_reaches_the_local_dialect_only() -> None:
    assert local(Signed)["properties"]["maintainer"][LONGEST_KEY] is True
    for dialect in ("plain", "openai_strict", "gemini"):
        assert LONGEST_KEY not in json.dumps(OutputSpec.of(Signed).schema_for(dialect).schema)


# ----------------------------------------------------------------------------- the spans


def test_longer_span_finds_the_longest_allowed_span_around_a_value() -> None:
    start = ENTRY.index("Klose <doko@debian.org>  Mon")
    span = (start, start + len("Klose <doko@debian.org>"))
    whole = longer_span(ENTRY, span, NAME, whole_tokens=True, line=TRAILER)
    assert whole is not None and ENTRY[whole[0]:whole[1]] == WHOLE  # never "-- Matthias ..."
    full = (ENTRY.index(WHOLE), ENTRY.index(WHOLE) + len(WHOLE))
    assert longer_span(ENTRY, full, NAME, whole_tokens=True, line=TRAILER) is None
    # a line the expression does not match, or a pattern Python cannot read: no longer span
    inner = ENTRY.index("Klose <doko@debian.org> for")
    assert longer_span(ENTRY, (inner, inner + 23), NAME, whole_tokens=True,
                       line=TRAILER) is None
    assert longer_span(ENTRY, span, "(", whole_tokens=True) is None
    # without whole tokens a longer span may begin inside a word, as the rule allows there
    assert longer_span("ab-1 2", (5, 6), r"^\d", whole_tokens=False) == (3, 6)
    assert longer_span("ab-1 2", (5, 6), r"^\d", whole_tokens=True) is None


def test_maximal_keeps_the_places_no_other_place_contains() -> None:
    places = [("a b", 0, 3), ("b", 2, 3), ("b c", 2, 5), ("c", 4, 5), ("d", 7, 8), ("a", 0, 1)]
    assert maximal(places) == [("a b", 0, 3), ("b c", 2, 5), ("d", 7, 8)]
    assert maximal([("x", 1, 2), ("x", 1, 2)]) == [("x", 1, 2), ("x", 1, 2)]  # equal: kept


def _brute_longer(text: str, span: tuple[int, int], pattern: str, whole_tokens: bool,
                  line: str | None) -> tuple[int, int] | None:
    """``longer_span`` by its definition: every pair of boundaries of the whole
    text's split (chunks or pieces) within the region, the longest allowed
    (the leftmost among equals)."""
    import re

    from agentflow.grounding.tokens import piece_spans

    start, end = span
    if line is not None:
        lo = text.rfind("\n", 0, start) + 1
        hi = text.find("\n", start)
        hi = len(text) if hi < 0 else hi
        if end > hi or re.search(line, text[lo:hi]) is None:
            return None
    else:
        lo, hi = max(0, end - 200), min(len(text), start + 200)
    ends = ([e for _, e in piece_spans(text)] if whole_tokens else
            [m.end() for m in re.finditer(r"\w+|\s|[^\w\s]", text)])
    cuts = sorted({lo, hi, *(c for c in ends if lo < c < hi)})
    best = None
    for a in cuts:
        for b in cuts:
            if a <= start and b >= end and (a, b) != span and b - a <= 200 and b > a \
                    and not text[a].isspace() and not text[b - 1].isspace() \
                    and re.search(pattern, text[a:b]) and (
                        best is None or b - a > best[1] - best[0]):
                best = (a, b)
    return best


def test_longer_span_and_maximal_test_agree_with_the_definition() -> None:
    import random

    from agentflow.grounding import longest

    rng = random.Random(7)
    words = ["Ada", "Lovelace", "Dr", "--", "<a@b.c>", "x.", "Bob", "\n", " ", " ", ", "]
    for _ in range(400):
        text = "".join(rng.choice(words) + rng.choice(["", " "]) for _ in range(rng.randint(1, 30)))
        pattern = rng.choice([r"^[A-Z][a-z]+( [A-Z][a-z]+)*$", r"^[^\s<>-][^<>\n]* <[^<>\s]+>$",
                              r"^\w+$"])
        line = rng.choice([None, r"^--", r"[A-Z]"])
        for whole_tokens in (True, False):
            test = longest.maximal_test(text, pattern, whole_tokens=whole_tokens, line=line)
            for _ in range(4):
                start = rng.randint(0, len(text) - 1)
                end = rng.randint(start + 1, min(len(text), start + 30))
                expected = _brute_longer(text, (start, end), pattern, whole_tokens, line)
                got = longer_span(text, (start, end), pattern, whole_tokens=whole_tokens,
                                  line=line)
                assert got == expected, (text, start, end, pattern, line, whole_tokens)
                assert test((start, end)) is (expected is None)


def test_maximal_is_the_definition_on_any_places() -> None:
    import random

    rng = random.Random(3)
    for _ in range(300):
        places = [("v", s, s + rng.randint(1, 6)) for s in
                  (rng.randint(0, 20) for _ in range(rng.randint(0, 25)))]
        expected = [p for p in places if not any(
            a <= p[1] and p[2] <= b and (a, b) != (p[1], p[2]) for _, a, b in places)]
        assert maximal(places) == expected


def test_a_value_repeated_thousands_of_times_takes_its_whole_occurrences() -> None:
    """Verification tests places lazily (``maximal_test``): the value is part
    of a longer name on every line but the last few, which it takes; and the
    field after it is placed after that occurrence."""
    class Pair(BaseModel):
        name: Annotated[str, Grounded(whole_tokens=True, longest=True)] = Field(pattern=NAME)
        note: Annotated[str, Grounded(whole_tokens=True, after="name")]

    lines = [f"Dr {WHOLE} #{i}" for i in range(3000)] + [f"-- {WHOLE} #x", "end"]
    text = "\n".join(lines)
    check = check_grounding(grounded_values(Pair(name=WHOLE, note="#x"), Pair), text)
    at = text.index(f"-- {WHOLE}") + 3
    assert check.ok and check.spans == {"name": [(at, at + len(WHOLE))],
                                        "note": [(at + len(WHOLE) + 1, at + len(WHOLE) + 3)]}
    cut = check_grounding(grounded_values(Pair(name=WHOLE, note="#1"), Pair), text)
    assert [p for p, _, _ in cut.misordered] == ["note"]
    only_part = text.replace(f"-- {WHOLE} #x", "")
    refused = check_grounding(grounded_values(Pair(name=WHOLE, note="end"), Pair), only_part)
    assert refused.shortened == [("name", WHOLE, f"Dr {WHOLE}")]


# ----------------------------------------------------------------------------- verification


def test_verification_refuses_a_value_cut_from_a_longer_whole_value() -> None:
    cut = Signed(maintainer="Klose <doko@debian.org>")
    check = check_grounding(grounded_values(cut, Signed), ENTRY)
    assert not check.ok and check.shortened == [("maintainer", "Klose <doko@debian.org>", WHOLE)]
    assert (f"- maintainer: 'Klose <doko@debian.org>' is only part of {WHOLE!r} in the "
            "document, which is a whole value of this field") in check.message()
    check = check_grounding(grounded_values(Signed(maintainer=WHOLE), Signed), ENTRY)
    assert check.ok and check.spans == {"maintainer": [(ENTRY.index(WHOLE),
                                                        ENTRY.index(WHOLE) + len(WHOLE))]}


def test_a_value_that_is_whole_somewhere_takes_that_occurrence() -> None:
    class Name(BaseModel):
        name: Annotated[str, Grounded(whole_tokens=True, longest=True)] = Field(
            pattern=r"^[A-Z][a-z]+( [A-Z][a-z]+)*$")

    text = "Ada Lovelace met Lovelace, then Babbage"  # the second "Lovelace" stands alone
    check = check_grounding(grounded_values(Name(name="Lovelace"), Name), text)
    assert check.ok and check.spans == {"name": [(17, 25)]}


def test_a_longer_value_written_with_decomposed_accents_still_counts() -> None:
    class Signer(BaseModel):
        name: Annotated[str, Grounded(whole_tokens=True, longest=True)] = Field(
            pattern=r"^\w+( \w+)*$")

    text = "Signed: Rene\u0301 Dupont, Paris"  # a PDF text layer's e + combining acute
    whole = check_grounding(grounded_values(Signer(name="René Dupont"), Signer), text)
    assert whole.ok and whole.spans == {"name": [(8, 20)]}
    cut = check_grounding(grounded_values(Signer(name="Dupont"), Signer), text)
    assert cut.shortened == [("name", "Dupont", "Rene\u0301 Dupont")]


def test_a_json_schema_output_reads_the_longest_rule_and_its_pattern() -> None:
    Out = json_schema_output({
        "type": "object", "required": ["maintainer"],
        "properties": {"maintainer": {"type": "string", "x-grounded": "whole_tokens",
                                      "x-grounded-line": TRAILER, LONGEST_KEY: True,
                                      "pattern": NAME}}}, name="Out")
    value = Out.model_validate({"maintainer": "Klose <doko@debian.org>"})
    check = check_grounding(grounded_values(value, Out), ENTRY)
    assert [p for p, _, _ in check.shortened] == ["maintainer"]


# ----------------------------------------------------------------------------- grammar


def test_the_grammar_offers_only_whole_values() -> None:
    assert listed(substring_grammar(local(Signed), ENTRY, SEPARATORS)) == [[WHOLE]]

    class Loose(BaseModel):
        maintainer: Annotated[str, Grounded(whole_tokens=True, line=TRAILER)] = Field(
            pattern=NAME)

    [values] = listed(substring_grammar(local(Loose), ENTRY, SEPARATORS))
    assert set(values) == {WHOLE, "Klose <doko@debian.org>"}


def test_longest_and_after_together_in_the_grammar() -> None:
    class Trailer(BaseModel):
        maintainer: Annotated[str, Grounded(whole_tokens=True, line=TRAILER,
                                            longest=True)] = Field(pattern=NAME)
        date: Annotated[str, Grounded(whole_tokens=True, line=TRAILER,
                                      after="maintainer")] = Field(pattern=r"^[A-Z][a-z]{2}, ")

    values = listed(substring_grammar(local(Trailer), ENTRY, SEPARATORS))
    assert [WHOLE] in values
    assert all("Klose <doko@debian.org>" not in v for v in values)


# ----------------------------------------------------------------------------- a vendor


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    await close_models()


async def test_a_vendor_model_is_told_to_copy_the_whole_value() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=orjson.dumps({"maintainer": "Klose <doko@debian.org>"}).decode()),
                 FakeReply(text=orjson.dumps({"maintainer": WHOLE}).decode()))
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        async with aclosing(ReActAgent("x", model).stream(ENTRY, Signed)) as stream:
            events = [e async for e in stream]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.output == Signed(maintainer=WHOLE)
    [retry] = [e for e in events if isinstance(e, OutputRetry)]
    assert f"is only part of {WHOLE!r}" in retry.message
    assert LONGEST_KEY not in orjson.dumps(fake.bodies[0]).decode()
