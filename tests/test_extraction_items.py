"""agentflow.grounding.items: the one definition of a list item that a
``Grounded(whole_items=True)`` value must be, the check that uses it, and the
grammar that lists the items (in document order, each at most once, for a
list of them)."""

from __future__ import annotations

import json
import re
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agentflow.grounding import (
    GROUNDED_KEY,
    Grounded,
    check_grounding,
    grounded_values,
    locate,
)
from agentflow.grounding.items import item_at, item_spans, items
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.schema import OutputSpec

ENTRY = ("quux (1.0-1) unstable; urgency=medium\n\n"
         "  [ Jane Q. Hacker ]\n"
         "  * Fix the build with GCC 14.   \n"
         "    Thanks to Zoë \"Z\" Example.\n"
         "    + Also on arm64.\n"
         "  - d/control: Bump Standards-Version.\r\n"
         "  12) Numbered item\n\n"
         "      with a second paragraph.\n"
         "  * Fix the build with GCC 14.\n"
         "  -- not a marker\n"
         "**bold** text\n\n"
         " -- Jane Q. Hacker <jqh@example.net>  Mon, 05 Feb 2024 18:02:11 +0000")
FIRST = "Fix the build with GCC 14.   \n    Thanks to Zoë \"Z\" Example.\n    + Also on arm64."
ITEM = Grounded(whole_items=True)
SEPARATORS = {"key_separator": ": ", "item_separator": ", "}


def test_an_item_is_its_marker_line_with_the_deeper_lines_after_it() -> None:
    assert items(ENTRY) == [
        FIRST, "Also on arm64.", "d/control: Bump Standards-Version.",
        "Numbered item\n\n      with a second paragraph.", "Fix the build with GCC 14."]
    assert items("") == [] and items("no list\n  here\n") == [] and items("*no space") == []
    assert items("• one\n· two\n‣ three") == ["one", "two", "three"]
    assert items("\t1. three\n\t\tdeeper\n        as deep as the tab") == [
        "three\n\t\tdeeper"]  # a tab is 8 columns: the last line is not deeper
    assert items("- a\n  - b\n    c\n- d") == ["a\n  - b\n    c", "b\n    c", "d"]
    assert items("* trailing blank lines\n\n\n") == ["trailing blank lines"]


@given(st.text(alphabet=st.sampled_from("ab *-+1.)\t\n\r é"), max_size=60))
def test_items_begin_after_a_marker_and_end_on_text(text: str) -> None:
    for start, end in item_spans(text):
        assert 0 <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        line_start = text.rfind("\n", 0, start) + 1
        assert text[line_start:start].strip()[:1] in {"*", "-", "+", "1"}  # a marker before


def test_whole_item_values_are_found_and_other_spans_refused_naming_the_item() -> None:
    class Entry(BaseModel):
        changes: list[Annotated[str, ITEM]]

    good = Entry(changes=[FIRST, "Numbered item\n\n      with a second paragraph.",
                          "Fix the build with GCC 14."])
    check = check_grounding(grounded_values(good, Entry), ENTRY)
    assert check.ok
    # the repeated item text: the later item, by the occurrence rule
    assert ENTRY.index("Fix the build with GCC 14.\n  --") == check.spans["changes[2]"][0][0]
    # whitespace normalised as for any grounded value, still one whole item
    assert locate("Fix the build with GCC 14. Thanks to Zoë \"Z\" Example. + Also on arm64.",
                  ENTRY, whole_items=True) is not None
    cut = Entry(changes=["Thanks to Zoë \"Z\" Example.", "Numbered item", "Jane Q. Hacker"])
    check = check_grounding(grounded_values(cut, Entry), ENTRY)
    assert [p for p, _ in check.unfound] == ["changes[0]", "changes[1]", "changes[2]"]
    assert check.cut_items[0] == ("changes[0]", "Thanks to Zoë \"Z\" Example.", FIRST)
    assert check.cut_items[2] == ("changes[2]", "Jane Q. Hacker", "")
    message = check.message()
    assert "'Numbered item' is not one whole item of a list in the document (the item is " \
           "'Numbered item\\n\\n      with a second paragraph.')" in message
    assert "'Jane Q. Hacker' is not one whole item of a list in the document (it is in no " \
           "list item)" in message
    assert item_at(ENTRY, 0, 4) is None


def test_the_mark_reaches_the_local_dialect_and_a_json_schema_output() -> None:
    class Entry(BaseModel):
        changes: list[Annotated[str, ITEM]]

    schema = dict(OutputSpec.of(Entry).schema_for("local").schema)
    assert schema["properties"]["changes"]["items"][GROUNDED_KEY] == "whole_items"
    assert ITEM.schema_mark == "whole_items"
    assert Grounded(whole_items=True, whole_lines=True).schema_mark == "whole_items"


def _rules(grammar: str | None) -> dict[str, str]:
    assert grammar is not None
    return dict(x.split(": ", 1) for x in grammar.splitlines()[1:])


def test_a_whole_item_string_lists_the_items_its_pattern_allows() -> None:
    class One(BaseModel):
        first: Annotated[str, ITEM, Field(pattern=r"^[A-Z]")]

    rules = _rules(substring_grammar(dict(OutputSpec.of(One).schema_for("local").schema),
                                     ENTRY, SEPARATORS))
    listed = rules["GROUNDED_0"]
    assert listed.startswith('"\\"" (') and listed.endswith(') "\\""')
    values = [json.loads('"' + json.loads(v) + '"') for v in listed[6:-6].split(" | ")]
    assert values == [FIRST, "Also on arm64.", "Numbered item\n\n      with a second paragraph.",
                      "Fix the build with GCC 14."]  # "d/control" fails the pattern; no repeat


_ALT = re.compile(r'^(?P<lit>"(?:[^"\\]|\\.)*")(?: ", " (?P<rest>\S+))?$')


def _chain_lists(rules: dict[str, str], start: str, limit: int = 6) -> set[tuple[str, ...]]:
    """Every list the chain rules spell from ``start`` (a small enumerator of
    alternatives ``rule``, ``"item"`` and ``"item" ", " rule``)."""
    def spell(rule: str, depth: int) -> list[list[str]]:
        out: list[list[str]] = []
        for alt in rules[rule].split(" | "):
            if depth > limit:
                continue
            if alt in rules:
                out += spell(alt, depth + 1)
                continue
            match = _ALT.match(alt)
            assert match is not None, alt
            head = json.loads(json.loads(match["lit"]))
            rest = match["rest"]
            out += [[head, *more] for more in spell(rest, depth + 1)] if rest else [[head]]
        return out

    return {tuple(x) for x in spell(start, 0)}


def test_a_list_of_whole_items_is_in_document_order_each_item_at_most_once() -> None:
    class Entry(BaseModel):
        changes: list[Annotated[str, ITEM]] = Field(max_length=2)

    source = "x\n  * A.\n  * B.\n  * C.\n  * A.\n"
    rules = _rules(substring_grammar(dict(OutputSpec.of(Entry).schema_for("local").schema),
                                     source, SEPARATORS))
    top = next(body for body in rules.values() if body.startswith('"[" '))
    assert top.endswith(' | "[" "]"')  # no minItems: the empty list too
    lists = _chain_lists(rules, top.split(" ")[1])
    assert ("A.", "A.") in lists  # the document holds "A." twice: both may be taken
    assert ("B.", "A.") in lists and ("A.", "C.") in lists and ("C.",) in lists
    assert ("B.", "B.") not in lists and ("C.", "B.") not in lists  # never back, never twice
    assert all(len(x) <= 2 for x in lists)  # maxItems kept
    assert len(lists) == 3 + 6  # each distinct item alone, each ordered pair of places


def test_a_list_that_must_hold_items_or_has_none_to_take() -> None:
    class Some(BaseModel):
        changes: list[Annotated[str, ITEM]] = Field(min_length=1)

    schema = dict(OutputSpec.of(Some).schema_for("local").schema)
    top = next(b for b in _rules(substring_grammar(schema, "x\n  * A.\n", SEPARATORS)).values()
               if b.startswith('"[" '))
    assert not top.endswith('"[" "]"')  # minItems 1: never empty

    class Empty(BaseModel):
        changes: list[Annotated[str, ITEM]]
        name: Annotated[str, Grounded()]

    rules = _rules(substring_grammar(dict(OutputSpec.of(Empty).schema_for("local").schema),
                                     "no list here", SEPARATORS))
    assert '"[" "]"' in rules.values()  # nothing to take: only the empty list

    class Required(BaseModel):
        first: Annotated[str, ITEM]

    with pytest.raises(NoGroundedValueError) as caught:
        substring_grammar(dict(OutputSpec.of(Required).schema_for("local").schema),
                          "no list here", SEPARATORS)
    assert caught.value.fields == ["first"]


def test_item_spans_is_linear_in_the_text() -> None:
    """A megabyte of one-line items: every item read (each copied the rest
    of the lines: minutes); the time is benchmarks/bench_linear.py's."""
    assert len(item_spans("- lime\n" * 140_000)) == 140_000
